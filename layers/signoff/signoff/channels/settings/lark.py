"""A Lark/Feishu channel's settings (``type: lark``)."""

from typing import Literal

from pydantic import Field

from signoff.channels.config import HttpUrl, Secret
from signoff.channels.settings.chat import ChatSettings

__all__ = ["LarkSettings"]


class LarkSettings(ChatSettings):
    """An interactive card in one Lark/Feishu chat; ``approvers`` are open ids."""

    type: Literal["lark"]
    chat_id: str = Field(min_length=1)
    app_id: str = Field(min_length=1)
    app_secret: Secret
    verification_token: Secret
    encrypt_key: Secret | None = None
    base_url: HttpUrl = "https://open.larksuite.com"
