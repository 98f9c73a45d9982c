"""The scripted model: deterministic answers from a function or a YAML script.

The sample agents, the demo and the tests run on it, so nothing needs an API
key. A script picks a scenario by matching the latest user message and plays
its steps in order, one per model call::

    scenarios:
      - match: '(?i)refund.*?(?P<order>A-\\d+)'
        steps:
          - text: "Let me look up order {order}."
            call: [{tool: lookup_order, args: {orderId: "{order}"}}]
          - text: "Refunded {result.issue_refund.amount}."
            otherwise: "I could not finish: {result.issue_refund}"

``{name}`` is a named group of the match, ``{result.<tool>.<path>}`` the latest
result of that tool in this turn (JSON results are navigable). A value that is
exactly one placeholder keeps the result's type. ``otherwise`` replaces a
step's text and calls when any result of the previous batch was an error, a
denial or a skip.
"""

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from signoff import yamldocs
from signoff.budget import is_omission_note
from signoff.errors import ConfigError
from signoff.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from signoff.models.settings import ModelSettings

__all__ = ["Script", "ScriptedModel"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][\w.-]*)\}")


class ScriptCall(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class ScriptStep(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")
    text: str = ""
    call: list[ScriptCall] = Field(default_factory=list)
    otherwise: str | None = None


class Scenario(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")
    match: str = ""
    steps: list[ScriptStep] = Field(min_length=1)


class Script(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")
    scenarios: list[Scenario] = Field(min_length=1)


class ScriptedModel:
    """A ``ModelCall`` whose answers come from ``respond``."""

    def __init__(self, respond: "Callable[[ModelRequest], ModelResponse]") -> None:
        self._respond = respond
        self.requests: list[ModelRequest] = []

    def __call__(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return self._respond(request)

    @classmethod
    def from_config(cls, settings: "ModelSettings", agent_dir: "Path") -> "ScriptedModel":
        """The model playing the agent's ``script`` file.

        Raises:
            ConfigError: the script is missing, unreadable or malformed.
        """
        return cls.from_file(agent_dir / settings.script)

    @classmethod
    def from_file(cls, path: "Path") -> "ScriptedModel":
        """A model playing the script at ``path``.

        Raises:
            ConfigError: the script is unreadable or malformed.
        """
        try:
            raw = yamldocs.safe_load(path.read_text(encoding="utf-8"))
            script = Script.model_validate(raw)
        except OSError as exc:
            raise ConfigError(str(path), "", f"cannot read script: {exc}") from exc
        except yamldocs.YAMLError as exc:
            raise ConfigError(str(path), "", f"invalid YAML: {exc}") from exc
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            field = ".".join(str(p) for p in err["loc"])
            raise ConfigError(str(path), field, err["msg"]) from exc
        for i, scenario in enumerate(script.scenarios):
            try:
                re.compile(scenario.match)
            except re.error as exc:
                raise ConfigError(str(path), f"scenarios.{i}.match", str(exc)) from exc
        return cls(_ScriptPlayer(script))


@dataclass(frozen=True)
class _ScriptPlayer:
    script: Script

    def __call__(self, request: ModelRequest) -> ModelResponse:
        messages = request.messages
        # A compacted prompt's notes are user messages too, but not what the user asked.
        last_user = max(
            (
                i
                for i, m in enumerate(messages)
                if isinstance(m, UserMessage) and not is_omission_note(m)
            ),
            default=-1,
        )
        text = messages[last_user].content if last_user >= 0 else ""
        since = messages[last_user + 1 :]
        scenario, groups = self._scenario(text)
        position = sum(isinstance(m, AssistantMessage) for m in since)
        step = scenario.steps[min(position, len(scenario.steps) - 1)]
        if position >= len(scenario.steps):
            step = ScriptStep(text=step.text if not step.call else "(the script has no more steps)")
        variables: dict[str, Any] = dict(groups)
        results = [m for m in since if isinstance(m, ToolResultMessage)]
        variables["result"] = {r.name: _decode(r.content) for r in results}
        last_batch = _last_batch(since)
        if step.otherwise is not None and any(r.is_error for r in last_batch):
            return ModelResponse(text=str(_fill(step.otherwise, variables)))
        calls = tuple(
            ToolCall(
                id=f"call_{len(messages)}_{i}",
                name=c.tool,
                args={k: _fill(v, variables) for k, v in c.args.items()},
            )
            for i, c in enumerate(step.call)
        )
        return ModelResponse(
            text=str(_fill(step.text, variables)),
            tool_calls=calls,
            stop="tool_use" if calls else "end",
        )

    def _scenario(self, text: str) -> tuple[Scenario, dict[str, str]]:
        for scenario in self.script.scenarios:
            found = re.search(scenario.match, text)
            if found:
                return scenario, {k: v for k, v in found.groupdict().items() if v is not None}
        return self.script.scenarios[-1], {}


def _last_batch(since: Any) -> list[ToolResultMessage]:
    batch: list[ToolResultMessage] = []
    for message in reversed(since):
        if not isinstance(message, ToolResultMessage):
            break
        batch.append(message)
    return batch


def _decode(content: str) -> Any:
    # an approval with changes puts a line before the tool's own result
    for text in (content, content.partition("\n")[2]):
        try:
            return json.loads(text)
        except ValueError:
            continue
    return content


def _lookup(path: str, variables: dict[str, Any]) -> Any:
    value: Any = variables
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _fill(template: Any, variables: dict[str, Any]) -> Any:
    if isinstance(template, dict):
        return {k: _fill(v, variables) for k, v in template.items()}
    if isinstance(template, list):
        return [_fill(v, variables) for v in template]
    if not isinstance(template, str):
        return template
    whole = _PLACEHOLDER.fullmatch(template)
    if whole:
        value = _lookup(whole.group(1), variables)
        return template if value is None else value

    def one(found: re.Match[str]) -> str:
        value = _lookup(found.group(1), variables)
        if value is None:
            return found.group(0)
        return value if isinstance(value, str) else json.dumps(value)

    return _PLACEHOLDER.sub(one, template)
