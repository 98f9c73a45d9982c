"""Model keys from secrets: ``apiKey: {secret: NAME}`` in ``agent.yaml``, never the key itself.

The key of an OpenAI-compatible or Anthropic model is read from the deployment's
secret source when a turn builds its model (``build_model``); the plain key
loopengine's ``model.apiKey`` holds is refused, naming the reference form.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from pydantic import ValidationError

from signoff.agents import load_agent
from signoff.errors import ConfigError, SecretMissing
from signoff.models.factory import build_model
from signoff.models.settings import ModelSettings
from signoff.secrets.memory import MemorySecrets
from tests.support.loopengine import loopengine_agent

if TYPE_CHECKING:
    from pathlib import Path

OPENAI = {"provider": "openai", "model": "gpt-4o-mini", "apiKey": {"secret": "openai-key"}}


def client_of(model: Any) -> Any:
    return getattr(model, "inner", model).client


def test_an_api_key_secret_reference_loads(tmp_path: Path) -> None:
    agent = load_agent(loopengine_agent(tmp_path, model=OPENAI))
    assert agent.config.model.api_key is not None
    assert agent.config.model.api_key.secret == "openai-key"


def test_a_plain_api_key_is_refused_naming_the_secret_form(tmp_path: Path) -> None:
    model = {**OPENAI, "apiKey": "sk-live-123"}
    with pytest.raises(ConfigError) as caught:
        load_agent(loopengine_agent(tmp_path, model=model))
    assert caught.value.field == "model.apiKey"
    assert "apiKey: {secret: <name>}" in caught.value.problem
    assert "sk-live-123" not in str(caught.value)


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({**OPENAI, "apiKeyEnv": "OPENAI_API_KEY"}, "write one"),
        ({**OPENAI, "provider": "bedrock"}, "openai and anthropic"),
        ({**OPENAI, "apiKey": {"secret": ""}}, "at least 1 character"),
        ({**OPENAI, "apiKey": {"secret": "k", "value": "sk-1"}}, "Extra inputs"),
    ],
)
def test_an_api_key_reference_is_checked(settings: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        ModelSettings.model_validate(settings)


@pytest.mark.parametrize(
    ("provider", "header", "value"),
    [
        ("openai", "authorization", "Bearer sk-from-secret"),
        ("anthropic", "x-api-key", "sk-from-secret"),
    ],
)
def test_the_key_is_read_from_the_secret_source_when_the_model_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: str, header: str, value: str
) -> None:
    monkeypatch.delenv("SIGNOFF_MODEL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-the-environment")
    settings = ModelSettings.model_validate({**OPENAI, "provider": provider})
    secrets = MemorySecrets({"openai-key": "sk-from-secret"})

    model = build_model(settings, tmp_path, secrets=secrets)

    assert client_of(model).headers[header] == value


def test_a_missing_key_secret_fails_the_build_naming_the_secret(tmp_path: Path) -> None:
    settings = ModelSettings.model_validate(OPENAI)
    with pytest.raises(SecretMissing, match="openai-key"):
        build_model(settings, tmp_path, secrets=MemorySecrets())


def test_without_a_source_the_key_comes_from_its_signoff_secret_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SIGNOFF_MODEL", raising=False)
    monkeypatch.setenv("SIGNOFF_SECRET_OPENAI_KEY", "sk-local")
    model = build_model(ModelSettings.model_validate(OPENAI), tmp_path)
    assert client_of(model).headers["authorization"] == "Bearer sk-local"
