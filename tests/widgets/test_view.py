"""`ResultView` and the page renderer, on hand-made extracted data (no service)."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import ipywidgets
import pytest

from servicetools.analysis.widgets import ResultView
from servicetools.analysis.widgets._data import AMBER, GREEN, GREY, RED, summary
from servicetools.analysis.widgets.pages import first_page


def value(text: str, confidence: float | None, passed: bool = True, **extra: Any
          ) -> dict[str, Any]:
    out: dict[str, Any] = {"id": f"v-{text}", "extracted_field": text,
                           "validation_passed": passed,
                           "validation_messages": [] if passed else [f"`{text}` is wrong"]}
    if confidence is not None:
        out["confidence"] = confidence
    return {**out, **extra}


def cell(text: str, row: int, column: int, confidence: float = 0.9, passed: bool = True,
         table_id: str = "tb1") -> dict[str, Any]:
    return {"id": f"c{row}{column}", "extracted_cell": text, "table_id": table_id, "row": row,
            "column": column, "validation_passed": passed, "confidence": confidence,
            "validation_messages": [] if passed else [f"`{text}` is not an amount"]}


def result() -> dict[str, Any]:
    config = {"name": "invoices", "extraction_targets": [
        {"id": "t-number", "type": "field", "name": "Invoice Number"},
        {"id": "t-refs", "type": "field", "name": "References", "is_multiple": True},
        {"id": "t-empty", "type": "field", "name": "Due Date"},
        {"id": "t-items", "type": "table", "header_schema": [
            {"id": "h0", "name": "Description", "position": 0},
            {"id": "h1", "name": "Amount", "position": 1}]},
    ]}
    return {
        "extraction_info": {"extraction_id": "e1", "extraction_name": "a.pdf"},
        "extracted_document_storage_id": "d1",
        "used_extraction_configuration": config,
        "extracted_targets": [
            {"id": "x1", "used_extraction_target_id": "t-number", "type": "field",
             "confidence": 0.95, "extracted_values": [value("INV-1", 0.95)]},
            # A remote service without per-value confidence: the target's is used.
            {"id": "x2", "used_extraction_target_id": "t-refs", "type": "field",
             "confidence": 0.6, "extracted_values": [value("R1", None),
                                                     value("R 2", 0.3, passed=False)]},
            {"id": "x3", "used_extraction_target_id": "t-empty", "type": "field",
             "extracted_values": []},
            {"id": "x4", "used_extraction_target_id": "t-items", "type": "table",
             "confidence": 0.8, "extracted_values": [
                 cell("Widget", 0, 0), cell("10.00", 0, 1),
                 cell("Gadget", 1, 0), cell("1O.OO", 1, 1, confidence=0.2, passed=False)]},
        ],
    }


def test_fields_show_values_confidence_bars_and_validation() -> None:
    view = ResultView(result())
    assert isinstance(view, ipywidgets.VBox)
    assert [b.value for b in view.bars["t-number"]] == [0.95]
    assert [b.value for b in view.bars["t-refs"]] == [0.6, 0.3]  # target's, then own
    colours = [b.style.bar_color for b in view.bars["t-number"] + view.bars["t-refs"]]
    assert colours == [GREEN, AMBER, RED]
    assert "✓" in view.badges["t-number"][0].value
    failing = view.badges["t-refs"][1].value
    assert "✗" in failing and "`R 2` is wrong" in failing
    assert view.bars["t-empty"] == []
    header = re.sub(r"<[^>]+>", "", view.header.value)
    assert "a.pdf" in header and "e1" in header and "7 values, 2 failing" in header
    texts = [w.value for w in _walk(view) if isinstance(w, ipywidgets.HTML)]
    assert any("INV-1" in t for t in texts) and any("no value" in t for t in texts)


def test_tables_use_header_names_and_mark_failing_cells() -> None:
    view = ResultView(result())
    grid = view.tables["t-items"]["tb1"].value
    assert re.findall(r"<th[^>]*>([^<]+)</th>", grid) == ["Description", "Amount"]
    failed = re.findall(r'class="st-cell st-failed" data-row="(\d)" data-column="(\d)"', grid)
    assert failed == [("1", "1")]
    assert "`1O.OO` is not an amount" in grid and "row 1, Amount" in grid


def test_takes_the_three_part_schema_output_response() -> None:
    data = result()
    view = ResultView({"extracted_data": data, "schema_output": {}, "validation": {}})
    assert view.data["extraction_info"]["extraction_id"] == "e1"
    assert set(view.bars) == {"t-number", "t-refs", "t-empty"}


def test_unknown_confidence_is_grey_and_summary_orders_by_the_worst_value() -> None:
    data = result()
    data["extracted_targets"][0]["extracted_values"][0].pop("confidence")
    data["extracted_targets"][0].pop("confidence")
    view = ResultView(data)
    assert view.bars["t-number"][0].style.bar_color == GREY
    assert summary(data) == {"n_values": 7, "n_failed": 2, "min_confidence": 0.2}


@pytest.mark.integration
def test_importing_the_package_does_not_import_ipywidgets() -> None:
    code = ("import sys, servicetools, servicetools.analysis.widgets as w; "
            "assert 'ipywidgets' not in sys.modules; w.ResultView; "
            "assert 'ipywidgets' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_first_page_passes_images_and_renders_pdfs(invoice_pdf: bytes, invoice_png: bytes,
                                                    invoice_jpeg: bytes) -> None:
    assert first_page(invoice_png) == (invoice_png, "png")
    assert first_page(invoice_jpeg) == (invoice_jpeg, "jpeg")
    png, kind = first_page(invoice_pdf, width=300)
    assert kind == "png" and png.startswith(b"\x89PNG")
    with pytest.raises(ValueError):
        first_page(b"plain text")


def test_first_page_without_pypdfium2_says_what_to_install(
        invoice_pdf: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdfium2", None)
    with pytest.raises(ImportError, match=r"servicetools\[widgets\]"):
        first_page(invoice_pdf)


def _walk(widget: Any) -> list[Any]:
    out = [widget]
    for child in getattr(widget, "children", ()):
        out += _walk(child)
    return out
