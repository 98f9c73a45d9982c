"""A strict reader of the protocol's SSE frames, for tests."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


def sse_events(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """Each frame's event; fails on anything but ``event: <type>`` + ``data: <json>`` + blank.

    Comment lines (``: ...``, the keep-alive) between frames are skipped.
    """
    frame: list[str] = []
    for line in lines:
        if line.startswith(":") and not frame:
            continue
        if line:
            frame.append(line)
            continue
        if not frame:
            continue
        assert len(frame) == 2, f"a frame is two lines, event and data: {frame!r}"
        name, data = frame
        assert name.startswith("event: ") and data.startswith("data: "), frame
        event: dict[str, Any] = json.loads(data.removeprefix("data: "))
        assert event["type"] == name.removeprefix("event: "), frame
        frame = []
        yield event
    assert not frame, f"the stream ended inside a frame: {frame!r}"
