"""PDF pages drawn with reportlab for the engine tests, so every expected value is exact:
an invoice (one and two pages), a receipt, a letter, and a scan made of a page."""

from __future__ import annotations

import io
from typing import Any

__all__ = ["INVOICE_ROWS", "image_only_pdf", "letter_canvas", "long_rows", "make_invoice_pdf",
           "make_letter_pdf", "make_receipt_pdf", "make_two_page_invoice_pdf"]

INVOICE_ROWS = [
    ("Widget A", "2", "250.00", "500.00"),
    ("Consulting services,\nMarch 2024", "10", "50.00", "500.00"),
    ("Support plan", "1", "250.00", "250.00"),
]

# Column anchors in points: description is left-aligned, numbers right-aligned under
# their headers, as most invoices print them.
_DESC_X, _QTY_RIGHT, _PRICE_RIGHT, _AMOUNT_RIGHT = 50, 318, 420, 530


def letter_canvas(buffer: io.BytesIO) -> Any:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    return canvas.Canvas(buffer, pagesize=letter, pageCompression=0)


def _invoice_header(c: Any, top: float = 740) -> None:
    c.setFont("Helvetica-Bold", 20)
    c.drawString(50, top, "INVOICE")
    c.setFont("Helvetica", 10)
    c.drawString(50, top - 40, "From: Acme Supplies Ltd")
    c.drawString(50, top - 54, "12 Harbour Road, Springfield")
    c.drawString(360, top - 40, "Invoice No: INV-2024-0012")
    c.drawString(360, top - 54, "Date: 2024-03-15")
    c.drawString(360, top - 68, "Due Date: 2024-04-14")
    c.drawString(50, top - 110, "Bill To:")
    c.drawString(50, top - 124, "Globex Corporation")
    c.drawString(50, top - 138, "742 Evergreen Terrace")


def _table_header(c: Any, y: float) -> None:
    c.setFont("Helvetica-Bold", 10)
    c.drawString(_DESC_X, y, "Description")
    c.drawRightString(_QTY_RIGHT, y, "Qty")
    c.drawRightString(_PRICE_RIGHT, y, "Unit Price")
    c.drawRightString(_AMOUNT_RIGHT, y, "Amount")
    c.line(_DESC_X, y - 4, _AMOUNT_RIGHT, y - 4)
    c.setFont("Helvetica", 10)


def _table_rows(c: Any, y: float, rows: list[tuple[str, str, str, str]]) -> float:
    for description, qty, price, amount in rows:
        lines = description.split("\n")
        c.drawString(_DESC_X, y, lines[0])
        c.drawRightString(_QTY_RIGHT, y, qty)
        c.drawRightString(_PRICE_RIGHT, y, price)
        c.drawRightString(_AMOUNT_RIGHT, y, amount)
        for extra in lines[1:]:
            y -= 12
            c.drawString(_DESC_X, y, extra)
        y -= 18
    return y


def _totals(c: Any, y: float, subtotal: str, tax: str, total: str) -> float:
    for label, value in (("Subtotal:", subtotal), ("Tax:", tax), ("Total:", total)):
        c.drawString(360, y, label)
        c.drawRightString(_AMOUNT_RIGHT, y, value)
        y -= 16
    return y


def make_invoice_pdf() -> bytes:
    buffer = io.BytesIO()
    c = letter_canvas(buffer)
    _invoice_header(c)
    _table_header(c, 560)
    y = _table_rows(c, 540, INVOICE_ROWS)
    _totals(c, y - 20, "1,250.00", "250.00", "1,500.00")
    c.drawString(50, 120, "Payment terms: 30 days.")
    c.save()
    return buffer.getvalue()


def long_rows() -> tuple[list[tuple[str, str, str, str]], list[tuple[str, str, str, str]]]:
    """Rows of the two-page invoice: those on page 1, those on page 2."""
    rows = [(f"Item {n:02d}", str(n), "10.00", f"{10 * n:.2f}") for n in range(1, 31)]
    return rows[:22], rows[22:]


def make_two_page_invoice_pdf() -> bytes:
    first, second = long_rows()
    buffer = io.BytesIO()
    c = letter_canvas(buffer)
    _invoice_header(c)
    _table_header(c, 560)
    _table_rows(c, 540, first)
    c.drawString(50, 60, "Continued on next page")
    c.showPage()
    _table_header(c, 740)
    y = _table_rows(c, 720, second)
    total = sum(float(r[3]) for r in first + second)
    _totals(c, y - 20, f"{total:,.2f}", "0.00", f"{total:,.2f}")
    c.save()
    return buffer.getvalue()


def make_receipt_pdf() -> bytes:
    from reportlab.lib.pagesizes import A6

    buffer = io.BytesIO()
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(buffer, pagesize=A6)
    c.setFont("Helvetica-Bold", 12)
    c.drawString(20, 390, "CORNER GROCERY")
    c.setFont("Helvetica", 8)
    c.drawString(20, 376, "12 Main Street, Springfield")
    c.drawString(20, 360, "Receipt No: R-004512")
    c.drawString(20, 348, "Date: 15.03.2024")
    c.drawString(20, 320, "Item")
    c.drawRightString(200, 320, "Qty")
    c.drawRightString(270, 320, "Amount")
    y = 306
    for item, qty, amount in (
        ("Bread", "1", "2.40"),
        ("Milk", "2", "2.00"),
        ("Apples", "1", "6.80"),
    ):
        c.drawString(20, y, item)
        c.drawRightString(200, y, qty)
        c.drawRightString(270, y, amount)
        y -= 12
    c.drawString(20, y - 10, "Tax: 1.20")
    c.drawString(20, y - 22, "TOTAL: 12.40")
    c.drawString(20, y - 34, "Paid By: VISA")
    c.drawString(20, y - 58, "Thank you for shopping at our store!")
    c.save()
    return buffer.getvalue()


def make_letter_pdf() -> bytes:
    """A page with text but none of the invoice labels, dates or amounts."""
    buffer = io.BytesIO()
    c = letter_canvas(buffer)
    c.setFont("Helvetica", 11)
    for i, line in enumerate(
        [
            "Dear neighbour,",
            "the garden party moves to the community hall this year.",
            "Please bring a chair and something to share.",
            "Kind regards, the committee",
        ]
    ):
        c.drawString(60, 720 - 16 * i, line)
    c.save()
    return buffer.getvalue()


def image_only_pdf(png: bytes) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(out, format="PDF", resolution=144.0)
    return out.getvalue()
