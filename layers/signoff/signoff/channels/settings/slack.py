"""A Slack channel's settings (``type: slack``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from signoff.channels.config import (
    HttpUrl,  # noqa: TC001 - pydantic reads it at run time
    Secret,  # noqa: TC001 - pydantic reads it at run time
)
from signoff.channels.settings.chat import ChatSettings

__all__ = ["SlackSettings"]


class SlackSettings(ChatSettings):
    """A Block Kit message in a Slack channel; ``approvers`` are Slack user ids."""

    type: Literal["slack"]
    channel_id: str = Field(min_length=1)
    bot_token: Secret
    signing_secret: Secret
    base_url: HttpUrl = "https://slack.com/api"
