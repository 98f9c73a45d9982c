"""Which addresses a channel may reach: the SSRF rules of the webhook, GitHub and OpenClaw channels.

A channel that posts to a configured URL must not be aimed at the deployment's
own network: private, loopback, link-local, reserved and other non-global
addresses are refused — also an IPv4 host wrapped in IPv6 (mapped, 6to4,
NAT64). Literal addresses are judged when ``channels.yaml`` loads; what a
hostname resolves to is judged at each send by the channel itself. The local
stack (``SIGNOFF_ALLOW_PRIVATE_WEBHOOKS``) or a channel's ``allowPrivate``
lifts the rule. ``checked_address`` is that send-time judgement for a channel
that talks to one configured API host (GitHub, OpenClaw): https only, every
address the host resolves to checked, and the one to connect to handed back so
a second DNS answer cannot swap in another between the check and the connect.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from signoff.errors import SendFailed
from signoff.settings import Deployment

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

__all__ = [
    "ALLOW_PRIVATE_VARIABLE",
    "address_problem",
    "checked_address",
    "private_webhooks_allowed",
    "public_url_problem",
]

ALLOW_PRIVATE_VARIABLE: Final = "SIGNOFF_ALLOW_PRIVATE_WEBHOOKS"

_IP = ipaddress.IPv4Address | ipaddress.IPv6Address
# NAT64's well-known prefix: the low 32 bits are the IPv4 host actually reached.
_NAT64: Final = ipaddress.IPv6Network("64:ff9b::/96")


def private_webhooks_allowed(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the deployment allows webhooks to private addresses (the local stack does)."""
    return Deployment.from_env(environ).allow_private_webhooks


def address_problem(address: str) -> str | None:
    """Why a webhook may not target the IP ``address``, or None when it is public.

    Raises:
        ValueError: ``address`` is not an IP address.
    """
    ip = ipaddress.ip_address(address)
    # An IPv4 address wrapped in IPv6 (mapped, 6to4, NAT64) reaches that IPv4 host.
    embedded = _embedded_ipv4(ip)
    if embedded is not None and (problem := _ip_problem(embedded)):
        return problem
    return _ip_problem(ip)


def public_url_problem(url: str) -> str | None:
    """Why ``url`` is no public target, judged without DNS: scheme, literal IPs, ``localhost``."""
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".").lower()
    hint = f"set allowPrivate: true or {ALLOW_PRIVATE_VARIABLE}=true to allow it"
    if host == "localhost" or host.endswith(".localhost"):
        return f"{host} is a loopback name; {hint}"
    try:
        problem = address_problem(host)
    except ValueError:
        problem = None  # a hostname: what it resolves to is checked at send time
    if problem:
        return f"{problem}; {hint}"
    if parts.scheme != "https":
        # the body carries one-click approve and deny links
        return f"a public webhook must use https; {hint}"
    return None


def checked_address(
    channel: str,
    *,
    scheme: str,
    host: str,
    port: int | None,
    resolve: Callable[[str, int], Sequence[str]],
    setting: str,
    kind: str,
) -> str | None:
    """The address a channel aimed at one public API host connects to (None: the host itself).

    ``host`` may be a literal address (None: connect to it as it is, once judged).
    ``setting`` names the URL's key in ``channels.yaml`` (``apiUrl``) and ``kind``
    what it points at (``API URLs``), for the operator reading the failure.

    Raises:
        SendFailed: the host does not resolve (retryable), or the URL is not https
            or reaches a non-public address (permanent: the settings must change).
    """
    if scheme != "https":
        raise SendFailed(
            channel,
            f"refused: {setting} must use https (the token travels with every request)",
            retryable=False,
        )
    literal = _is_address(host)
    if literal:
        addresses: Sequence[str] = [host]
    else:
        try:
            addresses = list(resolve(host, port or 443))
        except OSError as exc:
            raise SendFailed(channel, f"{host} does not resolve ({exc})", retryable=True) from exc
        if not addresses:
            raise SendFailed(channel, f"{host} resolves to no address", retryable=True)
    for address in addresses:
        problem = address_problem(address)
        if problem:
            raise SendFailed(
                channel,
                f"refused: {host} resolves to {problem}; private {kind} need allowPrivate: true",
                retryable=False,
            )
    return None if literal else addresses[0]


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _embedded_ipv4(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> ipaddress.IPv4Address | None:
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _ip_problem(ip: _IP) -> str | None:
    checks = (
        ("a loopback", ip.is_loopback),
        ("a link-local", ip.is_link_local),
        ("an unspecified", ip.is_unspecified),
        ("a multicast", ip.is_multicast),
        ("a private", ip.is_private),
        ("a reserved", ip.is_reserved),
        ("a non-public", not ip.is_global),
    )
    for label, applies in checks:
        if applies:
            return f"{ip} is {label} address"
    return None
