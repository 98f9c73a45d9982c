"""The playground against an API without the stream (a deployed HTTP API without the stream
function): the message goes to the plain route and the turn's events come live from the
status route's long-poll (``?after=N&wait=S``); the API's base URL is a field of the page."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from signoff_dev.local.stack import LocalStack, StackSettings
from tests.browser.test_playground import (
    console_errors,
    dialog_open,
    event_types,
    open_playground,
    send,
    text_of,
)
from tests.support.local_stack import REFUND, WAIT

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from selenium.webdriver.chrome.webdriver import WebDriver

    from tests.browser.conftest import Launch


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    """The sample agents on a local stack that serves no SSE route."""
    console = io.StringIO()
    local = LocalStack(StackSettings(port=0, console=console, logs=console, stream=False))
    local.start()
    try:
        yield local
    finally:
        local.stop()


def test_a_stack_without_the_stream_has_no_stream_route(stack: LocalStack) -> None:
    answer = httpx.post(
        f"{stack.url}/agents/customer-service/messages/stream", json={"message": REFUND}
    )
    assert answer.status_code in (404, 405), answer.text


def test_without_the_stream_the_playground_follows_the_turn_by_long_poll(
    launch: Launch,
    stack: LocalStack,
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    driver = launch()
    open_playground(driver, stack, "customer-service")
    send(driver, REFUND)
    wait = WebDriverWait(driver, WAIT)
    # The turn's events up to its pause, live from the status route while it waits.
    wait.until(lambda d: dialog_open(d, "approval"))
    assert text_of(driver, "approval-tool") == "issue_refund"
    assert text_of(driver, "status") == "waiting for an approval"
    paused = event_types(driver)
    assert paused[0] == "session" and paused[-1] == "approval:pending"
    assert "tool:started" in paused and "done" not in paused
    session = text_of(driver, "session")
    status = httpx.get(f"{stack.url}/agents/customer-service/sessions/{session}").json()
    assert status["status"] == "paused"
    assert [event["type"] for event in status["events"]] == paused[1:]
    screenshot(driver, "playground-long-poll-approval")

    # The decision through the approval route; the long-poll carries the resumed turn.
    driver.find_element(By.ID, "approve").click()
    wait.until(lambda d: text_of(d, "status") == "done")
    final = driver.find_elements(By.CSS_SELECTOR, "#conversation li.final")
    assert [item.text for item in final] == [
        "Refunded 42.0 USD for order A-1001 to the original payment method."
    ]
    shown = event_types(driver)
    status = httpx.get(f"{stack.url}/agents/customer-service/sessions/{session}").json()
    # Every event of the session once, in order, between one session and one done.
    assert shown == ["session", *[event["type"] for event in status["events"]], "done"]
    # Chromium logs every 4xx it fetched: the stream's 404 and the new session's before its
    # message, which the page expects; nothing else (no script error).
    expected = ("/messages/stream - Failed to load", f"/sessions/{session}?after=")
    assert [e for e in console_errors(driver) if not any(x in e for x in expected)] == []


def test_the_playground_lists_the_agents_of_the_base_url_it_is_given(
    launch: Launch, stack: LocalStack
) -> None:
    driver = launch()
    open_playground(driver, stack, "customer-service")
    base = driver.find_element(By.ID, "base-url")
    assert base.get_attribute("placeholder") == stack.url  # empty: the page's own origin
    # Another base URL (nothing listens on the discard port): its agents are asked for there.
    base.send_keys("http://127.0.0.1:9/")
    driver.execute_script("arguments[0].dispatchEvent(new Event('change'))", base)
    wait = WebDriverWait(driver, WAIT)
    wait.until(lambda d: "listing the agents at http://127.0.0.1:9:" in text_of(d, "send-error"))
    # Back to the page's own API: its agents again.
    base.clear()
    driver.execute_script("arguments[0].dispatchEvent(new Event('change'))", base)
    wait.until(lambda d: text_of(d, "send-error") == "")
    wait.until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#agent option[value='customer-service']")
    )


def test_a_stream_url_that_cannot_be_reached_falls_back_to_long_poll(
    launch: Launch, stack: LocalStack
) -> None:
    driver = launch()
    open_playground(driver, stack, "customer-service")
    stream_url = driver.find_element(By.ID, "stream-url")
    assert stream_url.get_attribute("placeholder") == "the API base URL"
    # A stream function that is not there (nothing listens on the discard port): the
    # message never left, so it goes to the API's plain route and the turn is followed
    # by long-poll, as where no stream exists.
    stream_url.send_keys("http://127.0.0.1:9/")
    send(driver, REFUND)
    wait = WebDriverWait(driver, WAIT)
    wait.until(lambda d: dialog_open(d, "approval"))
    driver.find_element(By.ID, "approve").click()
    wait.until(lambda d: text_of(d, "status") == "done")
    session = text_of(driver, "session")
    status = httpx.get(f"{stack.url}/agents/customer-service/sessions/{session}").json()
    assert event_types(driver) == ["session", *[e["type"] for e in status["events"]], "done"]
    assert text_of(driver, "send-error") == ""
