"""The playground runs on the TypeScript client (``clients/typescript``): the local stack serves
its build as ``/signoff-client.js``, with the playground's strict policy, byte for byte what
``dist/client.js`` holds (``npm run build`` copies it; ``clients/typescript``'s own tests check
that dist/ is what the sources build), and the page's script is an ES module that imports it.
The chat example (``examples/chat``) is served beside it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.conftest import ROOT
from tests.support.local_stack import http as http
from tests.support.local_stack import stack as stack

if TYPE_CHECKING:
    import httpx

BUILT = ROOT / "clients" / "typescript" / "dist" / "client.js"


def test_the_stack_serves_the_clients_build_as_an_es_module(http: httpx.Client) -> None:
    served = http.get("/signoff-client.js")
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("text/javascript")
    assert "script-src 'self'" in served.headers["content-security-policy"]
    assert served.content == BUILT.read_bytes(), "run `npm run build` in clients/typescript"
    assert "export class Client" in served.text and "\nimport " not in served.text


def test_the_playground_is_a_module_on_the_client(http: httpx.Client) -> None:
    page = http.get("/playground").text
    assert '<script type="module" src="/playground.js"></script>' in page
    script = http.get("/playground.js").text
    assert 'import { Client, SignoffError } from "/signoff-client.js";' in script
    # every call to the API goes through the client: the page fetches only its own stack's route
    assert script.count("fetch(") == 1 and 'fetch("/_local/agents")' in script


def test_the_chat_example_is_served_beside_the_playground(http: httpx.Client) -> None:
    page = http.get("/examples/chat")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    script = http.get("/examples/chat/chat.js")
    assert script.status_code == 200
    assert script.content == (ROOT / "examples" / "chat" / "chat.js").read_bytes()
    assert 'from "/signoff-client.js"' in script.text
