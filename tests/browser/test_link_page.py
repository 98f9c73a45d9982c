"""The approval landing page (``/a/{token}``) in a real browser: headless Chromium opens the
link a notification carries, shows the call, and its Approve / Deny buttons decide.

The local stack (``signoff dev`` in this process, on free ports) serves the pages. The approve
test takes the link from a real email: the sample ``local-email`` channel sends it through the
emulator's SES and the stack's mailbox captures it (``GET /_local/emails``). The others take it
from the webhook sink, which keeps each verified notification with its ``linkUrl``.
Screenshots of every page go to ``tests/browser/artifacts/`` with ``SIGNOFF_UPDATE_SCREENSHOTS=1``.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.support.local_stack import (
    REFUND,
    WAIT,
    email_for,
    finished,
    notification_for,
    pending_item,
)
from tests.support.local_stack import (
    http as http,
)
from tests.support.local_stack import (
    stack as stack,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import httpx
    from selenium.webdriver.chrome.webdriver import WebDriver

    from signoff_dev.local.stack import LocalStack


def pause_a_refund(stack: LocalStack, http: httpx.Client) -> tuple[dict[str, Any], str]:
    """Sends the refund message; the paused answer and the link its notification carries."""
    sent = http.post("/agents/customer-service/messages", json={"message": REFUND})
    assert sent.status_code == 202, sent.text
    paused: dict[str, Any] = sent.json()
    assert paused["type"] == "approval" and paused["tool"] == "issue_refund"

    notification = notification_for(http, paused["id"])["notification"]
    link = str(notification["linkUrl"])
    assert link.startswith(f"{stack.url}/a/")
    return paused, link


def emailed_link(stack: LocalStack, http: httpx.Client, pending_id: str) -> str:
    """The one link of the captured email about ``pending_id`` (waits for the mail)."""
    [link] = email_for(stack, http, pending_id)["links"]
    return str(link)


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
    """Opens the link; asserts the page shows the call's card and that the GET changed nothing."""
    driver.get(link)
    assert driver.find_element(By.TAG_NAME, "h1").text == "Refund 42.00 USD on order A-1001"
    shown = details(driver)
    assert "customer-service" in driver.find_element(By.CSS_SELECTOR, ".eyebrow").text.lower()
    assert shown["Requested"].endswith(f", session {paused['sessionId']}")
    assert driver.find_element(By.CSS_SELECTOR, "details > summary").text == (
        "Full arguments of issue_refund"
    )
    pre = driver.find_element(By.CSS_SELECTOR, "details pre")
    arguments = json.loads(str(pre.get_attribute("textContent")))
    assert arguments == {"orderId": "A-1001", "amount": 42.0}

    stored = pending_item(stack, paused["id"])
    assert stored["status"]["S"] == "pending"  # a GET decides nothing
    expires = datetime.fromtimestamp(float(stored["expires_at"]["N"]), tz=UTC)
    assert f"{expires:%Y-%m-%d %H:%M} UTC" in shown["Expires"]
    assert expires.timestamp() > time.time()
    assert driver.find_element(By.CSS_SELECTOR, "button[value=approve]").text == "Approve"
    assert driver.find_element(By.CSS_SELECTOR, "button[value=deny]").text == "Deny"


def test_the_emailed_link_shows_the_refund_and_approve_finishes_the_turn(
    stack: LocalStack,
    http: httpx.Client,
    launch: Callable[..., WebDriver],
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    paused, _ = pause_a_refund(stack, http)
    link = emailed_link(stack, http, paused["id"])
    assert link.startswith(f"{stack.url}/a/")
    driver = launch()

    open_confirmation(driver, stack, paused, link)
    screenshot(driver, "approve-1-confirmation-page")

    driver.find_element(By.CSS_SELECTOR, "button[value=approve]").click()
    heading_becomes(driver, "Approved")
    assert details(driver)["Status"] == "approved"
    # the emailed link was made for the local mailbox's one recipient
    assert details(driver)["Decided"].startswith(
        "Approved by approver@example.com through the local-email channel, "
    )
    screenshot(driver, "approve-2-outcome-approved")
    assert pending_item(stack, paused["id"])["status"]["S"] == "approved"
    assert finished(http, paused)["text"].startswith("Refunded 42.0 USD for order A-1001")

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
    assert finished(http, paused)["text"] == "Not done: issue_refund was denied."

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
    assert finished(http, paused)["status"] == "done"
