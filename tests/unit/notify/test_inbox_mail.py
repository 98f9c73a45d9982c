"""An email channel with ``inboxLink: true`` links each approver's approvals inbox.

Through the notifier hub: an approver's letter carries ``inboxUrl``, an inbox token
signed for that address and tenant (never a resume token); a recipient who may not
decide gets none, nor does anyone on a channel without ``inboxLink``. The mail shows
the link in its text and HTML parts, after the card's one button.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from signoff.channels.email import render
from signoff.channels.memory import RecordingMailbox
from signoff.channels.settings.email import EmailSettings
from signoff.clock import ManualClock
from signoff.errors import TokenForged
from signoff.keys.tokens import signer_from
from signoff.notify.compose import INBOX_LINK_TTL, Composer
from signoff.notify.hub import Notifier
from signoff.secrets.memory import MemorySecrets
from signoff.store.memory import MemoryStore
from tests.unit.notify.test_notifier import pause

AGENTS = Path(__file__).resolve().parents[3] / "agents"
ALICE, BOB = "alice@example.com", "bob@example.com"


class InboxMailbox(RecordingMailbox):
    """A recording mailbox with the email channel's ``inbox_link`` and ``allows``."""

    def __init__(self, name: str, *, inbox_link: bool, approvers: list[str]) -> None:
        super().__init__(name, [ALICE, BOB])
        self.inbox_link = inbox_link
        self.approvers = approvers

    def allows(self, address: str) -> bool:
        return address in self.approvers


def deliver(inbox_link: bool) -> tuple[InboxMailbox, Composer, object]:
    clock = ManualClock()
    store = MemoryStore(clock=clock)
    composer = Composer(
        signer=signer_from(MemorySecrets({"resume-signing": "k" * 32})),
        public_url="https://api.example.com",
    )
    item = pause(store, clock)
    mail = InboxMailbox("email", inbox_link=inbox_link, approvers=[ALICE])
    hub = Notifier(
        pending=store.pending,
        outbox=store.outbox,
        channels={"email": mail},
        composer=lambda: composer,
        clock=clock,
        lock_ttl=30,
    )
    assert hub.deliver(item.id).sent == ["email"]
    return mail, composer, item


def letter_to(mail: InboxMailbox, address: str) -> object:
    [sent] = [s for s in mail.sent if s.key.endswith(f":{address}")]
    return sent.notification


def test_an_approvers_letter_links_their_inbox_and_nobody_elses_does() -> None:
    mail, composer, item = deliver(inbox_link=True)

    alice, bob = letter_to(mail, ALICE), letter_to(mail, BOB)

    assert bob.inbox_url is None  # type: ignore[attr-defined]
    link = urlsplit(alice.inbox_url)  # type: ignore[attr-defined]
    assert (link.netloc, link.path) == ("api.example.com", "/inbox")
    [token] = parse_qs(link.query)["token"]
    grant = composer.signer.verify_inbox(token, item.requested_at)  # type: ignore[attr-defined]
    assert (grant.tenant, grant.approver) == ("default", ALICE)
    assert grant.expires_at == int(item.requested_at + INBOX_LINK_TTL)  # type: ignore[attr-defined]
    with pytest.raises(TokenForged):
        composer.signer.verify(token, item.requested_at)  # type: ignore[attr-defined]


def test_without_inbox_link_no_letter_carries_one() -> None:
    mail, _, _ = deliver(inbox_link=False)

    assert [s.notification.inbox_url for s in mail.sent] == [None, None]


def test_the_mail_shows_the_inbox_link_after_its_one_button() -> None:
    mail, _, _ = deliver(inbox_link=True)
    alice = letter_to(mail, ALICE)

    text, page = render(alice)  # type: ignore[arg-type]

    url = alice.inbox_url  # type: ignore[attr-defined]
    assert f"Your approvals inbox: {url}" in text
    assert page.count("Your approvals inbox</a>") == 1
    assert page.index(alice.link_url.replace("&", "&amp;")) < page.index("Your approvals inbox")  # type: ignore[attr-defined]


def test_channels_yaml_turns_it_on_with_inbox_link() -> None:
    settings = EmailSettings.model_validate(
        {"type": "email", "to": [ALICE], "from": "signoff@example.com", "inboxLink": True}
    )

    assert settings.inbox_link is True
    assert (
        EmailSettings.model_validate(
            {"type": "email", "to": [ALICE], "from": "signoff@example.com"}
        ).inbox_link
        is False
    )
