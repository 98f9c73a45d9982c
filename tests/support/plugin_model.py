"""A model provider as a third party ships it: a class with ``from_config(settings, agent_dir)``.

Installed by tests through a ``signoff.models`` entry point
(``tests.support.distributions.install``). It answers with the last user message,
prefixed by its model name and the greeting in ``greeting.txt`` of the agent's
folder, so a test sees both the settings and the agent directory reach it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from signoff.messages import ModelResponse, Usage, UserMessage

if TYPE_CHECKING:
    from pathlib import Path

    from signoff.messages import ModelRequest
    from signoff.models.settings import ModelSettings

__all__ = ["ParrotModel"]


class ParrotModel:
    """A ``ModelCall`` repeating what the user said."""

    def __init__(self, model: str, greeting: str) -> None:
        self.model = model
        self.greeting = greeting

    @classmethod
    def from_config(cls, settings: ModelSettings, agent_dir: Path) -> Self:
        greeting = agent_dir / "greeting.txt"
        return cls(settings.model, greeting.read_text().strip() if greeting.exists() else "")

    def __call__(self, request: ModelRequest) -> ModelResponse:
        said = next(
            (m.content for m in reversed(request.messages) if isinstance(m, UserMessage)), ""
        )
        return ModelResponse(
            text=f"{self.greeting} {self.model}: {said}",
            usage=Usage(input_tokens=1, output_tokens=1),
        )
