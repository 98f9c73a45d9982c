"""The local stack refuses what a web page could make a browser send it.

A page the developer visits can aim requests at ``127.0.0.1``: by DNS rebinding
(its own name resolving to loopback, so the browser sends that name as
``Host`` and reads the answer), and by the "simple" cross-site requests a
browser sends without asking first (form posts, ``text/plain`` bodies). Each
test here sends what such a page would, over real HTTP, and checks the stack
refused it with ``{error, detail}`` and stored nothing of it.
"""

from __future__ import annotations

import json
import socket
import uuid
from typing import TYPE_CHECKING, Any

import pytest

from signoff.errors import UsageError
from signoff_dev.local.stack import StackSettings
from tests.support.local_stack import (
    REFUND,
    emulator_client,
    notification_for,
    pending_item,
)
from tests.support.local_stack import (
    http as http,
)
from tests.support.local_stack import (
    stack as stack,
)
from tests.support.stored_items import item_text

if TYPE_CHECKING:
    import httpx

    from signoff_dev.local.stack import LocalStack

EVIL = "http://evil.example"
MESSAGES = "/agents/customer-service/messages"
STREAM = "/agents/customer-service/messages/stream"
TRIGGER = "/_local/trigger"
# What a page can send cross-site without a CORS preflight (the "simple" content types).
SIMPLE_TYPES = [
    "text/plain",
    "text/plain;charset=UTF-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
]


def marker() -> str:
    return f"drive-by-{uuid.uuid4().hex}"


def tracking(mark: str) -> str:
    """A message the sample agent finishes at once (the scripted tracking scenario)."""
    return f"where is order A-1001? ({mark})"


def stored(stack: LocalStack, text: str) -> bool:
    """Whether any item of the stack's table holds ``text`` (a turn stores its message)."""
    dynamodb = emulator_client(stack, "dynamodb")
    pages = dynamodb.get_paginator("scan").paginate(
        TableName=stack.resources.tables["SignoffTable"], ConsistentRead=True
    )
    return any(text in item_text(item) for page in pages for item in page["Items"])


def assert_refused(response: httpx.Response, status: int) -> dict[str, Any]:
    """The gateway's refusal: the status, the API's JSON error shape, no CORS grant."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body: dict[str, Any] = response.json()
    assert isinstance(body["error"], str) and isinstance(body["detail"], str) and body["detail"]
    assert not any(name.startswith("access-control-") for name in response.headers)
    return body


def port_of(stack: LocalStack) -> int:
    return int(stack.url.rsplit(":", 1)[1])


def paused_link(http: httpx.Client) -> tuple[str, str]:
    """(pending id, link URL) of a fresh production refund waiting on a person."""
    paused = http.post(MESSAGES, json={"message": REFUND}).json()
    return paused["id"], notification_for(http, paused["id"])["notification"]["linkUrl"]


def raw_status(stack: LocalStack, head: str) -> tuple[int, bytes]:
    """Send ``head`` (request line and headers) as it is; the status and the raw answer."""
    with socket.create_connection(("127.0.0.1", port_of(stack)), timeout=10) as conn:
        conn.sendall(head.encode() + b"\r\n")
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1]), answer


# -- 1. loopback only -------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com", ""])
def test_the_stack_refuses_to_listen_beyond_loopback(host: str) -> None:
    with pytest.raises(UsageError, match="loopback"):
        StackSettings(host=host)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost"])
def test_the_stack_listens_on_a_loopback_address(host: str) -> None:
    assert StackSettings(host=host).host == host


def test_the_running_stack_is_bound_to_loopback(stack: LocalStack) -> None:
    with socket.create_connection(("127.0.0.1", port_of(stack)), timeout=5) as conn:
        assert conn.getpeername()[0] == "127.0.0.1"
    assert stack.url.startswith("http://127.0.0.1:")


# -- 2. DNS rebinding: a Host that is not this stack on loopback ------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "evil.example:{port}",
        "evil.example",
        "127.0.0.1.evil.example:{port}",
        "localhost.evil.example:{port}",
        "127.0.0.1:{other}",
        "localhost",
        "127.0.0.1:{port}@evil.example",
        "",
    ],
)
def test_a_foreign_host_cannot_read_the_resume_tokens(
    stack: LocalStack, http: httpx.Client, host: str
) -> None:
    # given a notification with its resume token in the sink
    pending_id, link = paused_link(http)
    token = link.rsplit("/", 1)[1]
    port = port_of(stack)
    # when a rebound page asks for the list under its own name
    answer = http.get(
        "/_local/notifications", headers={"host": host.format(port=port, other=port + 1)}
    )
    # then it is refused and no token is in the answer
    assert_refused(answer, 403)
    assert token not in answer.text and pending_id not in answer.text


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/_local/emails"),
        ("GET", "/agents"),
        ("GET", "/playground"),
        ("GET", "/openapi.json"),
        ("GET", "/no/such/route"),
    ],
)
def test_a_foreign_host_is_refused_on_every_route(
    stack: LocalStack, http: httpx.Client, method: str, path: str
) -> None:
    answer = http.request(method, path, headers={"host": f"evil.example:{port_of(stack)}"})
    assert_refused(answer, 403)


@pytest.mark.parametrize(
    ("path", "event"),
    [
        (MESSAGES, None),
        (STREAM, None),
        (TRIGGER, {"agent": "customer-service", "tenant": "acme-corp"}),
    ],
)
def test_a_rebound_page_cannot_start_a_turn_even_with_json(
    stack: LocalStack, http: httpx.Client, path: str, event: dict[str, str] | None
) -> None:
    # A rebound page is same-origin to the browser: it may send JSON and any header.
    mark = marker()
    body = {**event, "message": tracking(mark)} if event else {"message": tracking(mark)}
    answer = http.post(path, json=body, headers={"host": f"evil.example:{port_of(stack)}"})
    assert_refused(answer, 403)
    assert not stored(stack, mark)


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:{port}",
        "localhost:{port}",
        "app.localhost:{port}",
        "127.9.8.7:{port}",
        "[::1]:{port}",
    ],
)
def test_a_loopback_host_with_the_stacks_port_is_served(
    stack: LocalStack, http: httpx.Client, host: str
) -> None:
    answer = http.get("/_local/notifications", headers={"host": host.format(port=port_of(stack))})
    assert answer.status_code == 200, answer.text


def test_a_request_without_a_host_is_refused(stack: LocalStack) -> None:
    status, answer = raw_status(
        stack, "GET /_local/notifications HTTP/1.1\r\nConnection: close\r\n"
    )
    assert status == 403 and b"resumeToken" not in answer


def test_a_request_naming_two_hosts_is_refused(stack: LocalStack) -> None:
    status, answer = raw_status(
        stack,
        f"GET /_local/notifications HTTP/1.1\r\nHost: 127.0.0.1:{port_of(stack)}\r\n"
        "Host: evil.example\r\nConnection: close\r\n",
    )
    assert status == 403 and b"resumeToken" not in answer


# -- 3. state-changing requests need JSON, or a same-origin form ------------------------------


@pytest.mark.parametrize("content_type", SIMPLE_TYPES)
@pytest.mark.parametrize("path", [MESSAGES, STREAM])
def test_a_simple_cross_site_post_starts_no_turn(
    stack: LocalStack, http: httpx.Client, path: str, content_type: str
) -> None:
    # given the JSON a page smuggles in a text/plain form (enctype="text/plain")
    mark = marker()
    body = json.dumps({"message": tracking(mark)})
    # when it is posted with a simple content type, as a browser posts it
    cross_site = http.post(
        path,
        content=body,
        headers={"content-type": content_type, "origin": EVIL, "sec-fetch-site": "cross-site"},
    )
    # and as a browser that sends neither Origin nor Sec-Fetch-Site would
    unmarked = http.post(path, content=body, headers={"content-type": content_type})
    # then both are refused and no turn ran
    assert_refused(cross_site, 403)
    assert_refused(unmarked, 415)
    assert not stored(stack, mark)


@pytest.mark.parametrize("content_type", [*SIMPLE_TYPES, None])
def test_a_cross_site_trigger_does_not_run_an_agent_as_another_tenant(
    stack: LocalStack, http: httpx.Client, content_type: str | None
) -> None:
    # acme-corp's rules let a production refund run without a sign-off
    mark = marker()
    event = {"agent": "customer-service", "message": f"{REFUND} {mark}", "tenant": "acme-corp"}
    headers = {"content-type": content_type} if content_type else {}
    answer = http.post(TRIGGER, content=json.dumps(event), headers=headers)
    assert_refused(answer, 415)
    assert not stored(stack, mark)


def test_a_json_post_from_another_site_is_refused(stack: LocalStack, http: httpx.Client) -> None:
    # A browser sends JSON cross-site only after a preflight the stack never grants;
    # the Origin it carries is refused as well.
    mark = marker()
    answer = http.post(MESSAGES, json={"message": tracking(mark)}, headers={"origin": EVIL})
    assert_refused(answer, 403)
    assert not stored(stack, mark)


def test_a_preflight_is_granted_nothing(stack: LocalStack, http: httpx.Client) -> None:
    preflight = http.options(
        MESSAGES,
        headers={
            "origin": EVIL,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type",
        },
    )
    assert not any(name.startswith("access-control-") for name in preflight.headers)


def test_json_from_a_client_and_from_the_page_itself_is_served(
    stack: LocalStack, http: httpx.Client
) -> None:
    plain_mark, page_mark = marker(), marker()
    plain = http.post(MESSAGES, json={"message": tracking(plain_mark)})
    assert plain.status_code == 200, plain.text
    own_page = http.post(
        MESSAGES,
        json={"message": tracking(page_mark)},
        headers={"origin": stack.url, "sec-fetch-site": "same-origin"},
    )
    assert own_page.status_code == 200, own_page.text
    assert "access-control-allow-origin" not in own_page.headers
    # the turns' messages are found where the refusals above look for theirs
    assert stored(stack, plain_mark) and stored(stack, page_mark)


def test_a_one_click_link_posted_without_a_body_is_served(
    stack: LocalStack, http: httpx.Client
) -> None:
    # A webhook receiver POSTs approveUrl as it is: no body, no content type.
    paused = http.post(MESSAGES, json={"message": REFUND}).json()
    url = notification_for(http, paused["id"])["notification"]["denyUrl"]
    answer = http.post(url)
    assert answer.status_code == 200, answer.text
    assert pending_item(stack, paused["id"])["status"]["S"] == "denied"


def test_a_bodiless_post_from_another_site_is_refused(
    stack: LocalStack, http: httpx.Client
) -> None:
    # fetch(approveUrl, {method: "POST", mode: "no-cors"}) sends no content type.
    paused = http.post(MESSAGES, json={"message": REFUND}).json()
    url = notification_for(http, paused["id"])["notification"]["approveUrl"]
    answer = http.post(url, headers={"origin": EVIL, "sec-fetch-site": "cross-site"})
    assert_refused(answer, 403)
    assert pending_item(stack, paused["id"])["status"]["S"] == "pending"


# -- the link page's form -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {},  # neither Origin nor Referer: nothing shows it came from its page
        {"referer": f"{EVIL}/a/x"},
        {"origin": "null"},
        {"sec-fetch-site": "same-site"},
        {"origin": "http://127.0.0.1:1"},
    ],
)
def test_a_link_form_not_shown_to_come_from_its_page_is_refused(
    stack: LocalStack, http: httpx.Client, headers: dict[str, str]
) -> None:
    pending_id, link = paused_link(http)
    form = {"token": link.rsplit("/", 1)[1], "decision": "approve"}
    answer = http.post(link, data=form, headers=headers)
    # refused with the link pages' own error page, as the route documents its 403
    assert answer.status_code == 403, answer.text
    assert answer.headers["content-type"].startswith("text/html") and "Refused" in answer.text
    assert pending_item(stack, pending_id)["status"]["S"] == "pending"


@pytest.mark.parametrize(
    "same_origin",
    [
        lambda stack, link: {"origin": stack.url},
        lambda stack, link: {"referer": link},  # a browser that sent no Origin
        lambda stack, link: {"sec-fetch-site": "same-origin"},
    ],
    ids=["origin", "referer", "sec-fetch-site"],
)
def test_a_link_form_from_its_own_page_decides(
    stack: LocalStack, http: httpx.Client, same_origin: Any
) -> None:
    pending_id, link = paused_link(http)
    form = {"token": link.rsplit("/", 1)[1], "decision": "deny"}
    answer = http.post(link, data=form, headers=same_origin(stack, link))
    assert answer.status_code == 200, answer.text
    assert pending_item(stack, pending_id)["status"]["S"] == "denied"


# -- vendor callbacks: signed form posts from servers -------------------------------------------


def test_a_slack_form_post_reaches_its_signature_check(http: httpx.Client) -> None:
    # Slack posts a form, with no Origin: the function answers (401: not signed).
    answer = http.post("/slack/interactions", data={"payload": "{}"})
    assert answer.status_code == 401, answer.text


def test_a_slack_form_post_from_a_page_is_refused(http: httpx.Client) -> None:
    answer = http.post("/slack/interactions", data={"payload": "{}"}, headers={"origin": EVIL})
    assert_refused(answer, 403)


# -- 4. /_local/* is not reachable cross-site ---------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": EVIL},
        {"origin": "null"},
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},  # another port on loopback is the same site
        {"origin": EVIL, "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors"},
    ],
)
@pytest.mark.parametrize("path", ["/_local/notifications", "/_local/emails"])
def test_the_local_lists_are_not_readable_cross_site(
    stack: LocalStack, http: httpx.Client, path: str, headers: dict[str, str]
) -> None:
    paused_link(http)
    answer = http.get(path, headers=headers)
    assert_refused(answer, 403)
    assert "resumeToken" not in answer.text and "/a/" not in answer.text


@pytest.mark.parametrize(
    "headers",
    [{}, {"sec-fetch-site": "none"}, {"sec-fetch-site": "same-origin"}, {"origin": "{url}"}],
)
def test_the_local_lists_open_in_the_developers_own_browser(
    stack: LocalStack, http: httpx.Client, headers: dict[str, str]
) -> None:
    sent = {name: value.format(url=stack.url) for name, value in headers.items()}
    assert http.get("/_local/notifications", headers=sent).status_code == 200


def test_the_sink_refuses_a_delivery_from_a_page(http: httpx.Client) -> None:
    before = len(http.get("/_local/notifications").json()["notifications"])
    answer = http.post(
        "/_local/webhook",
        content=json.dumps({"kind": "approval"}),
        headers={"content-type": "text/plain", "origin": EVIL},
    )
    assert_refused(answer, 403)
    assert len(http.get("/_local/notifications").json()["notifications"]) == before
