"""``POST /_local/trigger``: run an agent's schedule once, as EventBridge would, on request.

The body is the scheduled run's event, ``{"agent", "message", "tenant"}`` — what
the template's ``Schedule`` event puts in ``Input`` and EventBridge passes to
the function unchanged. The route invokes the function that carries those
schedules (the message function) with exactly that event and answers 200 with
the handler's result as JSON (``{"sessionId", "status"}``). Refusals are the
API's ``{error, detail}``: a body that is not JSON a 415, one that is not such
an event (or not strict, bounded JSON, as the API reads it) a 400, an agent
the stack does not have a 404, and a handler that raises a 500 naming the error.
Like the sink's routes it is local-only: the template has no such route, and
nothing deployed serves it. ``signoff trigger <agent>`` is its client.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from signoff.api.body import JSON, read_body
from signoff.api.errors import error_payload
from signoff.errors import MalformedRequest, SignoffError
from signoff_dev.local.gateway import HttpRequest, HttpResponse

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff_dev.local.functions import LocalFunction

__all__ = ["TRIGGER_PATH", "run_trigger", "scheduled_function", "trigger_routes"]

TRIGGER_PATH: Final = "/_local/trigger"
_FIELDS: Final = ("agent", "message", "tenant")


def scheduled_function(functions: dict[str, LocalFunction]) -> LocalFunction | None:
    """The function whose ``Schedule`` events carry an ``Input`` (an agent's run), if any."""
    for function in functions.values():
        for event in function.spec.events.values():
            if event["Type"] in ("Schedule", "ScheduleV2") and "Input" in event["Properties"]:
                return function
    return None


def trigger_routes(
    function: LocalFunction | None,
) -> dict[tuple[str, str], Callable[[HttpRequest], HttpResponse]]:
    """The trigger's local-only route, for the gateway (none without a scheduled function)."""
    if function is None:
        return {}

    def trigger(request: HttpRequest) -> HttpResponse:
        try:
            event = _scheduled_run(request)
            result = function.invoke(event)
        except SignoffError as exc:  # a refused body, an unknown agent: the API's 4xx
            status, body = error_payload(exc)
            if status < 500:
                return HttpResponse.json(status, body)
            return _failed(function, exc)
        except Exception as exc:  # the invocation failed, as Lambda would report it
            return _failed(function, exc)
        return HttpResponse.json(200, result)

    return {("POST", TRIGGER_PATH): trigger}


def _scheduled_run(request: HttpRequest) -> dict[str, str]:
    """The scheduled run's event a request carries.

    Raises:
        UnsupportedMediaType, MalformedRequest: the body is not strict, bounded JSON.
        MalformedRequest: it is not an object of exactly the run's fields, all strings.
    """
    text = (
        read_body(request.body, request.header("content-type"), (JSON,)) if request.body else "{}"
    )
    event: Any = json.loads(text)
    if not isinstance(event, dict) or set(event) != set(_FIELDS):
        raise MalformedRequest(f"the body must be an object with exactly {', '.join(_FIELDS)}")
    if not all(isinstance(event[name], str) and event[name] for name in _FIELDS):
        raise MalformedRequest(f"{', '.join(_FIELDS)} must be strings")
    return {name: event[name] for name in _FIELDS}


def _failed(function: LocalFunction, exc: Exception) -> HttpResponse:
    detail = f"{function.name} failed: {type(exc).__name__}: {exc}"
    return HttpResponse.json(500, {"error": "internal_error", "detail": detail})


def run_trigger(base_url: str, agent: str, event: dict[str, str]) -> tuple[Any, str | None]:
    """Ask the stack at ``base_url`` to run ``event``; its result and the session's final text.

    Raises:
        SignoffError: no stack answers there, or the run failed.
    """
    import httpx

    from signoff.errors import SignoffError

    def parsed(response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError:
            return None

    try:
        with httpx.Client(base_url=base_url, timeout=300.0) as http:
            answer = http.post(TRIGGER_PATH, json=event)
            result = parsed(answer)
            if answer.status_code != 200:
                error = result.get("detail") if isinstance(result, dict) else answer.text[:300]
                raise SignoffError(f"the run of {agent} failed ({answer.status_code}): {error}")
            session = result.get("sessionId") if isinstance(result, dict) else None
            text = None
            if session:
                status = parsed(http.get(f"/agents/{agent}/sessions/{session}"))
                if isinstance(status, dict) and status.get("text"):
                    text = str(status["text"])
            return result, text
    except httpx.HTTPError as exc:
        raise SignoffError(
            f"no local stack answered at {base_url} ({exc}): start one with `signoff dev`"
        ) from exc
