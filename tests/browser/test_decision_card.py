"""The decision card in a real browser: the link page on a phone and on a desktop, and the email.

Headless Chromium emulates a 390x844 phone (CSS pixels, scale 1, so the screenshots stay
small) and a 1280x900 desktop through the DevTools protocol. On the phone the summary and
both buttons must be on screen before any scrolling: their rectangles are asserted inside
the viewport. The email's HTML part, as the local mailbox captured it from the emulator's
SES, is rendered in the same browser, light and dark. Screenshots (``card-*``, ``email-*``)
go to ``tests/browser/artifacts/`` with ``SIGNOFF_UPDATE_SCREENSHOTS=1``.
"""

from __future__ import annotations

import base64
import json
import re
from typing import TYPE_CHECKING, Any

from selenium.webdriver.common.by import By

from tests.browser.test_link_page import heading_becomes, pause_a_refund
from tests.support.local_stack import REFUND, email_for, finished
from tests.support.local_stack import http as http
from tests.support.local_stack import stack as stack

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import httpx
    from selenium.webdriver.chrome.webdriver import WebDriver

    from signoff_dev.local.stack import LocalStack

SUMMARY = "Refund 42.00 USD on order A-1001"
SAID = "Order A-1001 was paid 42.0 USD; issuing the refund."
WHY = "refund only 30, the item was used"


def emulate(
    driver: WebDriver, width: int, height: int, *, mobile: bool, dark: bool = False
) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
    )
    scheme = "dark" if dark else "light"
    driver.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
    )


def open_card(
    stack: LocalStack,
    http: httpx.Client,
    launch: Callable[..., WebDriver],
    *,
    width: int = 390,
    height: int = 844,
    mobile: bool = True,
) -> tuple[WebDriver, dict[str, Any]]:
    """A paused refund's link page in a fresh browser of that size (a phone by default);
    the driver and the paused answer."""
    paused, link = pause_a_refund(stack, http)
    driver = launch()
    emulate(driver, width, height, mobile=mobile)
    driver.get(link)
    return driver, paused


def on_screen(driver: WebDriver, selector: str) -> dict[str, float]:
    """The element's rectangle, asserted wholly inside the viewport as it first shows."""
    rect: dict[str, float] = driver.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,"
        " width: innerWidth, height: innerHeight};",
        selector,
    )
    assert rect["top"] >= 0 and rect["left"] >= 0, (selector, rect)
    assert rect["bottom"] <= rect["height"] and rect["right"] <= rect["width"], (selector, rect)
    return rect


def assert_the_card(driver: WebDriver) -> None:
    """The card's content: summary, the request, the agent's words, why, for whom, expiry."""
    assert driver.find_element(By.CSS_SELECTOR, "h1.summary").text == SUMMARY
    quotes = [q.text for q in driver.find_elements(By.CSS_SELECTOR, ".quote")]
    assert quotes == [REFUND, SAID]
    main = driver.find_element(By.TAG_NAME, "main").text
    assert "Why it asks" in main and "agent customer-service · tenant default" in main
    assert "expires in 23 hours" in main or "expires in 1 day" in main
    # the script added the reader's local time beside the UTC one
    assert all(
        s.text.endswith("your time") for s in driver.find_elements(By.CSS_SELECTOR, ".local")
    )
    # the arguments are one click away
    pre = driver.find_element(By.CSS_SELECTOR, "details pre")
    assert not pre.is_displayed()
    driver.find_element(By.CSS_SELECTOR, "details > summary").click()
    assert json.loads(pre.text) == {"amount": 42.0, "orderId": "A-1001"}
    driver.find_element(By.CSS_SELECTOR, "details > summary").click()
    assert not [line for line in driver.get_log("browser") if line["level"] == "SEVERE"]


def test_on_a_phone_the_summary_and_both_buttons_show_without_scrolling(
    stack: LocalStack,
    http: httpx.Client,
    launch: Callable[..., WebDriver],
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    driver, _ = open_card(stack, http, launch)

    assert driver.execute_script("return scrollY") == 0
    on_screen(driver, "h1.summary")
    approve = on_screen(driver, "button[value=approve]")
    deny = on_screen(driver, "button[value=deny]")
    assert approve["right"] - approve["left"] >= 44 and deny["bottom"] - deny["top"] >= 44
    # nothing wider than the phone
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
    screenshot(driver, "card-1-phone-390x844")
    assert_the_card(driver)

    # scrolled to the end, the buttons are still on screen (the sticky bar)
    driver.execute_script("scrollTo(0, document.body.scrollHeight)")
    on_screen(driver, "button[value=approve]")
    on_screen(driver, "button[value=deny]")

    # a phone in dark mode gets the dark scheme, the bar included
    emulate(driver, 390, 844, mobile=True, dark=True)
    driver.execute_script("scrollTo(0, 0)")
    colours = driver.execute_script(
        "const s = (q) => getComputedStyle(document.querySelector(q));"
        "return [s('body').backgroundColor, s('h1').color, s('form .actions').backgroundColor];"
    )
    assert colours == ["rgb(17, 20, 24)", "rgb(230, 237, 243)", "rgb(17, 20, 24)"]
    screenshot(driver, "card-7-phone-dark")


def test_on_a_desktop_the_card_is_one_centred_column(
    stack: LocalStack,
    http: httpx.Client,
    launch: Callable[..., WebDriver],
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    driver, _ = open_card(stack, http, launch, width=1280, height=900, mobile=False)

    main: dict[str, Any] = driver.execute_script(
        "const r = document.querySelector('main').getBoundingClientRect();"
        "return {left: r.left, right: r.right, page: document.documentElement.clientWidth};"
    )
    width = main["right"] - main["left"]
    assert 500 <= width <= 720, main  # a readable measure, not the full 1280
    assert abs(main["left"] - (main["page"] - main["right"])) <= 2  # centred
    on_screen(driver, "h1.summary")
    on_screen(driver, "button[value=approve]")
    on_screen(driver, "button[value=deny]")
    screenshot(driver, "card-2-desktop-1280x900")
    assert_the_card(driver)


def test_the_email_renders_as_one_card_with_one_button_light_and_dark(
    stack: LocalStack,
    http: httpx.Client,
    launch: Callable[..., WebDriver],
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    paused, _ = pause_a_refund(stack, http)
    email = email_for(stack, http, paused["id"])
    assert email["subject"] == f"Approve? {SUMMARY}"
    # moto keeps the HTML part; the mailbox's text is what it shows
    text = str(email["text"])
    assert text.startswith(f"Approve? {SUMMARY}\n"), text
    assert REFUND in text and SAID in text
    page = "data:text/html;base64," + base64.b64encode(str(email["html"]).encode()).decode()

    driver = launch()
    for name, width, dark in (("email-1-phone", 390, False), ("email-2-dark", 390, True)):
        emulate(driver, width, 844, mobile=True, dark=dark)
        driver.get(page)
        assert driver.find_element(By.TAG_NAME, "h1").text == f"Approve? {SUMMARY}"
        [button] = driver.find_elements(By.TAG_NAME, "a")
        assert button.text == "Review and decide"
        assert button.get_attribute("href") == email["links"][0]
        on_screen(driver, "a")
        body = driver.find_element(By.TAG_NAME, "body").text
        assert body.count('"orderId": "A-1001"') == 1  # the arguments, once
        assert re.search(r"Expires\nin \d+ (hours|day) \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)", body)
        assert not re.search(r"\d{4}-\d\d-\d\dT\d\d", body)  # no raw RFC 3339
        assert driver.execute_script("return document.documentElement.scrollWidth") <= width
        screenshot(driver, name)
    background = driver.execute_script(
        "return getComputedStyle(document.querySelector('.card')).backgroundColor"
    )
    assert background == "rgb(28, 33, 40)"  # the dark scheme's card


def test_deny_with_a_reason_on_the_page_tells_the_agent_why(
    stack: LocalStack,
    http: httpx.Client,
    launch: Callable[..., WebDriver],
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    driver, paused = open_card(stack, http, launch)
    reason = driver.find_element(By.ID, "reason")
    reason.send_keys(WHY)
    # typing at the end of the form, the buttons are still on screen
    on_screen(driver, "button[value=deny]")
    screenshot(driver, "card-3-deny-with-reason")
    driver.find_element(By.CSS_SELECTOR, "button[value=deny]").click()

    heading_becomes(driver, "Denied")
    main = driver.find_element(By.TAG_NAME, "main").text
    assert "Refund 42.00 USD on order A-1001" in main
    assert "Denied through a link that names no person, " in main and "UTC" in main
    assert f"Reason\n{WHY}" in main
    screenshot(driver, "card-4-denied")
    status = finished(http, paused)
    [result] = [
        e for e in status["events"] if e["type"] == "tool:result" and e["tool"] == "issue_refund"
    ]
    assert result["statusText"] == "Denied." and WHY in result["detailText"]


def test_approve_with_changes_on_the_page_runs_the_changed_call(
    stack: LocalStack,
    http: httpx.Client,
    launch: Callable[..., WebDriver],
    screenshot: Callable[[WebDriver, str], Path],
) -> None:
    driver, paused = open_card(stack, http, launch)
    amount = driver.find_element(By.NAME, "arg.amount")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", amount)
    amount.clear()
    amount.send_keys("30")
    on_screen(driver, "button[value=approve]")
    screenshot(driver, "card-5-approve-with-changes")
    driver.find_element(By.CSS_SELECTOR, "button[value=approve]").click()

    heading_becomes(driver, "Approved")
    assert "amount 42 → 30" in driver.find_element(By.TAG_NAME, "main").text
    screenshot(driver, "card-6-approved-with-changes")
    status = finished(http, paused)
    assert status["text"].startswith("Refunded 30.0 USD for order A-1001")
    [decision] = status["decisions"]
    assert decision["decision"] == "approved" and "amount 42 → 30" in decision["note"]
