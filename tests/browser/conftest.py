"""Headless Chromium for the browser tests: Debian's ``chromium`` driven through its own
``chromedriver`` by selenium.

Selenium never looks for or downloads a driver here (``SE_OFFLINE=true`` and an explicit
``Service`` path). Without ``/usr/bin/chromium`` the tests skip, saying why, unless ``CI`` is
set: in CI a missing browser is a failure (``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from selenium.webdriver.chrome.webdriver import WebDriver

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
    # The pages are on loopback: no proxy from the environment may stand in between.
    "--no-proxy-server",
    "--window-size=1000,1100",
)
JAVASCRIPT_OFF = "--blink-settings=scriptEnabled=false"


class Launch(Protocol):
    def __call__(self, *, javascript: bool = True) -> WebDriver: ...


def _require_browser() -> None:
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if not missing:
        return
    reason = (
        f"the browser tests need Debian's chromium and chromium-driver ({', '.join(missing)} "
        "missing): apt-get install -y --no-install-recommends chromium chromium-driver"
    )
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def launch(monkeypatch: pytest.MonkeyPatch) -> Iterator[Launch]:
    """Starts a headless Chromium with a fresh profile; every one started is quit afterwards."""
    _require_browser()
    monkeypatch.setenv("SE_OFFLINE", "true")  # selenium manager: never fetch a driver
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    started: list[WebDriver] = []
    profiles: list[tempfile.TemporaryDirectory[str]] = []

    def start(*, javascript: bool = True) -> WebDriver:
        profile = tempfile.TemporaryDirectory(
            prefix="signoff-chromium-", ignore_cleanup_errors=True
        )
        profiles.append(profile)
        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile.name}")
        # The page's console (script errors, refused by the content security policy)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        if not javascript:
            options.add_argument(JAVASCRIPT_OFF)
        driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
        driver.set_page_load_timeout(30)
        started.append(driver)
        return driver

    yield start
    for driver in started:
        driver.quit()
    for profile in profiles:
        profile.cleanup()


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: a temporary folder, or the committed set ``artifacts/`` when
    ``SIGNOFF_UPDATE_SCREENSHOTS=1`` (a test run leaves the checkout as it was; renewing
    the set is a deliberate step)."""
    if os.environ.get("SIGNOFF_UPDATE_SCREENSHOTS") == "1":
        ARTIFACTS.mkdir(exist_ok=True)
        return ARTIFACTS
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def screenshot(screenshot_dir: Path) -> Callable[[WebDriver, str], Path]:
    """``screenshot(driver, name)`` saves the page as ``<name>.png`` in ``screenshot_dir``."""

    def save(driver: WebDriver, name: str) -> Path:
        path = screenshot_dir / f"{name}.png"
        assert driver.save_screenshot(str(path)), f"no screenshot saved to {path}"
        return path

    return save
