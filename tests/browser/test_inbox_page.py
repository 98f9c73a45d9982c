"""The approvals inbox in a real browser, on the local stack: a phone and a desktop.

Two refunds wait. Through an approver's inbox link, headless Chromium shows the inbox
at 1280x900 (both pending, a grid) and at 390x844 (one column, nothing wider than the
phone), opens the first item's card, approves it, and finds the decision in the
history — by the approver, through the channel ``inbox``. The CSV export, parsed,
equals the store's audit entries of the tenant. Screenshots (``inbox-*``) go to
``tests/browser/artifacts/`` with ``SIGNOFF_UPDATE_SCREENSHOTS=1``.
"""

from __future__ import annotations

import csv
import io
import time
from typing import TYPE_CHECKING
from urllib.parse import quote

from selenium.webdriver.common.by import By

from tests.browser.test_decision_card import emulate
from tests.browser.test_link_page import heading_becomes, pause_a_refund
from tests.support.local_stack import http as http
from tests.support.local_stack import stack as stack

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import httpx
    from selenium.webdriver.chrome.webdriver import WebDriver

    from signoff_dev.local.stack import LocalStack

APPROVER = "alice@example.com"
TENANT = "default"  # the local stack's callers without a key


def widest(driver: WebDriver) -> int:
    width: int = driver.execute_script("return document.documentElement.scrollWidth")
    return width


def pending_links(driver: WebDriver) -> list[str]:
    return [a.text for a in driver.find_elements(By.CSS_SELECTOR, "li.item a.open")]


def history_rows(driver: WebDriver) -> list[dict[str, str]]:
    """The history table's rows as {column label: text}."""
    rows = []
    for row in driver.find_elements(By.CSS_SELECTOR, "table tbody tr"):
        cells = row.find_elements(By.TAG_NAME, "td")
        rows.append(
            {cell.get_attribute("data-label") or "": cell.text.split(": ", 1)[-1] for cell in cells}
        )
    return rows


def test_the_inbox_lists_opens_decides_and_shows_the_history_on_a_phone_and_a_desktop(
    stack: LocalStack,
    http: httpx.Client,
    launch: Callable[..., WebDriver],
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    first, _ = pause_a_refund(stack, http)
    second, _ = pause_a_refund(stack, http)
    api = stack.message_api()
    token = api.signer.issue_inbox(TENANT, APPROVER, time.time() + 3600)
    inbox = f"{stack.url}/inbox?token={quote(token)}"
    driver = launch()

    # a desktop: both items waiting, side by side
    emulate(driver, 1280, 900, mobile=False)
    driver.get(inbox)
    assert driver.find_element(By.TAG_NAME, "h1").text == "Approvals inbox"
    assert len(pending_links(driver)) == 2
    tops = [item.rect["y"] for item in driver.find_elements(By.CSS_SELECTOR, "li.item")]
    assert tops[0] == tops[1], "two cards on one row at 1280 wide"
    screenshot(driver, "inbox-1-desktop-1280x900")

    # a phone: one column, nothing wider than the screen
    emulate(driver, 390, 844, mobile=True)
    driver.get(inbox)
    assert widest(driver) <= 390
    items = driver.find_elements(By.CSS_SELECTOR, "li.item")
    assert items[1].rect["y"] > items[0].rect["y"], "one card under the other at 390 wide"
    assert "waiting" in items[0].text and "issue_refund" in items[0].text
    screenshot(driver, "inbox-2-phone-390x844")

    # open the oldest item's card and approve it, as the approver
    driver.find_element(By.CSS_SELECTOR, "li.item a.open").click()
    driver.find_element(By.CSS_SELECTOR, "button[value=approve]")
    assert widest(driver) <= 390
    screenshot(driver, "inbox-3-phone-card")
    driver.find_element(By.CSS_SELECTOR, "button[value=approve]").click()
    heading_becomes(driver, "Approved")
    decided = api.pending.get(first["id"])
    assert (decided.status, decided.resolved_by, decided.resolved_via) == (
        "approved",
        APPROVER,
        "inbox",
    )
    assert api.pending.get(second["id"]).status == "pending"

    # back in the inbox: one item left, and the decision in the history
    driver.get(inbox)
    assert len(pending_links(driver)) == 1
    [row] = history_rows(driver)
    assert (row["Decision"], row["Who"], row["Channel"], row["Tool"]) == (
        "approved",
        APPROVER,
        "inbox",
        "issue_refund",
    )
    assert widest(driver) <= 390
    screenshot(driver, "inbox-4-phone-history")
    emulate(driver, 1280, 900, mobile=False)
    driver.get(inbox)
    assert driver.find_element(By.CSS_SELECTOR, "table thead").is_displayed()
    screenshot(driver, "inbox-5-desktop-history")
    assert not [line for line in driver.get_log("browser") if line["level"] == "SEVERE"]

    # the CSV export is the store's audit entries of the tenant, one row each
    exported = http.get("/inbox/audit.csv", params={"token": token})
    assert exported.status_code == 200, exported.text
    rows = list(csv.DictReader(io.StringIO(exported.text, newline="")))
    stored = list(api.turns.audit.of_tenant(TENANT, since=0, until=time.time() + 1))
    assert [(r["id"], r["decision"], r["actor"], r["channel"], r["pending_id"]) for r in rows] == [
        (e.id, e.decision, e.actor, e.channel, e.pending_id) for e in stored
    ]
    assert [r["pending_id"] for r in rows] == [first["id"]]
