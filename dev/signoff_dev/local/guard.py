"""What a web page cannot make the local stack do: the checks every request passes first.

The stack runs on the developer's machine, where a browser visits other sites.
It lets callers without an API key in (the ``default`` tenant), lists every
resume token at ``GET /_local/notifications`` and runs any agent as any tenant
at ``POST /_local/trigger``. A page could reach all of that two ways:

- **DNS rebinding.** The page's own name is re-pointed at ``127.0.0.1``; the
  browser then sends it requests *as the same origin*, reads the answers and
  may send any body or header. What it cannot change is ``Host``: the browser
  sends the page's name. So a request must name this stack on loopback —
  ``localhost``, ``*.localhost`` (browsers resolve these themselves, never
  through DNS), or a 127.0.0.0/8 or ``[::1]`` address — with the stack's port.
- **Cross-site requests.** Without asking first (a CORS preflight, which the
  stack never grants: it sends no ``Access-Control-*`` header), a page can
  send GET and POST with a form or ``text/plain`` body and no custom header.
  So: a state-changing request that a browser marks as coming from another
  origin (``Origin``, ``Sec-Fetch-Site``) is refused; its body must be JSON,
  which no page can send cross-site without a preflight; and ``/_local/*`` is
  refused to other origins even for GET.

Two kinds of route take forms. A card page's form (the link page's
``POST /a/{token}``, the approvals inbox's ``POST /inbox/items/{id}``) must show
that it came from the page itself: a same-origin ``Origin``, or — from a
browser that sent none — a same-origin ``Referer`` or ``Sec-Fetch-Site:
same-origin``; no marker at all is refused. Slack's interaction callback is a
form that Slack's servers post with no ``Origin``; it is authenticated by its
signature over the body (a page has no signing secret), and nothing ambient —
no cookie, no session — rides along, so only a browser's cross-site marker is
refused there. Lark posts JSON and is checked like any other route.

A body-less request with no content type (a webhook receiver posting a
notification's one-click ``approveUrl``) passes: it carries nothing a page
could smuggle in, and every browser marks its POSTs with ``Origin``, checked above.

Refusals are the API's ``{error, detail}`` (the link form's, its HTML error
page) and change nothing: they come before any route runs.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from signoff.errors import Forbidden, SignoffError, UnsupportedMediaType, UsageError
from signoff.web import PAGE_HEADERS, error_page, is_cross_site
from signoff_dev.local.gateway import HttpResponse

if TYPE_CHECKING:
    from collections.abc import Mapping

    from signoff_dev.local.gateway import HttpRequest
    from signoff_dev.local.router import RouteTable

__all__ = ["RequestGuard", "check_listen_address", "is_loopback_name"]

# Methods that change nothing (GET never mutates, DESIGN §5.6).
_SAFE: Final = frozenset({"GET", "HEAD", "OPTIONS"})
_JSON: Final = "application/json"
_LOCAL_ONLY: Final = "/_local/"
# (method, path template) of the link page's form.
# The card pages' forms: a link's, and an inbox item's (signoff.api.inbox).
_PAGE_FORMS: Final = frozenset({("POST", "/a/{token}"), ("POST", "/inbox/items/{id}")})
# Form posts a vendor's servers sign; the route checks the signature.
_SIGNED_FORMS: Final = frozenset({("POST", "/slack/interactions")})
# Characters no Host of ours contains; urlsplit would read "a@b" as user "a" at host "b".
_NOT_IN_HOST: Final = frozenset("@/\\?# \t")


def is_loopback_name(name: str) -> bool:
    """Whether ``name`` (a host, without port or brackets) is this machine's, whatever DNS says."""
    lowered = name.lower()
    if lowered == "localhost" or lowered.endswith(".localhost"):
        return True  # RFC 6761: resolved to loopback by the browser itself
    try:
        return ipaddress.ip_address(lowered).is_loopback
    except ValueError:
        return False


def check_listen_address(host: str) -> None:
    """Refuse to listen anywhere but loopback.

    There is no opt-in: the stack has no authentication (callers without a key
    are the ``default`` tenant) and lists every resume token, so on a network
    interface anyone on that network could decide every pending item. To reach
    it from elsewhere, forward a port (``ssh -L 3000:127.0.0.1:3000``). An IPv6
    address is refused as well: the server listens on IPv4.

    Raises:
        UsageError: ``host`` is not ``localhost`` or a 127.0.0.0/8 address.
    """
    try:
        loopback = host == "localhost" or ipaddress.IPv4Address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise UsageError(
            f"the local stack listens on loopback only (127.0.0.1 or localhost), not {host!r}: "
            "it has no authentication and shows every resume token"
        )


@dataclass(frozen=True)
class RequestGuard:
    """The gateway's first step: a refusal for what a page could have sent, else None."""

    port: int  # the port the stack listens on
    routes: RouteTable  # every route the stack serves, its local-only ones included

    def __call__(self, request: HttpRequest) -> HttpResponse | None:
        headers = _joined(request)
        host = headers.get("host", "")
        if not self._is_own_host(request):
            # First, for every route: a rebound page is same-origin to the browser,
            # so nothing below would stop it.
            return _refusal(
                Forbidden(
                    f"this local stack answers only to localhost or a loopback address "
                    f"with port {self.port} as Host"
                )
            )
        cross_site = is_cross_site(headers, host)
        if cross_site and request.raw_path.startswith(_LOCAL_ONLY):
            # GET too: the lists hold resume tokens and links.
            return _refusal(Forbidden("the local-only routes refuse requests from other sites"))
        if request.method.upper() in _SAFE:
            return None
        found = self.routes.match(request.method, request.raw_path)
        if found is None:
            return None  # no route runs: the gateway's own 404 / 405
        key = (request.method.upper(), found[0].path)
        if key in _PAGE_FORMS:
            return _form_refusal() if cross_site or not _from_its_page(headers, host) else None
        if cross_site:
            return _refusal(Forbidden("a request from another site may not change anything here"))
        if key in _SIGNED_FORMS:
            return None  # the route verifies the vendor's signature over the body
        media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media == _JSON or (not request.body and "content-type" not in headers):
            return None
        # A page can post a form or text/plain body to any site without a preflight.
        return _refusal(UnsupportedMediaType(media, [_JSON]))

    def _is_own_host(self, request: HttpRequest) -> bool:
        """Exactly one ``Host``, naming loopback, on this stack's port."""
        hosts = [value.strip() for name, value in request.headers if name.lower() == "host"]
        if len(hosts) != 1 or not hosts[0] or _NOT_IN_HOST & set(hosts[0]):
            return False
        try:
            parts = urlsplit(f"//{hosts[0]}")
            port = parts.port or 80  # a Host without a port is on HTTP's default
        except ValueError:  # a port that is not a number, or out of range
            return False
        return port == self.port and is_loopback_name(parts.hostname or "")


def _joined(request: HttpRequest) -> dict[str, str]:
    """Headers by lower-cased name, repeats joined with commas (as API Gateway joins them).

    A repeated ``Origin`` thus reads as no origin of ours, and is refused.
    """
    joined: dict[str, str] = {}
    for name, value in request.headers:
        lowered = name.lower()
        joined[lowered] = f"{joined[lowered]},{value}" if lowered in joined else value
    return joined


def _from_its_page(headers: Mapping[str, str], host: str) -> bool:
    """Whether a form post shows it came from this origin (cross-site markers already refused).

    An ``Origin`` that got here is this origin's. Without one (an older browser),
    ``Sec-Fetch-Site: same-origin`` or a ``Referer`` on this origin shows it; the
    link pages' ``Referrer-Policy: same-origin`` lets the browser send that Referer.
    """
    if "origin" in headers:
        return True
    if headers.get("sec-fetch-site", "").strip().lower() == "same-origin":
        return True
    referer = headers.get("referer", "")
    # is_cross_site compares an origin's scheme, host and port; a URL's path is ignored.
    return bool(referer) and not is_cross_site({"origin": referer}, host)


def _form_refusal() -> HttpResponse:
    """The link pages' own 403 page, as the route documents it (a person may be reading)."""
    page = error_page(403, "Refused", "This form can only be sent from its page.")
    return HttpResponse(403, list(PAGE_HEADERS.items()), page.encode())


def _refusal(error: SignoffError) -> HttpResponse:
    from signoff.api.errors import error_payload

    status, body = error_payload(error)
    return HttpResponse.json(status, body)
