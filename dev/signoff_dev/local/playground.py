"""``GET /playground``: a page to talk to the agents of the local stack and decide for them.

Pick an agent, send messages, watch each turn's events arrive over the SSE
stream (``signoff_dev.local.stream``), approve, deny or answer in a dialog — the
decision goes through the API's own approval and question routes, and the
open stream goes on to ``done``. The page, its script and its stylesheet are
files beside this module (``static/``), served as they are, with a policy
that allows only them. The script is an ES module on the TypeScript client,
``/signoff-client.js``: the build of ``clients/typescript`` (``npm run build``
copies it to ``static/``; a test fails when the copy is not the build), so the
page needs no Node.js to run.

``/examples/chat`` serves the minimal chat example of the checkout the stack
runs from (``examples/chat/``: a page and its script on the same client), when
there is one.

``GET /_local/agents`` tells the page what is wrong with each misconfigured
agent (``file:line: field: problem``, as ``signoff check`` says it), and each
healthy agent's rule warnings (``warnings``: a rule for a tool it lacks — it
still serves): ``GET /agents`` only marks a broken agent, since a deployed API
never shows a client its configuration; this stack is the author's own, on
loopback.
"""

from __future__ import annotations

import json
import os
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Final

from signoff_dev.local.gateway import HttpResponse

if TYPE_CHECKING:
    from collections.abc import Callable

    from signoff_dev.local.gateway import HttpRequest

__all__ = [
    "AGENT_PROBLEMS_PATH",
    "CHAT_EXAMPLE_PATH",
    "PLAYGROUND_PATH",
    "agent_status",
    "playground_routes",
]

PLAYGROUND_PATH: Final = "/playground"
AGENT_PROBLEMS_PATH: Final = "/_local/agents"
_FILES: Final = {
    PLAYGROUND_PATH: ("playground.html", "text/html; charset=utf-8"),
    "/playground.js": ("playground.js", "text/javascript; charset=utf-8"),
    "/playground.css": ("playground.css", "text/css; charset=utf-8"),
    "/signoff-client.js": ("signoff-client.js", "text/javascript; charset=utf-8"),
}
CHAT_EXAMPLE_PATH: Final = "/examples/chat"
_CHAT_EXAMPLE: Final = {
    CHAT_EXAMPLE_PATH: ("index.html", "text/html; charset=utf-8"),
    f"{CHAT_EXAMPLE_PATH}/chat.js": ("chat.js", "text/javascript; charset=utf-8"),
}
_HEADERS: Final = [
    (
        # connect-src: the page calls the API whose base URL the person typed in (a
        # deployed stack's too); scripts, styles and forms stay this origin's only.
        "content-security-policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self' http: https:; "
        "form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
    ("cache-control", "no-store"),
]


def playground_routes(
    examples: Path | None = None,
) -> dict[tuple[str, str], Callable[[HttpRequest], HttpResponse]]:
    """``GET`` routes for the page and its assets, for the gateway; with ``examples`` (a
    checkout's ``examples/`` folder), the chat example's too, when it has one."""
    static = files("signoff_dev.local").joinpath("static")
    routes = {
        ("GET", path): _file(kind, static.joinpath(name).read_bytes())
        for path, (name, kind) in _FILES.items()
    }
    chat = None if examples is None else examples / "chat"
    if chat is not None and (chat / "index.html").is_file():
        for path, (name, kind) in _CHAT_EXAMPLE.items():
            routes[("GET", path)] = _file(kind, (chat / name).read_bytes())
    routes[("GET", AGENT_PROBLEMS_PATH)] = _problems
    return routes


def _file(kind: str, body: bytes) -> Callable[[HttpRequest], HttpResponse]:
    return _serving(HttpResponse(200, [("content-type", kind), *_HEADERS], body))


def agent_status(root: Path) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Each misconfigured agent under ``root`` and what is wrong, and each healthy
    agent's rule warnings, all ``file:line: …``."""
    from signoff.agents import AgentCatalog
    from signoff_dev.lines import located, warning_at

    # A new catalog each time: an agent fixed (or broken) since the last look shows so.
    catalog = AgentCatalog(root)
    problems = catalog.problems()
    warnings: dict[str, list[str]] = {}
    for name in catalog.names():
        if name not in problems and (agent := catalog.get(name)).warnings:
            warnings[name] = [warning_at(str(agent.rules_file), w) for w in agent.warnings]
    located_problems = {
        name: located(problem.file, problem.field, problem.problem)
        for name, problem in problems.items()
    }
    return located_problems, warnings


def _problems(_: HttpRequest) -> HttpResponse:
    # The functions' own agents folder: the stack exports it for them.
    root = Path(os.environ.get("SIGNOFF_AGENTS_DIR", "agents"))
    problems, warnings = agent_status(root)
    body = json.dumps({"problems": problems, "warnings": warnings}, ensure_ascii=False).encode()
    return HttpResponse(200, [("content-type", "application/json"), *_HEADERS], body)


def _serving(response: HttpResponse) -> Callable[[HttpRequest], HttpResponse]:
    def serve(_: HttpRequest) -> HttpResponse:
        return response

    return serve
