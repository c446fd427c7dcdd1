"""Fixtures of the engine tests: the bundled configurations and classifier, and the drawn
documents (`tests/support/drawn_pages.py`) as bytes, PNG and OCR reads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from servicetools import bundled

from ..support.drawn_pages import (
    image_only_pdf,
    make_invoice_pdf,
    make_letter_pdf,
    make_receipt_pdf,
    make_two_page_invoice_pdf,
)
from ..support.helpers import render_png

DATA = bundled.ROOT


def load_configuration(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((DATA / "configurations" / f"{name}.json").read_text())
    return result


@pytest.fixture(scope="session")
def invoices_config() -> dict[str, Any]:
    return load_configuration("invoices")


@pytest.fixture(scope="session")
def receipts_config() -> dict[str, Any]:
    return load_configuration("receipts")


@pytest.fixture(scope="session")
def documents_classifier() -> dict[str, Any]:
    result: dict[str, Any] = json.loads((DATA / "classifiers" / "documents.json").read_text())
    return result


@pytest.fixture(scope="session")
def invoice_pdf() -> bytes:
    return make_invoice_pdf()


@pytest.fixture(scope="session")
def two_page_pdf() -> bytes:
    return make_two_page_invoice_pdf()


@pytest.fixture(scope="session")
def receipt_pdf() -> bytes:
    return make_receipt_pdf()


@pytest.fixture(scope="session")
def letter_pdf() -> bytes:
    return make_letter_pdf()


@pytest.fixture(scope="session")
def invoice_png(invoice_pdf: bytes) -> bytes:
    # 108 dpi keeps OCR quick and still reads every word of the invoice.
    return render_png(invoice_pdf, scale=1.5)


@pytest.fixture(scope="session")
def ocr_invoice(invoice_png: bytes) -> Iterator[Any]:
    """The invoice read back by OCR: loaded once because OCR takes seconds."""
    from servicetools.service.engine import load_document

    yield load_document(invoice_png, "image/png")


@pytest.fixture(scope="session")
def receipt_scan_pdf(receipt_pdf: bytes) -> bytes:
    """The receipt as a scan: an image in a PDF, without any text layer."""
    return image_only_pdf(render_png(receipt_pdf, 2.0))
