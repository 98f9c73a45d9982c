"""The magic-link pages and their forms: HTML, one constant local-time script, no vendor SDK."""

from __future__ import annotations

from signoff.web.forms import chosen_answer, is_cross_site, parse_form
from signoff.web.pages import (
    PAGE_HEADERS,
    already_resolved_page,
    already_voted_page,
    confirmation_page,
    error_page,
    expired_page,
    outcome_page,
    view_page,
    vote_page,
)

__all__ = [
    "PAGE_HEADERS",
    "already_resolved_page",
    "already_voted_page",
    "chosen_answer",
    "confirmation_page",
    "error_page",
    "expired_page",
    "is_cross_site",
    "outcome_page",
    "parse_form",
    "view_page",
    "vote_page",
]
