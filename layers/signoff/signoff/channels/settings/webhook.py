"""A webhook channel's settings (``type: webhook``)."""

from typing import Literal

from signoff.channels.addresses import public_url_problem
from signoff.channels.config import ChannelSettings, HttpUrl, Secret

__all__ = ["WebhookSettings"]


class WebhookSettings(ChannelSettings):
    """A signed POST (Standard Webhooks) to ``url``."""

    type: Literal["webhook"]
    url: HttpUrl
    secret: Secret
    allow_private: bool = False

    def refused_target(self, *, allow_private: bool) -> tuple[str, str] | None:
        """``url``'s problem if it is a literal private, loopback or link-local address
        and neither the channel nor the deployment allows one."""
        if allow_private or self.allow_private:
            return None
        problem = public_url_problem(self.url)
        return ("url", problem) if problem else None
