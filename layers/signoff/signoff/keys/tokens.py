"""Resume tokens: the signed, expiring credential inside an emailed or posted link.

A token is four dot-separated parts::

    v1.<key_id>.<payload>.<signature>

``payload`` is the unpadded base64url of compact JSON with sorted keys::

    {"a": action, "c": channel, "e": expires_at, "h": args_hash, "p": pending_id,
     "r": recipient, "t": tenant}

``r`` and ``c`` are present together or not at all: a link made for one person
(each email recipient gets their own) names that address and the channel it was
mailed through, and a decision through it is that person's — the channel's
``approvers`` are checked against ``r``. A token without them (a webhook's link,
the answer link of a chat channel without approvers, tokens issued before
recipients existed) names nobody and is decided as ``link``; a chat channel that
lists approvers is therefore sent ``view`` tokens only.

and ``signature`` the unpadded base64url of HMAC-SHA256 under the key named by
``key_id`` over ``"v1." + key_id + "." + payload``. The key id is signed too, so a
token cannot be moved to another key; during a rotation every key in the signer's
``keys`` verifies, and a token of a key that was removed is forged.

Actions — one token per pending item, chosen by its kind:

- ``decide`` (approvals): the link's GET page renders one form whose two buttons
  POST ``decision=approve`` or ``decision=deny`` with the same token.
- ``answer`` (questions): the form POSTs the answer with the same token.
- ``approve`` / ``deny``: a token good for that one decision (a one-click button
  of a channel that cannot show a page).
- ``view``: a read-only link; its page shows the item without a form, and it
  permits no decision.

``ResumeToken.permits`` is that table. The token is not single-use by itself: the
pending item's state machine makes the first resolution win. ``h`` binds the token
to the arguments it was issued for, so the resolver can refuse a token whose item
was re-asked with different arguments.

Inbox tokens (``issue_inbox`` / ``verify_inbox``) open one approver's approvals
inbox (``GET /inbox?token=``): ``i1.<key_id>.<payload>.<signature>`` with the
payload ``{"e": expires_at, "k": "inbox", "t": tenant, "u": approver}``, signed
over ``"i1." + key_id + "." + payload``. The other version tag is signed too, and
each kind's payload keys are exact, so an inbox token never verifies as a resume
token nor a resume token as an inbox token, under the same keys.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from signoff.errors import SecretMissing, TokenExpired, TokenForged, UsageError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from signoff.secrets.base import SecretSource

__all__ = [
    "RESUME_SIGNING_SECRET",
    "Action",
    "Decision",
    "InboxGrant",
    "KeySet",
    "ResumeToken",
    "Signer",
    "args_hash",
    "read_key_set",
    "signer_from",
]

Action = Literal["decide", "approve", "deny", "answer", "view"]
Decision = Literal["approve", "deny", "answer"]

# The secret a deployment signs resume tokens with (see ``signer_from``).
RESUME_SIGNING_SECRET: Final = "resume-signing"  # noqa: S105 - a name, not a value

_VERSION: Final = "v1"
_INBOX_VERSION: Final = "i1"
_INBOX_KEYS: Final = frozenset({"e", "k", "t", "u"})
_ACTIONS: Final[frozenset[str]] = frozenset(get_args(Action))
_PERMITS: Final[dict[str, frozenset[str]]] = {
    "decide": frozenset({"approve", "deny"}),
    "approve": frozenset({"approve"}),
    "deny": frozenset({"deny"}),
    "answer": frozenset({"answer"}),
    "view": frozenset(),
}
# Key ids sit between dots in the token, so they must not contain one.
_KEY_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,32}")
_BASE64URL: Final = re.compile(r"[A-Za-z0-9_-]*")
# HMAC-SHA256 gains nothing from keys longer than its block; shorter than this is guessable.
_MIN_KEY_BYTES: Final = 16
# Far above any real token; bounds the work an attacker can make verify() do.
_MAX_TOKEN_CHARS: Final = 2048
_PAYLOAD_KEYS: Final = frozenset({"a", "e", "h", "p", "t"})
# A link made for one person carries both of these, or neither.
_RECIPIENT_KEYS: Final = frozenset({"c", "r"})
_SHA256_HEX: Final = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, kw_only=True)
class ResumeToken:
    """What a verified token grants: one action on one pending item of one tenant."""

    pending_id: str
    action: Action
    tenant: str
    args_hash: str
    expires_at: int
    key_id: str
    # The person the link was made for and the channel it went through (email), if any.
    recipient: str | None = None
    channel: str | None = None

    def permits(self, decision: Decision) -> bool:
        """Whether this token may make ``decision`` (``decide`` covers approve and deny)."""
        return decision in _PERMITS[self.action]


@dataclass(frozen=True, kw_only=True)
class InboxGrant:
    """What a verified inbox token grants: one approver's view of one tenant's inbox."""

    tenant: str
    approver: str  # an email address or a person's id: who decides through it
    expires_at: int
    key_id: str


def args_hash(args: Mapping[str, Any] | None) -> str:
    """The sha256 hex of the canonical JSON of a tool call's arguments (``None`` → ``null``).

    Canonical: sorted keys, compact separators, ASCII escapes, no NaN. Raises
    ``TypeError`` / ``ValueError`` for arguments that are not JSON.
    """
    text = json.dumps(args, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    if not _BASE64URL.fullmatch(text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class KeySet:
    """Signing keys by id: ``current`` signs, every listed key verifies."""

    keys: Mapping[str, bytes]
    current: str

    def __post_init__(self) -> None:
        """Refuse a key set no signer should hold.

        Raises:
            UsageError: no keys, ``current`` not among them, a key id with characters
                other than letters, digits, ``-`` and ``_``, or a key shorter than 16 bytes.
        """
        if self.current not in self.keys:
            raise UsageError(f"the current signing key {self.current!r} is not among the keys")
        for key_id, key in self.keys.items():
            if not _KEY_ID.fullmatch(key_id):
                raise UsageError(f"signing key id {key_id!r} must be 1-32 of [A-Za-z0-9_-]")
            if len(key) < _MIN_KEY_BYTES:
                # Names the id only: the key itself must never reach a message.
                raise UsageError(f"signing key {key_id!r} is shorter than {_MIN_KEY_BYTES} bytes")


class Signer:
    """Issues and verifies resume tokens with HMAC-SHA256 keys named by id."""

    def __init__(self, keys: Mapping[str, bytes], current: str) -> None:
        """Sign with ``keys[current]``; verify with any key in ``keys``.

        Raises:
            UsageError: the keys are no usable ``KeySet``.
        """
        self._key_set = KeySet(dict(keys), current)

    @property
    def current(self) -> str:
        """The id of the key new tokens are signed with."""
        return self._keys_now().current

    @property
    def key_ids(self) -> frozenset[str]:
        """The ids of every key that verifies."""
        return frozenset(self._keys_now().keys)

    def _keys_now(self) -> KeySet:
        """The key set to sign with; a rotating signer may read its secret again first."""
        return self._key_set

    def _key_for(self, key_id: str) -> bytes | None:
        """The key that verifies tokens of ``key_id``, if it is listed."""
        return self._keys_now().keys.get(key_id)

    def issue(
        self,
        pending_id: str,
        action: Action,
        tenant: str,
        args: Mapping[str, Any] | None,
        expires_at: float,
        *,
        recipient: str | None = None,
        channel: str | None = None,
    ) -> str:
        """A token for ``action`` on ``pending_id``, valid until ``expires_at`` (epoch seconds).

        A fractional expiry is cut to the whole second before it, so the token
        never outlives the item it was issued for. ``recipient`` and ``channel``
        bind it to the one person it is sent to (both or neither).

        Raises:
            UsageError: an unknown action, or only one of recipient and channel.
        """
        if action not in _ACTIONS:
            raise UsageError(f"unknown token action {action!r}; actions: {sorted(_ACTIONS)}")
        if (recipient is None) != (channel is None):
            raise UsageError("a token names a recipient and its channel together, or neither")
        payload: dict[str, Any] = {
            "a": action,
            "e": int(expires_at),
            "h": args_hash(args),
            "p": pending_id,
            "t": tenant,
        }
        if recipient is not None:
            payload |= {"c": channel, "r": recipient}
        return self._sign(_VERSION, payload)

    def issue_inbox(self, tenant: str, approver: str, expires_at: float) -> str:
        """An inbox token for ``approver`` of ``tenant``, valid until ``expires_at``.

        Raises:
            UsageError: an empty tenant or approver.
        """
        if not tenant or not approver:
            raise UsageError("an inbox link names its tenant and its approver")
        payload = {"e": int(expires_at), "k": "inbox", "t": tenant, "u": approver}
        return self._sign(_INBOX_VERSION, payload)

    def verify_inbox(self, token: str, now: float) -> InboxGrant:
        """The inbox token's grant, once its signature holds and ``now`` is before its expiry.

        Raises:
            TokenForged: malformed, tampered with, of an unknown key, or no inbox token
                (a resume token is refused here, as an inbox token is by ``verify``).
            TokenExpired: a genuine inbox token whose expiry is at or before ``now``.
        """
        try:
            payload = self._payload(token, _INBOX_VERSION)
            if (
                not isinstance(payload, dict)
                or set(payload) != _INBOX_KEYS
                or payload["k"] != "inbox"
                or type(payload["e"]) is not int
                or not isinstance(payload["t"], str)
                or not isinstance(payload["u"], str)
                or not payload["t"]
                or not payload["u"]
            ):
                raise TokenForged
            grant = InboxGrant(
                tenant=payload["t"],
                approver=payload["u"],
                expires_at=payload["e"],
                key_id=token.split(".")[1],
            )
        except TokenForged:
            raise
        except Exception as exc:
            raise TokenForged from exc
        if now >= grant.expires_at:
            raise TokenExpired(grant.expires_at)
        return grant

    def _sign(self, version: str, payload: dict[str, Any]) -> str:
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        # One snapshot for the id and the key: a rotation in between cannot split them.
        key_set = self._keys_now()
        signed = f"{version}.{key_set.current}.{_b64encode(text.encode('utf-8'))}"
        return f"{signed}.{self._signature(key_set.keys[key_set.current], signed)}"

    def verify(self, token: str, now: float) -> ResumeToken:
        """The token's grant, once its signature holds and ``now`` is before its expiry.

        Raises:
            TokenForged: the token is malformed, tampered with, or of an unknown key.
            TokenExpired: a genuine token whose expiry is at or before ``now``.
        """
        try:
            granted = self._open(token)
        except TokenForged:
            raise
        except Exception as exc:
            # Whatever a hostile string breaks while parsing, the answer is the same.
            raise TokenForged from exc
        if now >= granted.expires_at:
            raise TokenExpired(granted.expires_at, pending_id=granted.pending_id)
        return granted

    @staticmethod
    def _signature(key: bytes, signed: str) -> str:
        return _b64encode(hmac.new(key, signed.encode("ascii"), hashlib.sha256).digest())

    def _open(self, token: str) -> ResumeToken:
        return _grant(self._payload(token, _VERSION), token.split(".")[1])

    def _payload(self, token: str, version: str) -> Any:
        """The signed payload of a ``version`` token, once its signature holds."""
        if not isinstance(token, str) or len(token) > _MAX_TOKEN_CHARS:
            raise TokenForged
        parts = token.split(".")
        if len(parts) != 4 or parts[0] != version:
            raise TokenForged
        _, key_id, payload_b64, signature = parts
        if not _KEY_ID.fullmatch(key_id) or not _BASE64URL.fullmatch(payload_b64):
            raise TokenForged
        key = self._key_for(key_id)
        if key is None:
            raise TokenForged
        expected = self._signature(key, f"{version}.{key_id}.{payload_b64}")
        # Compared as canonical text: any other spelling of the same bytes is refused too.
        if not hmac.compare_digest(expected.encode("ascii"), signature.encode("utf-8")):
            raise TokenForged
        return json.loads(_b64decode(payload_b64).decode("utf-8"))


def _grant(payload: Any, key_id: str) -> ResumeToken:
    """The token a signed payload describes; TokenForged unless every field has its type."""
    # A payload we signed always passes; these checks keep a leaked-key or
    # future-format payload from turning into a TypeError further up.
    if not isinstance(payload, dict) or set(payload) not in (
        _PAYLOAD_KEYS,
        _PAYLOAD_KEYS | _RECIPIENT_KEYS,
    ):
        raise TokenForged
    recipient, channel = payload.get("r"), payload.get("c")
    if "r" in payload and not (isinstance(recipient, str) and isinstance(channel, str)):
        raise TokenForged
    action, expires_at = payload["a"], payload["e"]
    digest, pending_id, tenant = payload["h"], payload["p"], payload["t"]
    if (
        action not in _ACTIONS
        or type(expires_at) is not int
        or not isinstance(digest, str)
        or not _SHA256_HEX.fullmatch(digest)
        or not isinstance(pending_id, str)
        or not isinstance(tenant, str)
    ):
        raise TokenForged
    return ResumeToken(
        pending_id=pending_id,
        action=action,
        tenant=tenant,
        args_hash=digest,
        expires_at=expires_at,
        key_id=key_id,
        recipient=recipient,
        channel=channel,
    )


def signer_from(secrets: SecretSource, name: str = RESUME_SIGNING_SECRET) -> Signer:
    """A signer from the secret ``name``: a JSON key set, or one plain key (id ``k1``).

    The JSON form, ``{"current": "k2", "keys": {"k1": "...", "k2": "..."}}``, is how a
    rotation adds a key: tokens of ``k1`` keep verifying until ``k1`` is removed.

    Raises:
        SecretMissing: the secret is absent, or its value is not a usable key set.
    """
    key_set = read_key_set(secrets, name)
    return Signer(key_set.keys, key_set.current)


def read_key_set(secrets: SecretSource, name: str, *, fresh: bool = False) -> KeySet:
    """The key set in the secret ``name`` (see ``signer_from``); ``fresh`` skips any cache.

    Raises:
        SecretMissing: the secret is absent, or its value is not a usable key set.
        StoreUnavailable: the secret source failed transiently.
    """
    value = secrets.get(name, fresh=fresh)
    if not value.lstrip().startswith("{"):
        keys, current = {"k1": value.encode("utf-8")}, "k1"
    else:
        keys, current = _key_set(name, value)
    try:
        return KeySet(keys, current)
    except UsageError as exc:
        # The message names key ids and lengths only, never a key.
        raise SecretMissing(name, str(exc)) from exc


def _key_set(name: str, value: str) -> tuple[dict[str, bytes], str]:
    try:
        data = json.loads(value)
    except ValueError:
        # from None: the decoder's message quotes the secret's text.
        raise SecretMissing(name, "the value starts like JSON but does not parse") from None
    if not isinstance(data, dict) or set(data) != {"current", "keys"}:
        raise SecretMissing(name, 'the JSON value must be {"current": ..., "keys": {...}}')
    current, keys = data["current"], data["keys"]
    if (
        not isinstance(current, str)
        or not isinstance(keys, dict)
        or not all(isinstance(key, str) for key in keys.values())
    ):
        raise SecretMissing(name, '"current" must be a key id and "keys" map ids to strings')
    return {key_id: key.encode("utf-8") for key_id, key in keys.items()}, current
