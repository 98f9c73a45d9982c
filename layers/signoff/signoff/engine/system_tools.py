"""The engine's own tools: ``ask_user`` (a question to a human) and ``Skill``.

Neither goes through the rules gate: a question changes nothing, and loading a
skill only reads a file the agent ships with.
"""

from __future__ import annotations

from signoff.messages import ToolSpec

__all__ = ["ASK_USER", "SKILL", "ask_user_spec", "skill_spec"]

# The specs are literal values here: constructed without validation, so a turn that
# has no other use for ToolSpec's validator never builds it.

ASK_USER = "ask_user"
SKILL = "Skill"


def ask_user_spec() -> ToolSpec:
    return ToolSpec.model_construct(
        name=ASK_USER,
        description=(
            "Ask the human a clarifying question when the request is genuinely ambiguous. "
            "The answer comes back as this tool's result."
        ),
        parameters={
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "The question to ask."},
                "options": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Suggested answers; the human may still answer freely.",
                },
            },
            "required": ["question"],
            "additionalProperties": False,
        },
    )


def skill_spec(names: list[str]) -> ToolSpec:
    return ToolSpec.model_construct(
        name=SKILL,
        description="Load the full instructions of one of the skills listed in the system prompt.",
        parameters={
            "type": "object",
            "properties": {"name": {"type": "string", "enum": names}},
            "required": ["name"],
            "additionalProperties": False,
        },
    )
