"""An approver's changes to a call's arguments: bounded, checked, described.

Approving with changes is a new decision on new arguments. The approver saw the
call's arguments as the model asked for them (a link's token is bound to exactly
those by their hash, ``signoff.keys.tokens.args_hash``) and sends the fields to
change. They are merged over the originals and validated against the tool's
schema exactly as the model's arguments are; only a tool declared
``editable=True`` takes them. The audit and the model read the change as
``amount 42 → 30``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError

from signoff.errors import InvalidChanges, NotEditable

if TYPE_CHECKING:
    from collections.abc import Mapping

    from signoff.tools import Tool

__all__ = ["MAX_EDIT_BYTES", "MAX_REASON_CHARS", "apply_changes", "describe_changes"]

# A deny's reason (and an approval's note): what a person writes in a sentence or three.
MAX_REASON_CHARS: Final = 2000
# The changed fields as JSON: far more than any field a person retypes on a phone.
MAX_EDIT_BYTES: Final = 8 * 1024


def apply_changes(
    tool: Tool | None, name: str, original: Mapping[str, Any], changes: Mapping[str, Any]
) -> dict[str, Any]:
    """The arguments ``tool`` runs with once ``changes`` are applied to ``original``.

    A changed field holds its validated JSON value; every other field stays as the
    model gave it. Changes equal to the original leave the arguments as they were.

    Raises:
        NotEditable: the tool is gone or not declared ``editable``.
        InvalidChanges: the changes are too large or the schema refuses them (naming the fields).
    """
    # only a tool whose author allowed it: an edit changes what a person approves
    if tool is None or not tool.editable:
        raise NotEditable(name)
    size = len(json.dumps(dict(changes), ensure_ascii=False).encode())
    if size > MAX_EDIT_BYTES:
        fields = sorted(changes)
        raise InvalidChanges(name, fields, f"{size} bytes; at most {MAX_EDIT_BYTES}")
    try:
        # the same schema, with the same coercions, as the model's own arguments pass
        edited = tool.arguments.model_validate({**original, **changes}).model_dump(mode="json")
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        fields = sorted({str(e["loc"][0]) for e in errors if e["loc"]})
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}" for e in errors
        )
        raise InvalidChanges(name, fields, problems) from None
    try:
        asked = tool.arguments.model_validate(dict(original)).model_dump(mode="json")
    except ValidationError:
        asked = dict(original)
    result = dict(original)
    for field in changes:
        # compared as validated values: "30" from a form and 30.0 are the same amount
        if edited[field] != asked.get(field):
            result[field] = edited[field]
    return result


def describe_changes(original: Mapping[str, Any], edited: Mapping[str, Any]) -> str:
    """What changed, as a person reads it: ``amount 42 → 30; note "" → "used"``."""
    return "; ".join(
        f"{field} {_show(original.get(field))} → {_show(value)}"
        for field, value in edited.items()
        if original.get(field) != value
    )


def _show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str) and value and value.strip() == value:
        return value
    return json.dumps(value, ensure_ascii=False)
