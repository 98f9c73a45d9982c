"""An email channel's settings (``type: email``)."""

import re
from typing import Annotated, Final, Literal

from pydantic import AfterValidator, Field

from signoff.channels.config import ChannelSettings

__all__ = ["EmailAddress", "EmailSettings"]

# No colon (an unquoted address never has one): the pages tell an API key's
# ``apikey:<key id>@<tenant>`` from an address by it.
_EMAIL: Final = re.compile(r"^[^@\s<>:]+@[^@\s<>:]+\.[^@\s<>:]+$")


def _email(value: str) -> str:
    if not _EMAIL.match(value):
        raise ValueError(f"{value!r} is not an email address")
    return value


EmailAddress = Annotated[str, AfterValidator(_email)]


class EmailSettings(ChannelSettings):
    """Mail through SES v2; ``approvers`` are the addresses that may decide (empty: anyone)."""

    type: Literal["email"]
    to: list[EmailAddress] = Field(min_length=1)
    sender: EmailAddress = Field(alias="from")
    approvers: list[EmailAddress] = Field(default_factory=list)
    # Each approver's approval mail also links their approvals inbox (``GET /inbox``),
    # signed for their address: every waiting item of the tenant, not only this one.
    inbox_link: bool = False

    def mails(self, address: str) -> bool:
        """Whether ``address`` is one of this channel's recipients (case-insensitively)."""
        return _folded(address) in {_folded(a) for a in self.to}

    def allows(self, address: str) -> bool:
        """Whether ``address`` may decide from its link (no approvers listed: any recipient)."""
        return not self.approvers or _folded(address) in {_folded(a) for a in self.approvers}


def _folded(address: str) -> str:
    # Domains are case-insensitive; local parts are in practice treated alike by every
    # provider signoff mails through, so one spelling of an approver matches another.
    return address.strip().lower()
