"""A Redis list channel's settings (``type: redis``)."""

from typing import Final, Literal

from pydantic import Field

from signoff.channels.config import ChannelSettings, Secret

__all__ = ["DEFAULT_QUEUE_KEY", "RedisSettings"]

DEFAULT_QUEUE_KEY: Final = "signoff:pending-approvals"


class RedisSettings(ChannelSettings):
    """A pending-approval entry pushed onto a Redis list (approvals only).

    ``url`` names the secret holding ``redis://user:pass@host:6379/0`` (or ``rediss://``).
    """

    type: Literal["redis"]
    url: Secret
    # No braces: the marker key's hash tag is built from this name.
    queue_key: str = Field(default=DEFAULT_QUEUE_KEY, pattern=r"^[^{}]+$")
    timeout_seconds: float = Field(default=5.0, gt=0)
