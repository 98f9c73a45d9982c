"""The chat example (``examples/chat``, served by the local stack at ``/examples/chat``) in
headless Chromium: a refund asked for, approved in the page, its answer shown; then, in the
same session, a question answered and the refund denied with a reason."""

from __future__ import annotations

from typing import TYPE_CHECKING

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.test_playground import console_errors, text_of
from tests.support.local_stack import REFUND, WAIT
from tests.support.local_stack import http as http
from tests.support.local_stack import stack as stack

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import httpx
    from selenium.webdriver.chrome.webdriver import WebDriver

    from signoff_dev.local.stack import LocalStack
    from tests.browser.conftest import Launch


def lines(driver: WebDriver) -> list[str]:
    return [item.text for item in driver.find_elements(By.CSS_SELECTOR, "#chat li")]


def send(driver: WebDriver, message: str) -> None:
    box = driver.find_element(By.ID, "message")
    box.send_keys(message)
    driver.find_element(By.CSS_SELECTOR, "#send button").click()


def asked(driver: WebDriver) -> bool:
    return driver.find_element(By.ID, "decision").is_displayed()


def test_a_chat_through_an_approval_then_a_question_and_a_deny(
    launch: Launch,
    stack: LocalStack,
    http: httpx.Client,
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    driver = launch()
    driver.get(f"{stack.url}/examples/chat")
    wait = WebDriverWait(driver, WAIT)
    send(driver, REFUND)
    wait.until(asked)
    assert text_of(driver, "asked").startswith('issue_refund {"orderId":"A-1001"')
    screenshot(driver, "chat-example-approval")
    driver.find_element(By.ID, "approve").click()
    refunded = "agent: Refunded 42.0 USD for order A-1001 to the original payment method."
    wait.until(lambda d: refunded in lines(d))
    assert not asked(driver)

    send(driver, "I want my money back")
    wait.until(lambda d: asked(d) and "Which order" in text_of(d, "asked"))
    driver.find_element(By.ID, "note").send_keys("A-1002")
    driver.find_element(By.ID, "answer").click()
    wait.until(lambda d: asked(d) and text_of(d, "asked").startswith("issue_refund"))
    driver.find_element(By.ID, "note").send_keys("too late for that one")
    driver.find_element(By.ID, "deny").click()
    wait.until(lambda d: any(line.endswith("(denied)") for line in lines(d)))
    screenshot(driver, "chat-example-denied")
    # one session for the conversation: its two turns, and the reason the model reads
    sessions = {
        r["notification"].get("sessionId")
        for r in http.get("/_local/notifications").json()["notifications"]
        if r["notification"].get("kind") == "approval"
    }
    [session] = [s for s in sessions if s and _has_both_turns(http, s)]
    denied = [
        e
        for e in http.get(f"/agents/customer-service/sessions/{session}").json()["events"]
        if e["type"] == "tool:result" and e["statusText"] == "Denied."
    ]
    assert "too late for that one" in denied[0]["detailText"]
    assert console_errors(driver) == []


def _has_both_turns(http: httpx.Client, session: str) -> bool:
    events = http.get(f"/agents/customer-service/sessions/{session}").json()["events"]
    return sum(e["type"] == "approval:pending" for e in events) == 2
