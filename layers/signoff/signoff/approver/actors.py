"""Who decides a pending item: a person, verified one way or another, or the system itself.

Trust never follows from a name a user configures (``DESIGN.md`` §5.11). A
person's decision is made by an ``Actor``: the id the audit shows, the channel it
came through, and the ``Identity`` that verified it — which kind of credential
vouched for the person and its value in that kind's own namespace:

- ``slack`` / ``lark``: the user id in a click whose signature verified;
- ``email``: the address a signed link was made for;
- ``api_key``: the id of the API key the request carried; ``anonymous``: no key,
  where the deployment allows that (its value is the tenant);
- ``inbox``: the approver a signed inbox link names (a person of ``people.yaml``,
  or an email address);
- ``link``: a signed link that names nobody.

``signoff.gate.people`` finds the person an identity belongs to by that kind and
value, never by the shape of a string (a prefix, an ``@``), so no identity of one
kind can pass for another's nor for a person's name.

The sweeper's own decisions — an item whose time ran out, an escalation ladder's
final step — are made by a ``SystemActor``, a type of its own: no request path
builds one (the API, link, chat and inbox paths build ``Actor`` values with the
constructors below), and ``Decisions.decide`` takes an ``Actor`` only, so every
decision it makes goes through the item's policy. The sweeper decides through
``Decisions.expire`` and ``Decisions.escalate``, whose audit entries take their
kind from the ``SystemActor``.

``RESERVED_CHANNELS`` are the words signoff itself writes in an audit entry's
actor, channel and kind columns. ``channels.yaml`` refuses a channel of one of
those names (``signoff.channels.config``), so a person's decision is never shown
under a channel that reads as the system's or as a built-in way in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "API_CHANNEL",
    "CLI_CHANNEL",
    "ESCALATION",
    "EXPIRY",
    "INBOX_CHANNEL",
    "LINK",
    "LINK_CHANNEL",
    "RESERVED_CHANNELS",
    "RULES",
    "SWEEPER",
    "Actor",
    "Decider",
    "Identity",
    "IdentityKind",
    "SystemActor",
    "SystemMove",
    "api_caller",
    "chat_user",
    "inbox_approver",
    "link_recipient",
]

IdentityKind = Literal["slack", "lark", "email", "api_key", "anonymous", "inbox", "link"]
SystemMove = Literal["expiry", "escalation"]

# The channels the built-in ways in record a person's decision under.
API_CHANNEL: Final = "api"
LINK_CHANNEL: Final = "link"
INBOX_CHANNEL: Final = "inbox"
# What the terminal's decisions (``signoff run``) are shown as.
CLI_CHANNEL: Final = "cli"
# The id the audit gives the sweeper's own decisions, and the gate's (kind ``rule``).
SWEEPER: Final = "sweeper"
RULES: Final = "rules"


@dataclass(frozen=True, kw_only=True)
class Identity:
    """What verified a person: the kind of credential and its value in that kind's namespace."""

    kind: IdentityKind
    value: str


@dataclass(frozen=True, kw_only=True)
class Actor:
    """A person deciding, through which channel, as the audit, the pages and the status name it.

    ``id`` is what the audit shows: a Slack user id, a Lark open id, the email
    address a link was made for, ``apikey:<key id>@<tenant>``, an inbox link's
    approver, or ``link`` for a link that names nobody. ``channel`` is the
    ``channels.yaml`` name it came through, or ``api`` / ``link`` / ``inbox``.
    ``identity`` is what the person is looked up by; nothing reads trust from
    ``id`` or ``channel``.
    """

    id: str
    channel: str
    identity: Identity


@dataclass(frozen=True, kw_only=True)
class SystemActor:
    """The sweeper deciding by itself: an item's time ran out, or its ladder's last step.

    Never a vote and never refused by a rule's ``from``: there is no person. Only
    ``EXPIRY`` and ``ESCALATION`` exist; a request cannot produce either.
    """

    move: SystemMove

    @property
    def id(self) -> str:
        """The audit's actor: ``sweeper``."""
        return SWEEPER

    @property
    def channel(self) -> str:
        """The audit's channel: the move itself (``expiry`` / ``escalation``)."""
        return self.move


# Whoever decides an item, as the audit records it.
Decider = Actor | SystemActor

EXPIRY: Final = SystemActor(move="expiry")
ESCALATION: Final = SystemActor(move="escalation")

# A signed link that names nobody: whoever holds it was sent it.
LINK: Final = Actor(id="link", channel=LINK_CHANNEL, identity=Identity(kind="link", value="link"))

# Every word signoff writes by itself in an audit entry: the system's channels and
# actor, the built-in ways in, and the entry kinds (``AuditEntry.kind``; a unit test
# keeps the two in step). A channel of one of these names would make a person's
# decision read as the system's.
RESERVED_CHANNELS: Final[frozenset[str]] = frozenset(
    {
        "expiry",
        "escalation",
        SWEEPER,
        RULES,
        API_CHANNEL,
        LINK_CHANNEL,
        INBOX_CHANNEL,
        CLI_CHANNEL,
        "rule",
        "human",
        "refusal",
        "vote",
    }
)


def api_caller(key_id: str | None, tenant: str) -> Actor:
    """An API caller: ``apikey:<key id>@<tenant>``, or ``anonymous@<tenant>`` without a key."""
    if key_id is None:
        return Actor(
            id=f"anonymous@{tenant}",
            channel=API_CHANNEL,
            identity=Identity(kind="anonymous", value=tenant),
        )
    return Actor(
        id=f"apikey:{key_id}@{tenant}",
        channel=API_CHANNEL,
        identity=Identity(kind="api_key", value=key_id),
    )


def link_recipient(address: str, channel: str) -> Actor:
    """The email recipient a signed link was made for, through the email channel that sent it."""
    return Actor(id=address, channel=channel, identity=Identity(kind="email", value=address))


def chat_user(vendor: Literal["slack", "lark"], user: str, channel: str) -> Actor:
    """A chat user whose click the vendor's signature vouched for."""
    return Actor(id=user, channel=channel, identity=Identity(kind=vendor, value=user))


def inbox_approver(approver: str) -> Actor:
    """The approver a signed inbox link names, deciding through the inbox."""
    return Actor(
        id=approver, channel=INBOX_CHANNEL, identity=Identity(kind="inbox", value=approver)
    )
