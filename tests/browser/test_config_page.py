"""The agent config page (``/agents/config``) in headless Chromium, on the local stack.

From the playground's link to every agent's config, then each sample agent on its own
(``?agent=``): its tools with their schemas and parallel-safety, its rules as the gate
enforces them (the file by its folder, each rule's scope, tool and decision), the
channels of each notification kind and its hooks — what ``GET /agents/{name}/config``
answers, drawn. At 390 px nothing is wider than the phone; the page's policy refuses
nothing it loads (no console error). Screenshots (``config-*``) go to
``tests/browser/artifacts/`` with ``SIGNOFF_UPDATE_SCREENSHOTS=1``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser.test_decision_card import emulate
from tests.browser.test_inbox_page import widest
from tests.browser.test_playground import console_errors
from tests.support.local_stack import WAIT
from tests.support.local_stack import http as http
from tests.support.local_stack import stack as stack

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import httpx
    from selenium.webdriver.chrome.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

    from signoff_dev.local.stack import LocalStack
    from tests.browser.conftest import Launch

AGENTS = ("customer-service", "daily-digest")


def headings(driver: WebDriver, tag: str) -> list[str]:
    return [h.text for h in driver.find_elements(By.TAG_NAME, tag)]


def facts(element: WebElement) -> dict[str, str]:
    """A ``dl.facts`` of ``element`` as {term: text}."""
    found = element.find_element(By.CSS_SELECTOR, "dl.facts")
    terms = found.find_elements(By.TAG_NAME, "dt")
    values = found.find_elements(By.TAG_NAME, "dd")
    return {term.text: value.text for term, value in zip(terms, values, strict=True)}


def test_the_playground_links_the_config_of_every_agent(
    launch: Launch, stack: LocalStack, screenshot: Callable[[WebDriver, str], Path]
) -> None:
    driver = launch()
    emulate(driver, 1280, 900, mobile=False)
    driver.get(f"{stack.url}/playground")
    driver.find_element(By.ID, "config-link").click()
    WebDriverWait(driver, WAIT).until(lambda d: d.current_url.endswith("/agents/config"))

    assert headings(driver, "h1") == ["Agent config"]
    assert headings(driver, "h2") == list(AGENTS)
    nav = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "nav a")]
    assert nav == ["All agents", *AGENTS]
    assert console_errors(driver) == []
    screenshot(driver, "config-1-desktop-all")


@pytest.mark.parametrize("agent", AGENTS)
def test_each_sample_agents_config_is_its_json_drawn(
    agent: str,
    launch: Launch,
    stack: LocalStack,
    http: httpx.Client,
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    # Given the agent's config as the JSON route answers it
    config: dict[str, Any] = http.get(f"/agents/{agent}/config").json()
    assert config["rules"]["source"] == f"{agent}/actauth.yml"
    driver = launch()
    emulate(driver, 1280, 900, mobile=False)
    driver.get(f"{stack.url}/agents/config")

    # When the agent is picked from the page's navigation
    driver.find_element(By.LINK_TEXT, agent).click()
    WebDriverWait(driver, WAIT).until(lambda d: d.current_url.endswith(f"?agent={agent}"))

    # Then the page is that agent's config, and only it
    assert headings(driver, "h2") == [agent]
    current = driver.find_element(By.CSS_SELECTOR, "nav a[aria-current=page]")
    assert current.text == agent
    screenshot(driver, f"config-2-desktop-{agent}")
    section = driver.find_element(By.CSS_SELECTOR, "section.agent")
    assert config["description"] in section.text
    prompt = section.find_element(By.TAG_NAME, "pre")
    assert prompt.text == config["systemPrompt"].strip()
    # its tools, with their parallel-safety and (opened) JSON schemas
    tools = section.find_elements(By.CSS_SELECTOR, "li.tool")
    assert [t.find_element(By.TAG_NAME, "code").text for t in tools] == [
        t["name"] for t in config["tools"]
    ]
    for card, tool in zip(tools, config["tools"], strict=True):
        safe = facts(card)["Parallel-safe"]
        assert safe.startswith("yes") if tool["safe"] else safe.startswith("no")
        card.find_element(By.TAG_NAME, "summary").click()
        schema = card.find_element(By.CSS_SELECTOR, "details pre")
        assert schema.is_displayed() and '"properties"' in schema.text
    # the rules the gate enforces: the file by its folder, each rule's scope, tool, decision
    text = section.text
    assert f"{agent}/actauth.yml" in text
    assert "/tmp" not in text and str(stack.agents_dir) not in text
    rules = section.find_elements(By.CSS_SELECTOR, "li.rule")
    assert len(rules) == len(config["rules"]["rules"])
    for card, rule in zip(rules, config["rules"]["rules"], strict=True):
        shown = facts(card)
        assert (shown["Scope"], shown["Tool"], shown["Decision"]) == (
            rule["scope"],
            rule["tool"],
            rule["decision"],
        )
        assert rule["name"] in card.text
        if rule["decision"] == "ask":
            assert "approval from anyone" in shown["Approval policy"]
    # the channels of each notification kind, and the hooks
    kinds = {
        row.find_elements(By.TAG_NAME, "td")[0].text: row.find_elements(By.TAG_NAME, "td")[1].text
        for row in section.find_elements(By.CSS_SELECTOR, "table")[0].find_elements(
            By.CSS_SELECTOR, "tbody tr"
        )
    }
    for kind in ("approval", "question", "stuck", "run_start", "run_finish"):
        channels = [name for name, on in config["notify"].items() if kind in on]
        assert kinds[kind] == (", ".join(channels) if channels else "none"), kind
    hooks = section.find_elements(By.CSS_SELECTOR, "table")[1].text
    for hook, custom in config["hooks"].items():
        assert f"{hook} {'custom (hooks.py)' if custom else 'default'}" in hooks
    assert console_errors(driver) == []
    driver.execute_script("arguments[0].scrollIntoView()", rules[0])
    screenshot(driver, f"config-3-desktop-{agent}-rules")

    # And on a phone nothing is wider than the screen
    emulate(driver, 390, 844, mobile=True)
    driver.get(f"{stack.url}/agents/config?agent={agent}")
    assert widest(driver) <= 390
    screenshot(driver, f"config-4-phone-{agent}")
