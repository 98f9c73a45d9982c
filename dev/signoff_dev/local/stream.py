"""The local stack's ``POST /agents/{name}/messages/stream``: the layer's stream, in the gateway.

The stream itself is ``signoff.api.stream.TurnStream``, the code the deployed
stream function serves (``signoff.api.stream_server``); this adapter only
hands it the gateway's request and gives its answer back as the gateway's
response, with the services of the function that serves
``POST /agents/{name}/messages``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from signoff.api import stream
from signoff_dev.local.gateway import HttpRequest, HttpResponse
from signoff_dev.local.router import Route

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Mapping

    from signoff.api.context import Api

__all__ = ["TurnStream"]


class TurnStream:
    """The stream route of the local gateway."""

    def __init__(
        self, api: Callable[[], Api], *, stopping: threading.Event, log: Callable[[str], None]
    ) -> None:
        self._stream = stream.TurnStream(api, stopping=stopping, log=log)

    @property
    def route(self) -> Route:
        return Route(function="local", method="POST", path=stream.STREAM_PATH)

    def serve(self, request: HttpRequest, parameters: Mapping[str, str]) -> HttpResponse:
        answer = self._stream.serve(parameters["name"], request.body, request.headers)
        return HttpResponse(answer.status, list(answer.headers), answer.body, answer.frames)
