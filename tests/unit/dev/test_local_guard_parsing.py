"""The local stack's guard on its own: the edge cases of Host, Origin and content type.

The e2e suite (tests/e2e/local_stack/test_local_guard.py) drives each attack over HTTP;
these pin the parsing a raw client can reach and a browser cannot.
"""

from __future__ import annotations

import pytest

from signoff.errors import UsageError
from signoff_dev.local.gateway import HttpRequest
from signoff_dev.local.guard import RequestGuard, check_listen_address, is_loopback_name
from signoff_dev.local.router import Route, RouteTable

PORT = 3000
GUARD = RequestGuard(
    PORT,
    RouteTable(
        [
            Route(function="fn", method="POST", path="/agents/{name}/messages"),
            Route(function="fn", method="POST", path="/approvals/{id}/approve"),
            Route(function="fn", method="POST", path="/a/{token}"),
            Route(function="fn", method="GET", path="/a/{token}"),
            Route(function="local", method="GET", path="/_local/notifications"),
        ]
    ),
)


def request(
    method: str, path: str, *headers: tuple[str, str], body: bytes = b"", host: str | None = None
) -> HttpRequest:
    sent = [("Host", f"127.0.0.1:{PORT}" if host is None else host), *headers]
    return HttpRequest(method, path, "", sent, body, "127.0.0.1", "HTTP/1.1")


def status(sent: HttpRequest) -> int | None:
    refused = GUARD(sent)
    return refused.status if refused is not None else None


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        (f"127.0.0.1:{PORT}", None),
        (f"LOCALHOST:{PORT}", None),
        (f"a.b.localhost:{PORT}", None),
        (f"[::1]:{PORT}", None),
        ("127.0.0.1:99999", 403),  # out of range: urlsplit raises
        ("127.0.0.1:abc", 403),
        (f"127.0.0.1:{PORT}:1", 403),
        (f"localhost.:{PORT}", 403),
        (f"127.1:{PORT}", 403),  # not an address a browser writes for loopback
        (f"[::ffff:8.8.8.8]:{PORT}", 403),
        (f"user@127.0.0.1:{PORT}", 403),
        (f"127.0.0.1:{PORT}/x", 403),
        (f"10.0.0.1:{PORT}", 403),
    ],
)
def test_the_host_must_name_loopback_with_the_stacks_port(host: str, expected: int | None) -> None:
    assert status(request("GET", "/a/x", host=host)) == expected


def test_a_host_without_a_port_is_on_port_80() -> None:
    on_80 = RequestGuard(80, GUARD.routes)
    assert on_80(request("GET", "/a/x", host="localhost")) is None
    assert status(request("GET", "/a/x", host="localhost")) == 403


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("application/json", b"{}", None),
        ("Application/JSON; charset=utf-8", b"{}", None),
        ("application/jsonp", b"{}", 415),
        ("text/plain; application/json", b"{}", 415),
        ("text/plain, application/json", b"{}", 415),
        (None, b"{}", 415),  # a body must say it is JSON
        (None, b"", None),  # a one-click link: no body, no type
        # A field-less cross-site form still sends its type: refused even when empty.
        ("application/x-www-form-urlencoded", b"", 415),
    ],
)
def test_a_post_needs_a_json_body_or_none(
    content_type: str | None, body: bytes, expected: int | None
) -> None:
    headers = [("Content-Type", content_type)] if content_type else []
    sent = request("POST", "/approvals/x/approve", *headers, body=body)
    assert status(sent) == expected


def test_a_repeated_origin_is_no_origin_of_ours() -> None:
    own = ("Origin", f"http://127.0.0.1:{PORT}")
    assert status(request("GET", "/_local/notifications", own)) is None
    evil = ("Origin", "http://evil.example")
    assert status(request("GET", "/_local/notifications", own, evil)) == 403


def test_methods_and_paths_no_route_serves_pass_to_the_gateways_own_answer() -> None:
    # 404 / 405 are the gateway's to give; nothing runs for them.
    assert status(request("DELETE", "/agents/x/messages", ("Content-Type", "text/plain"))) is None
    assert status(request("POST", "/nowhere", ("Content-Type", "text/plain"), body=b"x")) is None


def test_the_link_form_needs_a_sign_of_its_page() -> None:
    form = ("Content-Type", "application/x-www-form-urlencoded")
    page = f"http://127.0.0.1:{PORT}/a/x"
    assert status(request("POST", "/a/x", form, body=b"decision=approve")) == 403
    assert status(request("POST", "/a/x", form, ("Referer", page), body=b"a=b")) is None
    other_port = ("Referer", f"http://127.0.0.1:{PORT + 1}/a/x")
    assert status(request("POST", "/a/x", form, other_port, body=b"a=b")) == 403
    # Sec-Fetch-Site "none" is a typed URL or a bookmark: never a form's post.
    typed = ("Sec-Fetch-Site", "none")
    assert status(request("POST", "/a/x", form, typed, body=b"a=b")) == 403


@pytest.mark.parametrize("name", ["localhost", "x.localhost", "127.0.0.1", "127.255.0.9", "::1"])
def test_loopback_names(name: str) -> None:
    assert is_loopback_name(name)


@pytest.mark.parametrize("name", ["localhost.example", "0.0.0.0", "::", "evil", "128.0.0.1"])
def test_names_that_are_not_loopback(name: str) -> None:
    assert not is_loopback_name(name)


def test_only_ipv4_loopback_can_be_listened_on() -> None:
    check_listen_address("127.0.0.1")
    check_listen_address("localhost")
    for host in ("::1", "0.0.0.0", "127.0.0.1 ", "localhost.example"):
        with pytest.raises(UsageError):
            check_listen_address(host)
