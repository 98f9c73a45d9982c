"""How ``signoff run`` and ``signoff send`` print a turn's events: one printer for both.

With ``--json`` each event is one NDJSON line on stdout (the protocol's stream);
otherwise the events a person reads are rendered on stderr, coloured on a
terminal only, and the turn's final text goes to stdout.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from signoff.events import dump
from signoff_dev.cli.style import style_for
from signoff_dev.render import render, tone

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff.events import LoopEvent

__all__ = ["event_printer"]


def event_printer(as_json: bool) -> Callable[[LoopEvent], None]:
    """The sink that prints each event of a turn as it arrives."""
    paint = style_for(sys.stderr)

    def sink(event: LoopEvent) -> None:
        if as_json:
            print(json.dumps(dump(event), ensure_ascii=False), flush=True)
        elif (line := render(event)) is not None:
            print(paint(line, tone(event)), file=sys.stderr, flush=True)

    return sink
