"""Real published invoices (data/real/) through the engine: the values it reliably reads.

Expected values come from the hand-written truth files beside the documents; only the
fields the engine gets right are asserted, exactly as printed.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from servicetools.service.engine import load_document

from ..support.engine_documents import extract_all, grid

REAL = Path(__file__).parents[2] / "data" / "real"


def _truth(path: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(path.with_suffix(".truth.json").read_text())
    return result


def _extract(path: Path, configuration: dict[str, Any]) -> dict[str, Any]:
    return extract_all(load_document(path.read_bytes(), "application/pdf"), configuration)


def _value(targets: dict[str, Any], target_id: str) -> str:
    return str(targets[target_id].values[0].text)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "azure-form-recognizer-samples/Invoice_1.pdf",
            {"t-invoice-date": "Date", "t-vendor": "[vendor]", "t-customer": "Sold To",
             "t-subtotal": "Subtotal", "t-tax": "Sales Tax", "t-total": "Total"},
        ),
        (
            "gcp-documentai-toolbox/toolbox_invoice_test.pdf",
            {"t-invoice-date": "DATE", "t-due-date": "DUE", "t-vendor": "FROM",
             "t-subtotal": "Subtotal", "t-tax": "Tax", "t-total": "BALANCE DUE"},
        ),
    ],
)
def test_real_invoice_fields(
    name: str, expected: dict[str, str], invoices_config: dict[str, Any]
) -> None:
    path = REAL / name
    truth = _truth(path)["fields"]
    targets = _extract(path, invoices_config)
    assert {t: _value(targets, t) for t in expected} == {t: truth[k] for t, k in expected.items()}


def test_real_invoice_line_items(invoices_config: dict[str, Any]) -> None:
    path = REAL / "gcp-documentai-toolbox/toolbox_invoice_test.pdf"
    [table] = _truth(path)["tables"]
    targets = _extract(path, invoices_config)
    assert grid(targets["t-line-items"].cells) == {0: table["rows"][1:]}


def test_real_receipt_date_and_total(receipts_config: dict[str, Any]) -> None:
    path = REAL / "indico-toolkit/inv_sample2.pdf"
    truth = _truth(path)["fields"]
    targets = _extract(path, receipts_config)
    assert _value(targets, "t-receipt-date") == truth["Delivery Date"] == "10/22/2018"
    assert _value(targets, "t-receipt-total") == truth["Total Due for Diana Yuan"] == "$37.00"
