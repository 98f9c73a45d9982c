"""Hostile requests to the local stack over HTTP: bad framing, bad bytes, bad JSON and
unknown methods get a clear 4xx with the API's error shape, never a 500 or a dropped
connection, and change nothing."""

from __future__ import annotations

import json
import socket
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from tests.support.local_stack import emulator_client
from tests.support.local_stack import http as http
from tests.support.local_stack import stack as stack

if TYPE_CHECKING:
    import httpx

    from signoff_dev.local.stack import LocalStack

DEEP = b"[" * 5000 + b"]" * 5000
LONG_NUMBER = b"9" * 5000
JSON_TYPE = {"content-type": "application/json"}


def raw_exchange(stack: LocalStack, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` as is on a fresh connection; the status, headers and body read back."""
    url = urlsplit(stack.url)
    with socket.create_connection((url.hostname, url.port), timeout=40) as conn:
        conn.sendall(request)
        conn.shutdown(socket.SHUT_WR)  # a short body stays short: the client is done
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    return status, headers, body


def framed(stack: LocalStack, *headers: str, body: bytes = b"") -> bytes:
    host = urlsplit(stack.url).netloc
    lines = ["POST /agents/customer-service/messages HTTP/1.1", f"Host: {host}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


MESSAGE = b'{"message": "hi"}'
FRAMING = [
    (
        "a Content-Length that is no number",
        ["Content-Type: application/json", "Content-Length: abc"],
    ),
    ("a negative Content-Length", ["Content-Type: application/json", "Content-Length: -1"]),
    (
        "two different Content-Lengths",
        ["Content-Type: application/json", "Content-Length: 17", "Content-Length: 5"],
    ),
    (
        "Content-Length with Transfer-Encoding",
        ["Content-Type: application/json", "Content-Length: 17", "Transfer-Encoding: chunked"],
    ),
    (
        "a malformed chunk size",
        ["Content-Type: application/json", "Transfer-Encoding: chunked"],
    ),
    (
        "gzip Transfer-Encoding",
        ["Content-Type: application/json", "Transfer-Encoding: gzip, chunked"],
    ),
    (
        "a body shorter than its Content-Length",
        ["Content-Type: application/json", "Content-Length: 99"],
    ),
]


@pytest.mark.parametrize("headers", [f[1] for f in FRAMING], ids=[f[0] for f in FRAMING])
def test_a_body_whose_end_cannot_be_known_is_a_400_and_starts_no_turn(
    stack: LocalStack, http: httpx.Client, headers: list[str]
) -> None:
    before = _sessions(stack)
    status, response_headers, body = raw_exchange(stack, framed(stack, *headers, body=MESSAGE))
    assert status == 400, body
    assert response_headers["content-type"] == "application/json"
    assert set(json.loads(body)) >= {"error", "detail"}
    assert _sessions(stack) == before


def test_a_chunked_body_is_read_as_api_gateway_reads_it(stack: LocalStack) -> None:
    chunked = b"5\r\n" + MESSAGE[:5] + b"\r\n" + b"c\r\n" + MESSAGE[5:] + b"\r\n0\r\n\r\n"
    headers = ["Content-Type: application/json", "Transfer-Encoding: chunked"]
    status, _, body = raw_exchange(stack, framed(stack, *headers, body=chunked))
    assert status == 200, body
    assert json.loads(body)["sessionId"]


def test_an_unknown_method_is_a_405_with_allow(stack: LocalStack) -> None:
    host = urlsplit(stack.url).netloc
    status, headers, body = raw_exchange(
        stack, f"FOO /agents HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n".encode()
    )
    assert status == 405 and headers["allow"] == "GET"
    assert json.loads(body)["error"] == "method_not_allowed"


BODIES: list[tuple[str, str, bytes, dict[str, str], int]] = [
    (
        "message, not UTF-8",
        "/agents/customer-service/messages",
        b'{"message": "\xff"}',
        JSON_TYPE,
        400,
    ),
    ("message, nested 5,000 deep", "/agents/customer-service/messages", DEEP, JSON_TYPE, 400),
    (
        "message, a 5,000-digit number",
        "/agents/customer-service/messages",
        b'{"message": "hi", "n": ' + LONG_NUMBER + b"}",
        JSON_TYPE,
        400,
    ),
    (
        "stream, not UTF-8",
        "/agents/customer-service/messages/stream",
        b'{"message": "\xff"}',
        JSON_TYPE,
        400,
    ),
    ("stream, nested 5,000 deep", "/agents/customer-service/messages/stream", DEEP, JSON_TYPE, 400),
    ("trigger, not UTF-8", "/_local/trigger", b'{"agent": "\xff"}', JSON_TYPE, 400),
    ("trigger, nested 5,000 deep", "/_local/trigger", DEEP, JSON_TYPE, 400),
    (
        "trigger, a 5,000-digit number",
        "/_local/trigger",
        b'{"agent": "customer-service", "message": "hi", "tenant": ' + LONG_NUMBER + b"}",
        JSON_TYPE,
        400,
    ),
    ("approve, not UTF-8", "/approvals/x/approve", b"\xff\xfe", JSON_TYPE, 400),
    ("lark, nested 5,000 deep", "/lark/callback", DEEP, JSON_TYPE, 400),
]


@pytest.mark.parametrize(
    ("path", "content", "headers", "status"),
    [b[1:] for b in BODIES],
    ids=[b[0] for b in BODIES],
)
def test_bad_bytes_and_bad_json_are_a_400_with_the_error_shape(
    stack: LocalStack,
    http: httpx.Client,
    path: str,
    content: bytes,
    headers: dict[str, str],
    status: int,
) -> None:
    before = _sessions(stack)
    answer = http.post(path, content=content, headers=headers)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    assert set(answer.json()) >= {"error", "detail"}
    assert _sessions(stack) == before


def test_the_link_form_with_bad_bytes_is_an_html_400(stack: LocalStack, http: httpx.Client) -> None:
    answer = http.post(
        "/a/not-a-token",
        content=b"decision=approve&x=\xff",
        headers={"content-type": "application/x-www-form-urlencoded", "origin": stack.url},
    )
    assert answer.status_code == 400
    assert answer.headers["content-type"].startswith("text/html")


def _sessions(stack: LocalStack) -> Any:
    """How many session records the stack's table holds (a started turn adds one)."""
    dynamodb = emulator_client(stack, "dynamodb")
    table = stack.resources.tables["SignoffTable"]
    return dynamodb.scan(TableName=table, Select="COUNT")["Count"]
