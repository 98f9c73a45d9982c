"""What a link page's form POSTs back: parsing the body and refusing cross-site posts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from urllib.parse import parse_qs, urlsplit

from signoff.errors import BadForm

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["chosen_answer", "is_cross_site", "parse_form"]

# Our forms send token, decision, choice, answer, reason, and one arg.<name> per
# argument of an editable tool: far fewer than this.
_MAX_FIELDS: Final = 40
# Sec-Fetch-Site values of a request that no other site started.
_OWN_SITE: Final = frozenset({"same-origin", "none"})
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def parse_form(body: str) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body as one value per field.

    Raises:
        BadForm: a repeated or nameless field, a malformed pair, text that is not
            UTF-8 after unquoting, or more fields than any of our forms sends.
    """
    try:
        parsed = parse_qs(
            body,
            keep_blank_values=True,
            strict_parsing=True,
            errors="strict",
            max_num_fields=_MAX_FIELDS,
        )
    except (ValueError, UnicodeDecodeError) as exc:
        # ValueError covers both a bad pair and too many fields.
        raise BadForm("", str(exc)) from exc
    form: dict[str, str] = {}
    for name, values in parsed.items():
        if not name:
            raise BadForm("", "a field without a name")
        if len(values) != 1:
            # Two values for one field (two decisions) must not be settled by a guess.
            raise BadForm(name, "the field is repeated")
        form[name] = values[0]
    return form


def chosen_answer(form: Mapping[str, str]) -> str:
    """A question form's answer: the free text when written, else the chosen option.

    Raises:
        BadForm: neither an option was chosen nor an answer written.
    """
    written = form.get("answer", "").strip()
    if written:
        return written
    choice = form.get("choice", "")
    if choice.strip():
        return choice
    raise BadForm("answer", "choose an option or write an answer")


def is_cross_site(headers: Mapping[str, str], host: str) -> bool:
    """Whether a POST was started by another site, so it must be refused.

    True when ``Sec-Fetch-Site`` is present and neither ``same-origin`` nor ``none``,
    or when ``Origin`` is present and names another host than ``host`` (the request's
    ``Host``; an opaque ``Origin: null`` counts as another host). Header names are
    matched without regard to case; a request with neither header passes, as it
    comes from a client that is not a browser acting for another site.
    """
    for name, value in headers.items():
        lowered = name.lower()
        if lowered == "sec-fetch-site" and value.strip().lower() not in _OWN_SITE:
            return True
        if lowered == "origin" and not _same_host(value.strip(), host):
            return True
    return False


def _same_host(origin: str, host: str) -> bool:
    parts = urlsplit(origin)
    default = _DEFAULT_PORTS.get(parts.scheme.lower())
    if default is None or not parts.hostname:
        return False
    try:
        own = urlsplit(f"//{host.strip()}")
        # A Host without a port is on the scheme's default port, as an Origin without one.
        return bool(own.hostname) and (own.hostname, own.port or default) == (
            parts.hostname,
            parts.port or default,
        )
    except ValueError:
        # An unparsable port on either side cannot be shown to match.
        return False
