"""An OpenClaw gateway channel's settings (``type: openclaw``)."""

import re
from typing import Final, Literal, Self

from pydantic import Field, field_validator, model_validator

from signoff.channels.config import ChannelSettings, HttpUrl, Secret

__all__ = ["DEFAULT_HOOKS_PATH", "INSTRUCTIONS", "OpenClawSettings"]

DEFAULT_HOOKS_PATH: Final = "/hooks"
# What the receiving agent is asked to do with the message: its reply, not the
# message, is what reaches the chat when the gateway delivers.
INSTRUCTIONS: Final = "Pass this signoff notification on to the person as it is, its link included."
_PATH: Final = re.compile(r"^/[^\s?#]*$")


class OpenClawSettings(ChannelSettings):
    """An agent turn on an OpenClaw gateway per notification (``POST <hooksPath>/agent``)."""

    type: Literal["openclaw"]
    gateway_url: HttpUrl
    hooks_path: str = DEFAULT_HOOKS_PATH
    # The gateway's hooks.token (not its operator token).
    token: Secret
    agent_id: str | None = Field(default=None, min_length=1, max_length=128, pattern=r"^\S+$")
    deliver: bool | None = None
    channel: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    to: str | None = Field(default=None, min_length=1, max_length=256)
    hook_name: str = Field(default="signoff", min_length=1, max_length=64)
    # One OpenClaw session per signoff run: needs hooks.allowRequestSessionKey, and a
    # prefix the gateway's hooks.allowedSessionKeyPrefixes lists, if it lists any.
    session_keys: bool = False
    session_key_prefix: str = Field(default="hook:signoff:", pattern=r"^\S{1,64}$")
    instructions: str = Field(default=INSTRUCTIONS, max_length=500)
    allow_private: bool = False

    @field_validator("gateway_url")
    @classmethod
    def _no_query(cls, value: str) -> str:
        if "?" in value or "#" in value:
            # the gateway refuses a query token, and nothing else belongs there
            raise ValueError("gatewayUrl takes no query or fragment (the token is a secret)")
        return value

    @field_validator("hooks_path")
    @classmethod
    def _hooks_path(cls, value: str) -> str:
        # as the gateway reads hooks.path: a leading slash, no trailing one, never "/"
        path = "/" + value.strip().strip("/")
        if path == "/" or not _PATH.match(path):
            raise ValueError("hooksPath is the gateway's hooks.path, such as /hooks")
        return path

    @model_validator(mode="after")
    def _delivery(self) -> Self:
        if self.deliver is False and (self.channel or self.to):
            raise ValueError("channel and to route a delivery: drop them, or deliver: true")
        if (self.channel is None) != (self.to is None):
            raise ValueError("give channel and to together (the gateway wants both or neither)")
        if self.channel == "last":
            raise ValueError("channel: last is the gateway's default: leave channel and to out")
        return self
