"""The review notebook in a real browser: JupyterLab driven by Playwright in Chromium.

Runs `notebooks/04-review-and-correct.ipynb` in JupyterLab (Run > Run All Cells), types a
corrected receipt number into the `ResultEditor` of its last form, clicks Save, and asks
the service whether it kept the correction. Needs Debian's Chromium (``apt-get install
chromium``): Playwright drives that binary, it downloads no browser of its own. Everything
stays on loopback: the browser may reach nothing else.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from servicetools import Client, LocalService

from ..support.browser import CHROMIUM, CHROMIUM_ARGS, Lab

#: What the reviewer types: a receipt number the configuration's validation accepts.
CORRECTED = "E2E-20261121"
#: Milliseconds: opening the notebook and its kernel; running every cell (it extracts
#: seven receipts, two of them scans read by OCR); one widget round trip.
OPEN_MS, RUN_MS, STEP_MS = 60_000, 120_000, 20_000
LOOPBACK = {"127.0.0.1", "localhost", "::1"}

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(300),
    pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's Chromium on PATH "
                       "(apt-get install chromium); see notebooks/README.md"),
]


def _loopback_only(route: Any) -> None:
    if urlsplit(route.request.url).hostname in LOOPBACK:
        route.continue_()
    else:
        route.abort()


def _receipt_number(client: Client, extraction_id: str) -> list[str]:
    result = client.get_result(extraction_id)
    target = next(t for t in result["extracted_targets"]
                  if t["used_extraction_target_id"] == "t-receipt-number")
    return [v["extracted_field"] for v in target["extracted_values"]]


def test_correct_a_value_in_jupyterlab(lab: Lab, service: LocalService,
                                       tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    screenshot = tmp_path / "e2e-review.png"
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1500, "height": 1000})
            context.route("**/*", _loopback_only)
            page = context.new_page()
            problems: list[str] = []
            page.on("pageerror", lambda error: problems.append(str(error)))
            try:
                extraction_id = _review(page, sync_api.expect, lab)
            except Exception:
                page.screenshot(path=str(screenshot), full_page=True)
                print(f"screenshot: {screenshot}\npage errors: {problems}\n"
                      f"JupyterLab log:\n{lab.log_tail()}")
                raise
            page.screenshot(path=str(screenshot))
        finally:
            browser.close()
    print(f"screenshot: {screenshot}")

    with Client(base_url=service.base_url, api_key=service.token) as client:
        assert _receipt_number(client, extraction_id) == [CORRECTED]


def _review(page: Any, expect: Any, lab: Lab) -> str:
    """Open the notebook, run it, correct the receipt number in its last form; the id."""
    page.goto(lab.notebook_url("04-review-and-correct.ipynb"), timeout=OPEN_MS)
    # The status bar names the kernel once it is connected: "Python 3 (ipykernel) | Idle".
    kernel = page.locator(".jp-StatusBar-Widget", has_text=re.compile(r"ipykernel\) \| Idle"))
    expect(kernel.first).to_be_visible(timeout=OPEN_MS)
    select = page.locator(".jp-Dialog").get_by_role("button", name="Select", exact=True)
    if select.is_visible():  # JupyterLab may still ask which kernel: the notebook's own
        select.click()

    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-item:visible", has_text=re.compile(r"^Run All Cells")).click()

    # The last form's cell prints its extraction id, then shows the ResultEditor.
    cell = page.locator(".jp-CodeCell").filter(
        has=page.locator(".jp-OutputArea-output", has_text="extraction_id:"))
    printed = cell.locator(".jp-OutputArea-output", has_text="extraction_id:")
    expect(printed).to_be_visible(timeout=RUN_MS)
    match = re.search(r"extraction_id: (\S+)", printed.inner_text())
    assert match, printed.inner_text()
    extraction_id = match.group(1)

    label = page.locator(".widget-html-content > b", has_text=re.compile(r"^Receipt Number$"))
    field = cell.locator(".widget-hbox").filter(has=label).locator("input[type='text']").first
    expect(field).to_be_visible(timeout=STEP_MS)
    field.fill(CORRECTED)
    field.press("Tab")
    status = cell.locator(".widget-html-content", has_text="unsaved change")
    expect(status).to_be_visible(timeout=STEP_MS)  # the kernel saw the edit

    cell.locator("button", has_text="Save").click()
    saved = cell.locator(".widget-html-content", has_text=re.compile(r"Saved 1 change"))
    expect(saved).to_be_visible(timeout=STEP_MS)
    field.scroll_into_view_if_needed()
    # Every cell ran cleanly: printed text shows, no cell shows a traceback.
    outputs = page.locator(".jp-OutputArea-output")
    assert outputs.and_(page.locator("[data-mime-type='application/vnd.jupyter.stdout']")
                        ).count() > 0
    # (JupyterLab renders an error output as stderr text holding the traceback.)
    errors = outputs.and_(page.locator("[data-mime-type='application/vnd.jupyter.stderr']")
                          ).filter(has_text="Traceback")
    assert errors.count() == 0, errors.all_inner_texts()
    return extraction_id
