"""The playground's approval dialog on a refund that needs two approvals, in headless
Chromium: its approve records a vote, the dialog shows the tally and stays open, and the
turn resumes only with a second person's approval."""

from __future__ import annotations

import shutil
import time
from typing import TYPE_CHECKING

import httpx
import pytest
import yaml
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from signoff.keys.api_keys import new_api_key
from tests.browser.test_playground import (
    console_errors,
    dialog_open,
    open_playground,
    send,
    text_of,
)
from tests.conftest import ROOT
from tests.support.local_stack import REFUND, WAIT, running_stack

if TYPE_CHECKING:
    from collections.abc import Iterator

    from selenium.webdriver.chrome.webdriver import WebDriver

    from signoff_dev.local.stack import LocalStack
    from tests.browser.conftest import Launch


@pytest.fixture(scope="module")
def two_approvals(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    agents = tmp_path_factory.mktemp("votes") / "agents"
    shutil.copytree(ROOT / "agents", agents)
    rules_file = agents / "customer-service" / "actauth.yml"
    rules = yaml.safe_load(rules_file.read_text())
    [rule] = [r for r in rules["rules"] if r.get("name") == "refund-production-needs-approval"]
    rule["approvals"] = 2
    rules_file.write_text(yaml.safe_dump(rules))
    with running_stack(agents) as local:
        yield local


def votes_shown(driver: WebDriver) -> str:
    return str(
        driver.execute_script(
            "const box = document.getElementById('approval-votes-box');"
            "return box.hidden ? '' : document.getElementById('approval-votes').textContent"
        )
    )


def test_a_vote_short_of_the_quorum_shows_the_tally(
    launch: Launch, two_approvals: LocalStack
) -> None:
    driver = launch()
    open_playground(driver, two_approvals, "customer-service")
    send(driver, REFUND)
    wait = WebDriverWait(driver, WAIT)
    wait.until(lambda d: dialog_open(d, "approval"))

    driver.find_element(By.ID, "approve").click()

    wait.until(lambda d: votes_shown(d).startswith("1 of 2 approvals — "))
    assert dialog_open(driver, "approval")
    assert "Your vote is recorded" in driver.find_element(By.ID, "approval-error").text
    assert driver.find_element(By.ID, "approve").get_attribute("disabled") is not None
    # a second person (an API key of the tenant) reaches the quorum: the turn finishes
    clear, record = new_api_key("default", "second approver", time.time())
    two_approvals.message_api().api_keys.add(record)
    pending_id = driver.find_element(By.ID, "approval").get_attribute("data-item")
    with httpx.Client(base_url=two_approvals.url, timeout=WAIT) as http:
        done = http.post(f"/approvals/{pending_id}/approve", headers={"x-api-key": clear})
    assert done.status_code == 200, done.text
    wait.until(lambda d: text_of(d, "status") == "done")
    assert console_errors(driver) == []
