"""A GitHub channel's settings (``type: github``): a token, or the App that makes one."""

from typing import Final, Literal, Self

from pydantic import Field, model_validator

from signoff.channels.config import ChannelSettings, HttpUrl, Secret, SettingsModel

__all__ = ["GITHUB_API", "GitHubAppSettings", "GitHubSettings"]

GITHUB_API: Final = "https://api.github.com"


class GitHubAppSettings(SettingsModel):
    """``{appId, installationId, privateKey: {secret: name}}`` (the key's PEM in the secret)."""

    # The App's id, or its client id (``Iv1.…``), which GitHub also takes as the issuer.
    app_id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9._-]+$")
    installation_id: int = Field(ge=1)
    private_key: Secret


class GitHubSettings(ChannelSettings):
    """A comment on ``issue`` (an issue or pull request number) of ``repository``."""

    type: Literal["github"]
    repository: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$")
    issue: int = Field(ge=1)
    # A personal access token or an installation token, or the App that makes one.
    token: Secret | None = None
    app: GitHubAppSettings | None = None
    api_url: HttpUrl = GITHUB_API
    allow_private: bool = False

    @model_validator(mode="after")
    def _one_credential(self) -> Self:
        if (self.token is None) == (self.app is None):
            raise ValueError(
                "give either token: {secret: name} or app: {appId, installationId, privateKey}"
            )
        return self
