"""pytest fixtures for a REAL headless Chromium driven by Playwright (see ``browser_helpers``).

* ``playwright_sync`` (session): a started ``sync_playwright()``.
* ``chromium`` (session): the system Chromium (Debian's ``chromium`` package) launched headless.
* ``browser_artifacts`` (session): where screenshots are kept for people to look at:
  ``$BIASKIT_TEST_ARTIFACTS`` or ``tests/artifacts/browser`` (git-ignored).

Everything skips with the reason when Playwright's Python package or Chromium is missing
(``make install services`` installs both).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def playwright_sync():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright's Python package is not installed (it is in the dev extra: pip install -e '.[dev]')")
    from browser_helpers import chromium_path

    if chromium_path() is None:
        pytest.skip(
            "Chromium is not installed (Debian: apt-get install chromium chromium-driver fonts-noto-core; "
            "`make services` does it)"
        )
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def chromium(playwright_sync):
    from browser_helpers import launch

    browser = launch(playwright_sync)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="session")
def browser_artifacts() -> Path:
    d = Path(os.environ.get("BIASKIT_TEST_ARTIFACTS") or Path(__file__).parent / "artifacts") / "browser"
    d.mkdir(parents=True, exist_ok=True)
    return d
