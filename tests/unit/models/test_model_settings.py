"""Reasoning models: the output-limit field and the effort, from agent.yaml or SIGNOFF_MODEL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from signoff.agents import load_agent
from signoff.errors import ConfigError
from signoff.messages import ModelRequest, UserMessage
from signoff.models.factory import build_model, effective_settings
from signoff.models.openai import OpenAIChat
from signoff.models.recovery import Recovering
from signoff.models.settings import ModelSettings
from signoff.settings import Deployment
from tests.support.sdk_types import sdk_problems

if TYPE_CHECKING:
    from pathlib import Path

PING = ModelRequest(system="Be brief.", messages=(UserMessage(content="Hi"),), max_tokens=64)


def deployment(model: str | None = None) -> Deployment:
    return Deployment.model_validate({"SIGNOFF_MODEL": model} if model else {})


def openai_body(
    settings: ModelSettings, tmp_path: Path, override: str | None = None
) -> dict[str, Any]:
    built = build_model(settings, tmp_path, deployment(override))
    assert isinstance(built, Recovering) and isinstance(built.inner, OpenAIChat)
    return built.inner.request_body(PING)


@pytest.mark.parametrize(
    ("model", "field"),
    [
        ("o4-mini", "max_completion_tokens"),
        ("o3", "max_completion_tokens"),
        ("o1-preview", "max_completion_tokens"),
        ("gpt-5", "max_completion_tokens"),
        ("gpt-5-mini-2025-08-07", "max_completion_tokens"),
        ("openai/o4-mini", "max_completion_tokens"),  # a router's vendor prefix
        ("gpt-4o-mini", "max_tokens"),
        ("gpt-4.1", "max_tokens"),
        ("llama3.2", "max_tokens"),
        ("qwen3-omni", "max_tokens"),
    ],
)
def test_the_output_limit_field_follows_the_model(model: str, field: str, tmp_path: Path) -> None:
    body = openai_body(ModelSettings(provider="openai", model=model), tmp_path)

    assert body[field] == 64
    assert {"max_tokens", "max_completion_tokens"} & body.keys() == {field}
    assert not sdk_problems(body, CompletionCreateParamsNonStreaming)


def test_agent_yaml_sets_the_field_and_the_effort(tmp_path: Path) -> None:
    # Given an agent on a reasoning model behind a compatible server that names it freely
    folder = tmp_path / "thinker"
    folder.mkdir()
    (folder / "agent.yaml").write_text(
        "system: Think.\n"
        "model:\n"
        "  provider: openai\n"
        "  model: my-reasoner\n"
        "  maxTokensField: max_completion_tokens\n"
        "  reasoningEffort: high\n"
        "  maxTokens: 2048\n"
    )
    agent = load_agent(folder)

    body = openai_body(agent.config.model, folder)

    # Then the request is the o-series shape the SDK's own type accepts
    assert body["max_completion_tokens"] == 64  # the request's own limit
    assert "max_tokens" not in body
    assert body["reasoning_effort"] == "high"
    assert not sdk_problems(body, CompletionCreateParamsNonStreaming)


def test_an_explicit_field_overrides_the_automatic_one(tmp_path: Path) -> None:
    # An older gateway serving an o-series model that only knows max_tokens
    settings = ModelSettings(provider="openai", model="o4-mini", max_tokens_field="max_tokens")

    body = openai_body(settings, tmp_path)

    assert body["max_tokens"] == 64
    assert "max_completion_tokens" not in body


def test_signoff_model_options_set_reasoning_settings(tmp_path: Path) -> None:
    override = "openai:o4-mini?reasoningEffort=low&maxTokens=4096"

    settings = effective_settings(ModelSettings(), deployment(override))
    body = openai_body(ModelSettings(), tmp_path, override)

    assert (settings.provider, settings.model) == ("openai", "o4-mini")
    assert settings.max_tokens == 4096
    assert body["reasoning_effort"] == "low"
    assert body["max_completion_tokens"] == 64
    assert not sdk_problems(body, CompletionCreateParamsNonStreaming)


def test_signoff_model_keeps_a_bedrock_model_id_with_colons() -> None:
    override = "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0?region=eu-west-1"

    settings = effective_settings(ModelSettings(), deployment(override))

    assert settings.model == "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    assert settings.region == "eu-west-1"


@pytest.mark.parametrize(
    ("override", "field", "problem"),
    [
        ("openai:o4-mini?reasoningEffort=extreme", "reasoning_effort", "Input should be"),
        ("openai:o4-mini?maxTokensField=max_output", "max_tokens_field", "Input should be"),
        ("openai:o4-mini?temperature=0.2", "temperature", "Extra inputs are not permitted"),
        ("openai:o4-mini?maxTokens=lots", "max_tokens", "valid integer"),
        ("anthropic:claude-sonnet-4-5?reasoningEffort=high", "", "applies to the openai"),
        ("openai:o4-mini?model=gpt-4o", "", "before the '?'"),
        ("openai:o4-mini?reasoningEffort", "", "options"),
    ],
)
def test_bad_options_name_signoff_model(override: str, field: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        effective_settings(ModelSettings(), deployment(override))

    assert caught.value.file == "SIGNOFF_MODEL"
    assert caught.value.field == field
    assert problem in caught.value.problem


def test_openai_only_settings_are_refused_for_other_providers(tmp_path: Path) -> None:
    folder = tmp_path / "claude"
    folder.mkdir()
    (folder / "agent.yaml").write_text(
        "system: hi\n"
        "model: {provider: bedrock, model: amazon.nova-lite-v1:0, reasoningEffort: low}\n"
    )

    with pytest.raises(ConfigError) as caught:
        load_agent(folder)

    assert caught.value.field == "model"
    assert "reasoningEffort applies to the openai provider" in caught.value.problem


def test_an_override_to_another_provider_must_suit_the_agents_settings() -> None:
    agent_settings = ModelSettings(provider="openai", model="o4-mini", reasoning_effort="low")

    with pytest.raises(ConfigError, match="reasoningEffort applies to the openai provider"):
        effective_settings(agent_settings, deployment("bedrock:amazon.nova-lite-v1:0"))
