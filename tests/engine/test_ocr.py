"""The engine on scans: OCR takes seconds, so each document is read once per session."""

from typing import Any

import pytest

from servicetools.service.engine import Document, load_document

from ..support.drawn_pages import INVOICE_ROWS
from ..support.engine_documents import EXPECTED_INVOICE, extract_all, field_values, grid, line_items


def test_png_invoice_fields(ocr_invoice: Document, invoices_config: dict[str, Any]) -> None:
    [page] = ocr_invoice.pages
    assert page.source == "ocr"
    targets = extract_all(ocr_invoice, invoices_config)
    assert field_values(targets) == EXPECTED_INVOICE
    assert all(t.confidence >= 0.8 for t in targets.values())


def test_png_invoice_line_items(ocr_invoice: Document, invoices_config: dict[str, Any]) -> None:
    assert grid(line_items(ocr_invoice, invoices_config)) == {
        0: [list(row) for row in INVOICE_ROWS]
    }


def test_png_invoice_is_classified(
    ocr_invoice: Document, documents_classifier: dict[str, Any]
) -> None:
    from servicetools.service.engine import classify

    assert classify(ocr_invoice, documents_classifier)[0] == "invoice"


@pytest.fixture(scope="module")
def ocr_receipt(receipt_scan_pdf: bytes) -> Document:
    return load_document(receipt_scan_pdf, "application/pdf")


def test_scanned_pdf_receipt(ocr_receipt: Document, receipts_config: dict[str, Any]) -> None:
    targets = extract_all(ocr_receipt, receipts_config)
    values = field_values(targets)
    # The name at the top and the address under it; OCR drops the name's space and
    # misreads the town, so they are compared loosely.
    assert values.pop("t-merchant").replace(" ", "").lower() == "cornergrocery"
    assert values.pop("t-address").startswith("12 Main Street")
    assert values == {
        "t-receipt-date": "15.03.2024",
        "t-receipt-number": "R-004512",
        "t-receipt-tax": "1.20",
        "t-receipt-total": "12.40",
        "t-payment": "VISA",
    }
    assert grid(targets["t-receipt-items"].cells) == {
        0: [["Bread", "1", "", "2.40"], ["Milk", "2", "", "2.00"], ["Apples", "1", "", "6.80"]]
    }


@pytest.mark.parametrize(("height", "width", "limited"), [
    (2000, 1545, False),  # a US letter page as the OCR reads it: the plain detector
    (1754, 1241, False),  # an A4 page at 150 dpi
    (2000, 2000, True),  # a square page of 50 MP, brought to 2000 px a side
])
def test_only_a_page_read_larger_than_a_letter_page_has_its_detector_limited(
    height: int, width: int, limited: bool,
) -> None:
    import numpy as np

    from servicetools.service.engine import ocr

    engine = ocr._ocr(np.zeros((height, width, 3), np.uint8))
    detector = engine.cfg.Det
    assert (detector.limit_type, detector.limit_side_len) == (
        ("max", ocr.LARGE_DETECTOR_SIDE) if limited else ("min", 736))
