"""``SIGNOFF_*`` variables read without pydantic: what the deployment model and the
sweep's planner share.

The sweeper function only plans (``signoff.aws.sweep_schedule``) and reads two
variables, so its cold start reads them here and imports no pydantic (~75 ms of
its import); :class:`signoff.settings.Deployment` parses the same variables with the
same functions, so the two cannot disagree about a value.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Self

from signoff.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "DEFAULT_LISTING_SHARDS",
    "DEFAULT_SWEEP_SHARDS",
    "MAX_SHARDS",
    "PREFIX",
    "SWEEP_QUEUE_URL",
    "SWEEP_SHARDS",
    "SweepPlanning",
    "shard_count",
    "signoff_values",
]

PREFIX: Final = "SIGNOFF_"
SWEEP_QUEUE_URL: Final = "SIGNOFF_SWEEP_QUEUE_URL"
SWEEP_SHARDS: Final = "SIGNOFF_SWEEP_SHARDS"
DEFAULT_SWEEP_SHARDS: Final = 12
DEFAULT_LISTING_SHARDS: Final = 4
# template.yaml's MaxValue of both shard parameters: far above what docs/scale.md
# sizes (12 and 4 for 1,000 turns a second), and a typo's 10**20 is refused here
# instead of planning 4 x 10**20 tasks.
MAX_SHARDS: Final = 1000

# What the template's Number parameters pass: "12", and "12.0" from a float-typed
# override; nothing of int()'s wider syntax ("1_2", non-ASCII digits).
_WHOLE = re.compile(r"\+?([0-9]+)(?:\.0+)?")


def signoff_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The ``SIGNOFF_*`` variables of ``environ`` (the process's by default), stripped;
    an empty one counts as unset (a template parameter left blank)."""
    source = os.environ if environ is None else environ
    return {
        name: value.strip()
        for name, value in source.items()
        if name.startswith(PREFIX) and value.strip()
    }


def shard_count(value: object) -> int:
    """A shard count: a whole number from 1 to ``MAX_SHARDS``, as an int or its text.

    Raises:
        ValueError: anything else (the message says what is wanted).
    """
    if isinstance(value, str) and (whole := _WHOLE.fullmatch(value.strip())):
        digits = whole.group(1).lstrip("0") or "0"
        # past int()'s digit limit it would raise its own message; any such is too many
        value = int(digits) if len(digits) <= len(str(MAX_SHARDS)) else MAX_SHARDS + 1
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_SHARDS:
        return value
    raise ValueError(f"must be a whole number from 1 to {MAX_SHARDS}")


@dataclass(frozen=True)
class SweepPlanning:
    """What planning a sweep reads of the deployment: where its tasks go (None: the
    function runs them itself) and how many shards each job is spread over."""

    queue_url: str | None
    shards: int

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        """``SIGNOFF_SWEEP_QUEUE_URL`` and ``SIGNOFF_SWEEP_SHARDS`` of ``environ``.

        Raises:
            UsageError: the shard count is invalid; the message names the variable.
        """
        values = signoff_values(environ)
        try:
            shards = shard_count(values.get(SWEEP_SHARDS, DEFAULT_SWEEP_SHARDS))
        except ValueError as exc:
            raise UsageError(f"invalid deployment settings: {SWEEP_SHARDS}: {exc}") from exc
        return cls(values.get(SWEEP_QUEUE_URL), shards)
