"""The playground with a broken agent beside healthy ones (issue 11): the broken one is
listed, marked, and its problem (file and line) shown when picked, sending disabled;
the page starts on a healthy agent, which answers. An agent whose rule names a tool
it lacks is healthy (issue 13): its warning shows when picked, sending stays on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.browser.test_playground import console_errors, send, text_of
from tests.e2e.local_stack.test_broken_agent_local import stack as stack
from tests.support.local_stack import WAIT

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from selenium.webdriver.chrome.webdriver import WebDriver

    from signoff_dev.local.stack import LocalStack
    from tests.browser.conftest import Launch


def test_the_playground_shows_a_broken_agent_and_serves_the_others(
    launch: Launch, stack: LocalStack, screenshot: Callable[[WebDriver, str], Path]
) -> None:
    driver = launch()
    driver.get(f"{stack.url}/playground")
    wait = WebDriverWait(driver, WAIT)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#agent option[value='bad-yaml']"))
    picker = Select(driver.find_element(By.ID, "agent"))
    labels = {o.get_attribute("value"): o.text for o in picker.options}
    assert labels == {
        "bad-yaml": "bad-yaml (misconfigured)",
        "customer-service": "customer-service",
        "daily-digest": "daily-digest",
        "typo-rules": "typo-rules",
    }
    # it starts on a healthy agent, with nothing wrong to say
    assert picker.first_selected_option.get_attribute("value") == "customer-service"
    assert text_of(driver, "agent-problem") == ""

    picker.select_by_value("typo-rules")
    warned = text_of(driver, "agent-problem")
    assert "warning: " in warned and "actauth.yml:7: rules[0] 'list-orders-anywhere'.tool" in warned
    assert "did you mean 'list_orders'?" in warned
    assert driver.find_element(By.ID, "send").is_enabled()

    picker.select_by_value("bad-yaml")
    problem = text_of(driver, "agent-problem")
    assert "bad-yaml/agent.yaml:5: invalid YAML: expected ',' or ']'" in problem
    assert driver.find_element(By.ID, "agent-problem").is_displayed()
    assert not driver.find_element(By.ID, "send").is_enabled()
    screenshot(driver, "playground-broken-agent")

    picker.select_by_value("daily-digest")
    assert text_of(driver, "agent-problem") == ""
    send(driver, "digest")
    wait.until(lambda d: "Daily digest: 3 orders" in text_of(d, "conversation"))
    assert console_errors(driver) == []
