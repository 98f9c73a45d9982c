"""The local stack in a test: started once per module, and what tests read from it."""

from __future__ import annotations

import io
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import boto3
import httpx
import pytest

from signoff_dev.local.stack import LocalStack, StackSettings

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

REFUND = "order A-1001 arrived broken, can you refund it?"
WAIT = 20.0


@contextmanager
def running_stack(agents: Path | None = None) -> Iterator[LocalStack]:
    """``signoff dev`` in this process, on free ports, its console kept quiet, serving
    ``agents`` (None: the sample agents); stopped on leaving."""
    console = io.StringIO()
    local = LocalStack(StackSettings(port=0, console=console, logs=console, agents=agents))
    local.start()
    try:
        yield local
    finally:
        local.stop()


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    """The sample agents on ``running_stack``, once per module."""
    with running_stack() as local:
        yield local


@pytest.fixture
def http(stack: LocalStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=WAIT) as client:
        yield client


def eventually(check: Callable[[], Any], what: str) -> Any:
    """The first truthy result of ``check`` within ``WAIT`` seconds."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def finished(http: httpx.Client, paused: dict[str, Any]) -> dict[str, Any]:
    """The status of ``paused``'s session once it is done (waits for it)."""
    status: dict[str, Any] = eventually(
        lambda: (s := http.get(paused["statusUrl"]).json())["status"] == "done" and s,
        "the session to finish",
    )
    return status


def notification_for(http: httpx.Client, pending_id: str) -> dict[str, Any]:
    """What the local webhook sink received for ``pending_id`` (waits for it)."""

    def find() -> dict[str, Any] | None:
        for received in http.get("/_local/notifications").json()["notifications"]:
            if received["notification"].get("pendingId") == pending_id:
                found: dict[str, Any] = received
                return found
        return None

    received: dict[str, Any] = eventually(find, f"the notification of {pending_id}")
    return received


def emulator_client(stack: LocalStack, service: str) -> Any:
    """A boto3 client of ``service`` on the stack's AWS emulator."""
    return boto3.client(
        service,
        endpoint_url=stack.aws_endpoint,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def pending_item(stack: LocalStack, pending_id: str) -> dict[str, Any]:
    """The pending item as stored in the emulator's table, read through boto3."""
    item: dict[str, Any] = emulator_client(stack, "dynamodb").get_item(
        TableName=stack.resources.tables["SignoffTable"],
        Key={"pk": {"S": f"P#{pending_id}"}, "sk": {"S": "META"}},
        ConsistentRead=True,
    )["Item"]
    return item


def link_item(stack: LocalStack, link: str) -> str:
    """The pending item a link's resume token is for (the token verified by the stack's key)."""
    token = link.rsplit("/", 1)[1]
    return stack.message_api().signer.verify(token, time.time()).pending_id


def email_for(stack: LocalStack, http: httpx.Client, pending_id: str) -> dict[str, Any]:
    """The captured email whose link is for ``pending_id`` (waits for it)."""

    def find() -> dict[str, Any] | None:
        for email in http.get("/_local/emails").json()["emails"]:
            if any(link_item(stack, link) == pending_id for link in email["links"]):
                found: dict[str, Any] = email
                return found
        return None

    email: dict[str, Any] = eventually(find, f"the email about {pending_id}")
    return email
