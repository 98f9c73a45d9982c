"""The playground's approval dialog in headless Chromium: deny with a reason, and approve
with changes for a tool declared editable (the dialog offers its arguments as JSON)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.test_playground import (
    console_errors,
    dialog_open,
    open_playground,
    send,
    text_of,
)
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

WHY = "refund only 30, the item was used"


def changes_offered(driver: WebDriver) -> bool:
    return bool(
        driver.execute_script("return !document.getElementById('approval-changes-box').hidden")
    )


def refund_asked(launch: Launch, stack: LocalStack) -> tuple[WebDriver, WebDriverWait[WebDriver]]:
    """A playground that sent the refund and shows the approval dialog; its driver and wait."""
    driver = launch()
    open_playground(driver, stack, "customer-service")
    send(driver, REFUND)
    wait = WebDriverWait(driver, WAIT)
    wait.until(lambda d: dialog_open(d, "approval"))
    return driver, wait


def change_to(driver: WebDriver, wait: WebDriverWait[WebDriver], args: str) -> None:
    """Types ``args`` as the changed arguments, once the dialog offers them (issue_refund is
    editable=True)."""
    wait.until(changes_offered)
    box = driver.find_element(By.ID, "approval-changes")
    box.clear()
    box.send_keys(args)


def refund_event(http: httpx.Client, driver: WebDriver, kind: str) -> dict[str, Any]:
    """The session's one ``kind`` event about issue_refund."""
    session = http.get(f"/agents/customer-service/sessions/{text_of(driver, 'session')}").json()
    [event] = [e for e in session["events"] if e["type"] == kind and e["tool"] == "issue_refund"]
    return dict(event)


def test_the_playground_approves_with_changes(
    launch: Launch,
    stack: LocalStack,
    http: httpx.Client,
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    driver, wait = refund_asked(launch, stack)
    change_to(driver, wait, '{"orderId": "A-1001", "amount": 30}')
    screenshot(driver, "playground-approve-with-changes")
    driver.find_element(By.ID, "approve").click()
    wait.until(lambda d: text_of(d, "status") == "done")
    final = driver.find_elements(By.CSS_SELECTOR, "#conversation li.final")
    assert [item.text for item in final] == [
        "Refunded 30.0 USD for order A-1001 to the original payment method."
    ]
    started = refund_event(http, driver, "tool:started")
    assert started["originalArgs"]["amount"] == 42.0 and started["args"]["amount"] == 30
    assert console_errors(driver) == []


def test_the_playground_says_why_it_denies(
    launch: Launch,
    stack: LocalStack,
    http: httpx.Client,
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    driver, wait = refund_asked(launch, stack)
    driver.find_element(By.ID, "approval-note").send_keys(WHY)
    screenshot(driver, "playground-deny-with-reason")
    driver.find_element(By.ID, "deny").click()
    wait.until(lambda d: text_of(d, "status") == "done (denied)")
    result = refund_event(http, driver, "tool:result")
    assert result["statusText"] == "Denied." and WHY in result["detailText"]
    assert console_errors(driver) == []


def test_the_playground_names_a_refused_change_and_keeps_the_dialog(
    launch: Launch, stack: LocalStack
) -> None:
    driver, wait = refund_asked(launch, stack)
    change_to(driver, wait, '{"orderId": "A-1001", "amount": -1}')
    driver.find_element(By.ID, "approve").click()
    wait.until(lambda d: "amount" in text_of(d, "approval-error"))
    assert "422" in text_of(driver, "approval-error") and dialog_open(driver, "approval")
