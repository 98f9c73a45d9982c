"""An approval form's fields beyond the buttons: a deny's reason, and an approval's changes.

The form posts ``decision`` (``approve`` / ``deny``, the button pressed),
``reason`` (free text, sent with a deny: the model reads it) and, for a tool
declared ``editable``, one ``arg.<name>`` text field per argument a person can
retype (text, numbers, true/false), prefilled with the value asked. A field sent
back with other text than it was shown with is a change; the tool's schema
checks it (``signoff.approver.edits``). No JavaScript: both buttons send the whole form,
a deny ignores the changes and an approval ignores nothing but the reason.
"""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING, Any, Final

from signoff.approver.display import visible
from signoff.approver.edits import MAX_REASON_CHARS
from signoff.errors import BadForm

if TYPE_CHECKING:
    from collections.abc import Mapping

    from signoff.store.pending_records import PendingItem

__all__ = [
    "ARG_PREFIX",
    "REASON",
    "changes_from",
    "decision_fields",
    "field_text",
    "reason_from",
]

REASON: Final = "reason"
ARG_PREFIX: Final = "arg."


def field_text(value: Any) -> str:
    """An argument as its form field shows it (and a person retypes it)."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value)


def _retypable(value: Any) -> bool:
    # one line, and nothing ``visible`` would have to escape: what is shown is what is sent
    if not isinstance(value, str | int | float | bool):
        return False
    text = field_text(value)
    return "\n" not in text and visible(text) == text


def decision_fields(item: PendingItem, *, editable: bool) -> str:
    """The reason box, the change fields of an editable tool, and the two buttons."""
    changes = ""
    fields = [(k, v) for k, v in (item.args or {}).items() if _retypable(v)] if editable else []
    if fields:
        inputs = "".join(
            f'<label for="arg-{n}">{_e(name)}</label>\n'
            f'<input type="text" id="arg-{n}" name="{_attr(ARG_PREFIX + name)}" '
            f'value="{_attr(field_text(value))}">\n'
            for n, (name, value) in enumerate(fields)
        )
        changes = (
            "<fieldset>\n<legend>Change before approving (optional)</legend>\n"
            f"{inputs}</fieldset>\n"
        )
    return (
        f"{changes}"
        f'<label for="{REASON}">Reason (optional; the agent reads it if you deny)</label>\n'
        f'<textarea id="{REASON}" name="{REASON}" rows="2" maxlength="{MAX_REASON_CHARS}">'
        "</textarea>\n"
        '<div class="actions">\n'
        '<button type="submit" name="decision" value="approve" class="approve">Approve</button>\n'
        '<button type="submit" name="decision" value="deny" class="deny">Deny</button>\n'
        "</div>\n"
    )


def reason_from(form: Mapping[str, str]) -> str | None:
    """The reason written, or None.

    Raises:
        BadForm: longer than ``MAX_REASON_CHARS``.
    """
    reason = form.get(REASON, "").strip()
    if len(reason) > MAX_REASON_CHARS:
        raise BadForm(REASON, f"at most {MAX_REASON_CHARS} characters")
    return reason or None


def changes_from(form: Mapping[str, str], item: PendingItem) -> dict[str, str] | None:
    """The fields sent back with other text than they were shown with, or None.

    A field the item's arguments do not have is passed on as a change too: the
    tool's schema then names it, as it would for an API call.
    """
    asked = item.args or {}
    changes = {
        name.removeprefix(ARG_PREFIX): text
        for name, text in form.items()
        if name.startswith(ARG_PREFIX)
        and (
            name.removeprefix(ARG_PREFIX) not in asked
            or text != field_text(asked[name.removeprefix(ARG_PREFIX)])
        )
    }
    return changes or None


def _e(value: str) -> str:
    return escape(visible(value))


def _attr(value: str) -> str:
    return escape(value, quote=True)
