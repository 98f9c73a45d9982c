"""Session ids derived from a message's own key: an agent's ``sessionKey``.

An agent with ``sessionKey: customerId`` continues one session per customer: a
message whose body has ``"customerId": "C-42"`` and no ``sessionId`` goes to the
session derived from (tenant, agent, ``customerId``, ``"C-42"``).

The id is ``<key name>-<40 hex digits>``, the hex an HMAC-SHA256 under a
deployment secret over the canonical JSON array
``["signoff-session/v1", tenant, agent, key name, value]``:

- every part counts as it is — no folding of non-ASCII or punctuation, so
  ``"张三"`` and ``"李四"`` are two sessions, and the tenant and agent are part
  of it, so one customer id in two tenants is two sessions;
- a JSON array of strings is one encoding per tuple (each part quoted and
  escaped), so no two tuples give the same input;
- keyed, because the id is no secret — it is logged as a correlation key,
  returned to callers and put in status URLs — while the value usually is
  customer data (ids, e-mail addresses, phone numbers). A plain hash of a
  low-entropy value is reversed by trying the candidates; an HMAC cannot be
  computed, nor reversed, without the deployment's secret.

The secret must stay the same: a new one starts a new session for every key value.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from typing import TYPE_CHECKING, Any, Final

from signoff.errors import SecretMissing

if TYPE_CHECKING:
    from signoff.secrets.base import SecretSource

__all__ = ["SESSION_KEY_SECRET", "SessionKeys", "session_keys_from"]

# The secret session ids are derived with (template.yaml's SessionKeySecret).
SESSION_KEY_SECRET: Final = "session-key"  # noqa: S105 - a name, not a value

_VERSION: Final = "signoff-session/v1"
_MIN_SECRET_BYTES: Final = 16
# 160 bits: no two keys of a deployment will meet, and the id stays short.
_DIGEST_HEX: Final = 40
# The key name only labels the id for people reading it; the digest is what counts.
_LABEL: Final = re.compile(r"[^A-Za-z0-9_.:-]")
_LABEL_CHARS: Final = 40


class SessionKeys:
    """Derives the session id of (tenant, agent, key name, value) under one secret."""

    def __init__(self, secret: bytes) -> None:
        """Derive with ``secret``.

        Raises:
            SecretMissing: the secret is shorter than 16 bytes.
        """
        if len(secret) < _MIN_SECRET_BYTES:
            raise SecretMissing(SESSION_KEY_SECRET, f"shorter than {_MIN_SECRET_BYTES} bytes")
        self._secret = secret

    def session_id(self, *, tenant: str, agent: str, key: str, value: Any) -> str:
        """``<key>-<hex>``: the same inputs give the same id, any difference another.

        A value that is not a string counts as its canonical JSON (``42`` as ``"42"``).
        """
        text = value if isinstance(value, str) else _canonical(value)
        message = _canonical([_VERSION, tenant, agent, key, text]).encode("utf-8")
        digest = hmac.new(self._secret, message, hashlib.sha256).hexdigest()[:_DIGEST_HEX]
        return f"{_LABEL.sub('_', key)[:_LABEL_CHARS]}-{digest}"


def _canonical(value: Any) -> str:
    # ensure_ascii=False: characters stay themselves (escaping would be injective
    # too; this keeps the bytes hashed readable when debugging a derivation).
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def session_keys_from(secrets: SecretSource, name: str = SESSION_KEY_SECRET) -> SessionKeys:
    """The deployment's session keys, from the secret ``name`` (read once: it never changes).

    Raises:
        SecretMissing: the secret is absent or shorter than 16 bytes.
        StoreUnavailable: the secret source failed transiently.
    """
    return SessionKeys(secrets.get(name).encode("utf-8"))
