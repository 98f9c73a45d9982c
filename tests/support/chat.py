"""What the chat-app channel tests (Slack, Lark) share: sample notifications, fixtures
and the strategy that fuzzes their inbound parsers.

Import the fixtures by name into a test module (``from tests.support.chat import
http as http``) to use them there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import pytest
from hypothesis import strategies as st

from signoff.channels.notification import Notification
from tests.support.aws import free_port
from tests.support.http_server import RecordingServer

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

__all__ = [
    "APPROVAL",
    "EXPIRES",
    "QUESTION",
    "http",
    "json_values",
    "nothing_listening",
    "server",
]

EXPIRES = "2026-01-01T01:00:00.000Z"

APPROVAL = Notification(
    kind="approval",
    agent="billing",
    run_id="run_01",
    title="Approve refund_payment?",
    body="The agent wants to refund order 1042.",
    pending_id="pend_01",
    tenant="acme",
    tool="refund_payment",
    args={"order": 1042, "amount": "12.50"},
    expires_at=EXPIRES,
    link_url="https://signoff.example/a/tok",
)

QUESTION = Notification(
    kind="question",
    agent="billing",
    run_id="run_01",
    title="The agent has a question",
    body="Which account?",
    question="Which account should be refunded?",
    options=["Checking", "Savings"],
    pending_id="pend_02",
    answer_url="https://signoff.example/a/answer-tok",
)


def json_values(keys: Sequence[str], *, max_size: int, max_leaves: int) -> st.SearchStrategy[Any]:
    """Any JSON value, its objects keyed by ``keys`` (the names a parser looks for)."""
    return st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.sampled_from(keys), inner, max_size=max_size)
        ),
        max_leaves=max_leaves,
    )


def nothing_listening() -> str:
    """A base URL on loopback where a connection is refused."""
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    """The vendor API, played by a recording server on loopback."""
    with RecordingServer() as running:
        yield running


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    """The HTTP client the channel is given."""
    with httpx.Client(timeout=5) as client:
        yield client
