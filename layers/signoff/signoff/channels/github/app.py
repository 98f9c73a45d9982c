"""A GitHub App's installation token for the GitHub channel, kept until shortly before it expires.

``channels.yaml``::

    ops-github: {type: github, repository: acme/payments, issue: 42,
                 app: {appId: "123456", installationId: 7890,
                       privateKey: {secret: github-app-key}}}

The App authenticates with a JWT (RS256, signed with its private key, valid
for at most ten minutes) and exchanges it for an installation token
(``POST /app/installations/{id}/access_tokens``), valid an hour. The exchange
is the channel's own request (the same API URL guard and error mapping); this
module signs the JWT and keeps the token. The private key is read from the
secret source at each exchange, so a rotated key is used from the next one.
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["InstallationTokens", "app_jwt", "expiry"]

# GitHub refuses a JWT whose lifetime exceeds ten minutes or whose iat is ahead of
# its clock: issued a minute back, expiring nine minutes on.
_ISSUED_BACK: Final = 60
_LIFETIME: Final = 540
# A token with less than this left is exchanged again, so no send starts with a
# token that expires on the way.
_REFRESH_BEFORE: Final = 300.0


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def app_jwt(app_id: str, private_key_pem: str, now: float) -> str:
    """The App's JWT (RS256) at ``now`` (epoch seconds).

    Raises:
        ValueError: the key is not an RSA private key in PEM form.
    """
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    try:
        key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)
    except (ValueError, TypeError) as exc:
        # the library's message may quote the key's first bytes: keep only its kind
        raise ValueError(f"not a PEM private key ({type(exc).__name__})") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("not an RSA private key (GitHub Apps sign with RS256)")
    header = _b64(json.dumps({"alg": "RS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"iat": int(now) - _ISSUED_BACK, "exp": int(now) + _LIFETIME, "iss": app_id}
    payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
    signed = f"{header}.{payload}".encode("ascii")
    signature = key.sign(signed, padding.PKCS1v15(), hashes.SHA256())
    return f"{header}.{payload}.{_b64(signature)}"


def expiry(expires_at: object, now: float) -> float:
    """``expires_at`` of an exchange's answer as epoch seconds; an hour on if unreadable."""
    if isinstance(expires_at, str):
        try:
            return datetime.fromisoformat(expires_at.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return now + 3600.0


@dataclass(frozen=True, kw_only=True)
class _Held:
    token: str
    expires: float


class InstallationTokens:
    """The installation token one channel uses, shared by its concurrent sends."""

    def __init__(self) -> None:
        self._held: _Held | None = None
        # One exchange at a time: the notifier sends a batch's rows on threads.
        self._lock = threading.Lock()

    def get(self, now: float, exchange: Callable[[], tuple[str, float]]) -> str:
        """The held token, or a new one from ``exchange`` (token, expiry) when it runs out.

        Raises:
            Whatever ``exchange`` raises (a ``SendFailed``); nothing is held then.
        """
        with self._lock:
            held = self._held
            if held is None or held.expires - now < _REFRESH_BEFORE:
                token, expires = exchange()
                held = self._held = _Held(token=token, expires=expires)
            return held.token

    def forget(self) -> None:
        """Drop the held token (GitHub refused it: revoked, or the App was reinstalled)."""
        with self._lock:
            self._held = None
