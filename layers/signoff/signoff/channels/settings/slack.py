"""A Slack channel's settings (``type: slack``)."""

from typing import Literal

from pydantic import Field

from signoff.channels.config import HttpUrl, Secret
from signoff.channels.settings.chat import ChatSettings

__all__ = ["SlackSettings"]


class SlackSettings(ChatSettings):
    """A Block Kit message in a Slack channel; ``approvers`` are Slack user ids."""

    type: Literal["slack"]
    channel_id: str = Field(min_length=1)
    bot_token: Secret
    signing_secret: Secret
    base_url: HttpUrl = "https://slack.com/api"
