"""``GET /playground``: a page to talk to the agents of the local stack and decide for them.

Pick an agent, send messages, watch each turn's events arrive over the SSE
stream (``signoff_dev.local.stream``), approve, deny or answer in a dialog — the
decision goes through the API's own approval and question routes, and the
open stream goes on to ``done``. The page, its script and its stylesheet are
files beside this module (``static/``), served as they are, with a policy
that allows only them.
"""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING, Final

from signoff_dev.local.gateway import HttpResponse

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff_dev.local.gateway import HttpRequest

__all__ = ["PLAYGROUND_PATH", "playground_routes"]

PLAYGROUND_PATH: Final = "/playground"
_FILES: Final = {
    PLAYGROUND_PATH: ("playground.html", "text/html; charset=utf-8"),
    "/playground.js": ("playground.js", "text/javascript; charset=utf-8"),
    "/playground.css": ("playground.css", "text/css; charset=utf-8"),
}
_HEADERS: Final = [
    (
        "content-security-policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
    ("cache-control", "no-store"),
]


def playground_routes() -> dict[tuple[str, str], Callable[[HttpRequest], HttpResponse]]:
    """``GET`` routes for the page and its two assets, for the gateway."""
    static = files("signoff_dev.local").joinpath("static")
    return {
        ("GET", path): _serving(
            HttpResponse(
                200, [("content-type", kind), *_HEADERS], static.joinpath(name).read_bytes()
            )
        )
        for path, (name, kind) in _FILES.items()
    }


def _serving(response: HttpResponse) -> Callable[[HttpRequest], HttpResponse]:
    def serve(_: HttpRequest) -> HttpResponse:
        return response

    return serve
