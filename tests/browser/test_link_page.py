"""The approval landing page (``/a/{token}``) in a real browser: headless Chromium opens the
link a notification carries, shows the call, and its Approve / Deny buttons decide.

The local stack (``signoff dev`` in this process, on free ports) serves the pages; the link
comes from its webhook sink, which keeps each verified notification with its ``linkUrl``.
Screenshots of every page go to ``tests/browser/artifacts/``.
"""

from __future__ import annotations

import io
import json
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import boto3
import httpx
import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from signoff.local.stack import LocalStack, StackSettings

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from selenium.webdriver.chrome.webdriver import WebDriver

REFUND = "order A-1001 arrived broken, can you refund it?"
WAIT = 20.0


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    console = io.StringIO()
    local = LocalStack(StackSettings(port=0, console=console, logs=console))
    local.start()
    try:
        yield local
    finally:
        local.stop()


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


def pending_item(stack: LocalStack, pending_id: str) -> dict[str, Any]:
    """The pending item as stored in the emulator's table, read through boto3."""
    dynamodb = boto3.client(
        "dynamodb",
        endpoint_url=stack.aws_endpoint,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    item: dict[str, Any] = dynamodb.get_item(
        TableName=stack.resources.tables["SignoffTable"],
        Key={"pk": {"S": f"P#{pending_id}"}, "sk": {"S": "META"}},
        ConsistentRead=True,
    )["Item"]
    return item


def pause_a_refund(stack: LocalStack, http: httpx.Client) -> tuple[dict[str, Any], str]:
    """Sends the refund message; the paused answer and the link its notification carries."""
    sent = http.post("/agents/customer-service/messages", json={"message": REFUND})
    assert sent.status_code == 202, sent.text
    paused: dict[str, Any] = sent.json()
    assert paused["type"] == "approval" and paused["tool"] == "issue_refund"

    def notified() -> dict[str, Any] | None:
        for received in http.get("/_local/notifications").json()["notifications"]:
            if received["notification"].get("pendingId") == paused["id"]:
                found: dict[str, Any] = received["notification"]
                return found
        return None

    notification = eventually(notified, f"the notification of {paused['id']}")
    link = str(notification["linkUrl"])
    assert link.startswith(f"{stack.url}/a/")
    return paused, link


def details(driver: WebDriver) -> dict[str, str]:
    """The page's definition list as {term: text}."""
    terms = driver.find_elements(By.CSS_SELECTOR, "dl > dt")
    values = driver.find_elements(By.CSS_SELECTOR, "dl > dd")
    return {term.text: value.text for term, value in zip(terms, values, strict=True)}


def heading_becomes(driver: WebDriver, title: str) -> None:
    """Waits for the page (after a form's navigation) whose ``<h1>`` is ``title``."""

    def shown(d: WebDriver) -> bool:
        return bool(d.find_element(By.TAG_NAME, "h1").text == title)

    WebDriverWait(driver, WAIT, ignored_exceptions=[StaleElementReferenceException]).until(
        shown, f"the page titled {title!r}"
    )


def open_confirmation(
    driver: WebDriver, stack: LocalStack, paused: dict[str, Any], link: str
) -> None:
    """Opens the link; asserts the page shows the call and that the GET changed nothing."""
    driver.get(link)
    assert driver.find_element(By.TAG_NAME, "h1").text == "Approve or deny"
    assert "<script" not in driver.page_source.lower()
    shown = details(driver)
    assert shown["Tool"] == "issue_refund"
    assert shown["Agent"] == "customer-service"
    assert shown["Requested by"] == f"agent customer-service, session {paused['sessionId']}"
    arguments = json.loads(driver.find_element(By.TAG_NAME, "pre").text)
    assert arguments == {"orderId": "A-1001", "amount": 42.0}

    stored = pending_item(stack, paused["id"])
    assert stored["status"]["S"] == "pending"  # a GET decides nothing
    expires = datetime.fromtimestamp(float(stored["expires_at"]["N"]), tz=UTC)
    assert shown["Expires"] == f"{expires:%Y-%m-%d %H:%M} UTC"
    assert expires.timestamp() > time.time()
    assert driver.find_element(By.CSS_SELECTOR, "button[value=approve]").text == "Approve"
    assert driver.find_element(By.CSS_SELECTOR, "button[value=deny]").text == "Deny"


def session_status(http: httpx.Client, paused: dict[str, Any]) -> dict[str, Any]:
    status: dict[str, Any] = eventually(
        lambda: (s := http.get(paused["statusUrl"]).json())["status"] == "done" and s,
        "the session to finish",
    )
    return status


def test_the_emailed_link_shows_the_refund_and_approve_finishes_the_turn(
    stack: LocalStack,
    http: httpx.Client,
    launch: Callable[..., WebDriver],
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    paused, link = pause_a_refund(stack, http)
    driver = launch()

    open_confirmation(driver, stack, paused, link)
    screenshot(driver, "approve-1-confirmation-page")

    driver.find_element(By.CSS_SELECTOR, "button[value=approve]").click()
    heading_becomes(driver, "Approved")
    assert details(driver)["Status"] == "approved"
    assert details(driver)["Via"] == "link"
    assert "<script" not in driver.page_source.lower()
    screenshot(driver, "approve-2-outcome-approved")
    assert pending_item(stack, paused["id"])["status"]["S"] == "approved"
    assert session_status(http, paused)["text"].startswith("Refunded 42.0 USD for order A-1001")

    driver.get(link)
    assert driver.find_element(By.TAG_NAME, "h1").text == "Already decided"
    assert "already decided" in driver.find_element(By.TAG_NAME, "main").text
    assert details(driver)["Status"] == "approved"
    assert not driver.find_elements(By.TAG_NAME, "button")
    screenshot(driver, "approve-3-link-again-already-decided")


def test_deny_on_the_page_denies_the_refund(
    stack: LocalStack,
    http: httpx.Client,
    launch: Callable[..., WebDriver],
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    paused, link = pause_a_refund(stack, http)
    driver = launch()

    open_confirmation(driver, stack, paused, link)
    screenshot(driver, "deny-1-confirmation-page")

    driver.find_element(By.CSS_SELECTOR, "button[value=deny]").click()
    heading_becomes(driver, "Denied")
    assert details(driver)["Status"] == "denied"
    screenshot(driver, "deny-2-outcome-denied")
    assert pending_item(stack, paused["id"])["status"]["S"] == "denied"
    assert session_status(http, paused)["text"] == "Not done: issue_refund was denied."

    driver.get(link)
    assert driver.find_element(By.TAG_NAME, "h1").text == "Already decided"
    assert details(driver)["Status"] == "denied"
    screenshot(driver, "deny-3-link-again-already-decided")


def test_the_page_approves_with_javascript_turned_off(
    stack: LocalStack,
    http: httpx.Client,
    launch: Callable[..., WebDriver],
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    driver = launch(javascript=False)
    # the browser really runs no script: this page's own script would retitle it
    driver.get("data:text/html,<title>off</title><script>document.title='on'</script>")
    assert driver.title == "off"

    paused, link = pause_a_refund(stack, http)
    open_confirmation(driver, stack, paused, link)
    screenshot(driver, "no-javascript-1-confirmation-page")

    driver.find_element(By.CSS_SELECTOR, "button[value=approve]").click()
    heading_becomes(driver, "Approved")
    assert details(driver)["Status"] == "approved"
    screenshot(driver, "no-javascript-2-outcome-approved")
    assert session_status(http, paused)["status"] == "done"
