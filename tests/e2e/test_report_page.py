"""The report page as a person sees it: headless Chromium at 1,400 px, screenshot kept.

Checks what a reader would notice first: nothing runs off to the right (no sideways
scrolling, no table or plot wider than the window), every plot loads, and the figures
are formatted. ``make report-screenshot`` runs this on the demo's page
(``REPORT_PAGE``) and keeps the screenshot (``REPORT_SCREENSHOT``) for a person to look
at; without them the test builds a small report of the real local service.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pytest

from servicetools import BatchFailures, Client, LocalService, bundled, report

from ..support.browser import CHROMIUM, CHROMIUM_ARGS

WIDTH = 1400

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(300),
    pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's Chromium on PATH "
                       "(apt-get install chromium)"),
]


def _page(service: LocalService, folder: Path) -> Path:
    given = os.environ.get("REPORT_PAGE")
    if given:
        return Path(given).resolve()
    client = Client(base_url=service.base_url, api_key=service.token)
    documents = bundled.ROOT / "documents"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BatchFailures)
        batches = {name: client.extract_many(sorted((documents / name).glob("*.pdf"))[:4],
                                             configuration_name=name, progress=False)
                   for name in ("invoices", "receipts")}
    report.build(batches, folder, truth=bundled.ROOT / "truth")
    return folder / "index.html"


def _only_files(route: Any) -> None:
    # The page is self-contained: anything but its own files would be a mistake.
    if route.request.url.startswith("file://"):
        route.continue_()
    else:
        route.abort()


def test_report_page_at_1400_px(service: LocalService, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    page_path = _page(service, tmp_path / "report")
    screenshot = Path(os.environ.get("REPORT_SCREENSHOT") or tmp_path / "report.png")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": WIDTH, "height": 900})
            context.route("**/*", _only_files)
            page = context.new_page()
            page.goto(page_path.as_uri())
            page.wait_for_load_state("load")
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
            scroll_width = page.evaluate("document.documentElement.scrollWidth")
            images = page.evaluate(
                "[...document.images].map(i => ({src: i.getAttribute('src'), "
                "loaded: i.complete && i.naturalWidth > 0, "
                "right: i.getBoundingClientRect().right}))")
            tables = page.evaluate(
                "[...document.querySelectorAll('table')].map(t => t.getBoundingClientRect()"
                ".right)")
            text = page.inner_text("body")
        finally:
            browser.close()
    print(f"screenshot: {screenshot}")
    assert scroll_width <= WIDTH, f"the page scrolls sideways: {scroll_width} px wide"
    assert images and all(i["loaded"] for i in images), images
    assert max(i["right"] for i in images) <= WIDTH, images
    assert tables and max(tables) <= WIDTH, tables
    assert "%" in text and "What the columns mean" in text
