"""The playground (``/playground`` on the local stack) in headless Chromium: a conversation
over the SSE stream, its approval decided in the page's dialog, the same stream going on to
``done``. Screenshots go to ``tests/browser/artifacts/`` with ``SIGNOFF_UPDATE_SCREENSHOTS=1``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.support.local_stack import (
    REFUND,
    WAIT,
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
    from tests.browser.conftest import Launch


def open_playground(driver: WebDriver, stack: LocalStack, agent: str) -> None:
    driver.get(f"{stack.url}/playground")
    wait = WebDriverWait(driver, WAIT)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f"#agent option[value='{agent}']"))
    Select(driver.find_element(By.ID, "agent")).select_by_value(agent)


def send(driver: WebDriver, message: str) -> None:
    box = driver.find_element(By.ID, "message")
    box.clear()
    box.send_keys(message)
    driver.find_element(By.ID, "send").click()


def dialog_open(driver: WebDriver, dialog: str) -> bool:
    return bool(driver.execute_script(f"return document.getElementById('{dialog}').open"))


def event_types(driver: WebDriver) -> list[str]:
    return [
        str(item.get_attribute("data-type"))
        for item in driver.find_elements(By.CSS_SELECTOR, "#events li")
    ]


def text_of(driver: WebDriver, element_id: str) -> str:
    """The element's text, shown or not (the arguments wait in a closed <details>)."""
    return str(driver.find_element(By.ID, element_id).get_attribute("textContent")).strip()


def console_errors(driver: WebDriver) -> list[str]:
    """What the page's console reported as errors: a script failure, a refused resource."""
    return [
        str(entry["message"])
        for entry in driver.get_log("browser")
        if entry["level"] == "SEVERE" and "/favicon.ico" not in str(entry["message"])
    ]


def test_a_playground_conversation_through_an_approval(
    launch: Launch,
    stack: LocalStack,
    http: httpx.Client,
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    driver = launch()
    open_playground(driver, stack, "customer-service")
    screenshot(driver, "playground-start")
    assert "Order support" in text_of(driver, "agent-description")

    send(driver, REFUND)
    wait = WebDriverWait(driver, WAIT)
    wait.until(lambda d: dialog_open(d, "approval"))
    assert text_of(driver, "approval-tool") == "issue_refund"
    assert '"orderId": "A-1001"' in text_of(driver, "approval-args")
    assert "refund-production-needs-approval" in text_of(driver, "approval-reason")
    # the decision card: the summary, the request and the agent's words, the expiry
    wait.until(lambda d: text_of(d, "approval-summary") == "Refund 42.00 USD on order A-1001")
    assert text_of(driver, "approval-request") == REFUND
    assert text_of(driver, "approval-said") == (
        "Order A-1001 was paid 42.0 USD; issuing the refund."
    )
    assert text_of(driver, "approval-expires").startswith("in 23 hours — ")
    assert not driver.find_element(By.ID, "approval-args").is_displayed()  # one click away
    assert text_of(driver, "status") == "waiting for an approval"
    # The turn is paused, durably, while the page waits with its stream open.
    session = text_of(driver, "session")
    paused = http.get(f"/agents/customer-service/sessions/{session}").json()
    assert paused["status"] == "paused" and paused["pending"]["tool"] == "issue_refund"
    screenshot(driver, "playground-approval")

    driver.find_element(By.ID, "approve").click()
    wait.until(lambda d: text_of(d, "status") == "done")
    assert not dialog_open(driver, "approval")
    final = driver.find_elements(By.CSS_SELECTOR, "#conversation li.final")
    assert [item.text for item in final] == [
        "Refunded 42.0 USD for order A-1001 to the original payment method."
    ]
    kinds = event_types(driver)
    assert kinds[0] == "session" and kinds[-1] == "done" and kinds.count("done") == 1
    assert kinds.index("approval:pending") < kinds.index(
        "tool:started", kinds.index("approval:pending")
    )
    status = http.get(f"/agents/customer-service/sessions/{session}").json()
    assert status["status"] == "done" and status["text"] == final[0].text
    screenshot(driver, "playground-done")
    assert console_errors(driver) == []


def test_a_playground_question_is_answered_in_its_dialog_and_the_refund_denied(
    launch: Launch,
    stack: LocalStack,
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    driver = launch()
    open_playground(driver, stack, "customer-service")
    send(driver, "I want my money back")
    wait = WebDriverWait(driver, WAIT)
    wait.until(lambda d: dialog_open(d, "question"))
    assert text_of(driver, "question-text") == "Which order should I refund?"
    driver.find_element(By.CSS_SELECTOR, "input[name=choice][value='A-1002']").click()
    screenshot(driver, "playground-question")
    driver.find_element(By.ID, "send-answer").click()

    wait.until(lambda d: dialog_open(d, "approval"))
    assert '"orderId": "A-1002"' in text_of(driver, "approval-args")
    driver.find_element(By.ID, "deny").click()
    wait.until(lambda d: text_of(d, "status") == "done (denied)")
    stopped = driver.find_elements(By.CSS_SELECTOR, "#conversation li.stopped")
    assert len(stopped) == 1 and "denied" in stopped[0].text
    screenshot(driver, "playground-denied")
    assert console_errors(driver) == []


def test_the_playground_shows_hidden_characters_escaped(
    launch: Launch,
    stack: LocalStack,
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    # What the stream would bring for a model that wrote a right-to-left override
    # (and a zero-width space) into its arguments, reason and question: fed to the
    # page's own event handler, as its SSE reader does.
    rlo, zwsp = "\u202e", "\u200b"
    account = f"acct{rlo}4321"
    approval = {
        "type": "approval:pending",
        "id": "p-1",
        "tool": "issue_refund",
        "args": {"account": account, f"memo{zwsp}": "ok"},
        "reason": f"over {rlo}0005",
        "scope": {"tenant": "default", "environment": "production", "agent": "customer-service"},
    }
    question = {
        "type": "question:pending",
        "id": "p-2",
        "question": f"Refund to {account}?",
        "options": [account, "no"],
    }
    driver = launch()
    open_playground(driver, stack, "customer-service")

    driver.execute_script("handle(arguments[0])", approval)
    shown = {
        name: str(driver.execute_script(f"return document.getElementById('{name}').textContent"))
        for name in ("approval-args", "approval-reason", "events")
    }
    screenshot(driver, "playground-hidden-characters")
    driver.execute_script("closeDialogs(); handle(arguments[0])", question)
    shown["question-text"] = str(
        driver.execute_script("return document.getElementById('question-text').textContent")
    )
    labels = driver.execute_script(
        "return [...document.querySelectorAll('#question-options label')]"
        ".map((label) => label.textContent)"
    )
    values = driver.execute_script(
        "return [...document.querySelectorAll('#question-options input')].map((i) => i.value)"
    )

    for name, text in shown.items():
        assert rlo not in text and zwsp not in text, name
    assert r"acct\u202e4321" in shown["approval-args"] and r"memo\u200b" in shown["approval-args"]
    assert shown["approval-reason"] == r"over \u202e0005"
    assert shown["question-text"] == r"Refund to acct\u202e4321?"
    assert labels == [r"acct\u202e4321", "no"]
    assert values == [account, "no"], "a choice answers with the option as offered"
    assert console_errors(driver) == []
