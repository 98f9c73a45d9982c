"""What the settings of the chat apps' channels (Slack, Lark) share."""

from pydantic import Field

from signoff.channels.config import ChannelSettings

__all__ = ["ChatSettings"]


class ChatSettings(ChannelSettings):
    """A chat app's channel: ``approvers`` are the app's user ids (empty: anyone)."""

    approvers: list[str] = Field(default_factory=list)

    def allows(self, user_id: str) -> bool:
        """Whether ``user_id`` may decide from this channel (no list means anyone in it may)."""
        return not self.approvers or user_id in self.approvers
