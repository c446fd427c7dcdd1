"""Invoice layouts: ``classic`` (letterhead), ``modern`` (labels above values) and
``compact`` (inline labels, quantity column first).

Each layout draws an `InvoiceContent` on a `Sheet` and reports every value
exactly as it printed it.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from servicetools.datagen.content import InvoiceContent
from servicetools.datagen.look import Look, number_pages, pick_look, tax_label
from servicetools.datagen.printed import format_date
from servicetools.datagen.sheet import Sheet
from servicetools.datagen.table import (
    Column,
    PrintedTable,
    draw_table,
    item_rows,
    schema_columns,
)
from servicetools.datagen.truth import Printed

MARGIN = 50.0
PAGE_SIZES = ((595.28, 841.89), (612.0, 792.0))  # A4, US Letter
FOOTER_SPACE = 45.0  # kept free at the bottom for notes and page numbers


def _fields(inv: InvoiceContent) -> dict[str, str]:
    money = inv.money
    return {
        "Invoice Number": inv.number,
        "Invoice Date": format_date(inv.issued, inv.date_format),
        "Due Date": format_date(inv.due, inv.date_format) if inv.due else "",
        "Vendor": inv.vendor.name,
        "Customer": inv.customer.name,
        "Subtotal": money.amount(inv.totals.subtotal) if inv.show_subtotal else "",
        "Tax": money.amount(inv.totals.tax) if inv.show_tax else "",
        "Total": money.amount(inv.totals.total),
    }


def _totals_lines(rng: random.Random, inv: InvoiceContent) -> list[tuple[str, str]]:
    money, totals, labels = inv.money, inv.totals, inv.labels
    lines = []
    if inv.show_subtotal:
        lines.append((labels["subtotal"], money.amount(totals.subtotal)))
    if inv.show_tax:
        lines.append((tax_label(rng, labels["tax"], totals.tax_rate), money.amount(totals.tax)))
    if totals.shipping:
        lines.append(("Shipping", money.amount(totals.shipping)))
    lines.append((labels["total"], money.amount(totals.total)))
    return lines


def _continuation(sheet: Sheet, look: Look, inv: InvoiceContent) -> Callable[[], float]:
    def start() -> float:
        page = sheet.new_page()
        page.text(MARGIN, MARGIN, f"{inv.vendor.name} - continued", look.font(8))
        return MARGIN + 20

    return start


def _table_and_totals(
    rng: random.Random,
    sheet: Sheet,
    look: Look,
    inv: InvoiceContent,
    y: float,
    columns: list[Column],
    rows: list[list[str]],
    *,
    right_labels: bool,
) -> tuple[float, list[PrintedTable]]:
    bottom = sheet.height - MARGIN - FOOTER_SPACE
    more = _continuation(sheet, look, inv)
    width = sheet.width - 2 * MARGIN
    y, tables = draw_table(
        sheet,
        x=MARGIN,
        y=y,
        width=width,
        bottom=bottom,
        columns=columns,
        rows=rows,
        style=look.table(),
        continue_on_new_page=more,
        wrap_share=rng.uniform(0.38, 0.55),
    )
    lines = _totals_lines(rng, inv)
    leading = look.size * 1.6
    y += 18
    if y + leading * len(lines) > bottom:
        y = more()
    value_x = sheet.width - MARGIN - 4
    label_x = sheet.width - MARGIN - 210
    for i, (label, value) in enumerate(lines):
        bold = i == len(lines) - 1
        font = look.font(look.size + (1 if bold else 0), bold=bold)
        if right_labels:
            sheet.page.text(value_x - 110, y, look.label(label), font, "right")
        else:
            sheet.page.text(label_x, y, look.label(label), font)
        sheet.page.text(value_x, y, value, font, "right")
        y += leading
    return y, tables


def _notes(sheet: Sheet, look: Look, y: float, rng: random.Random) -> None:
    notes = rng.choice(
        (
            ["Thank you for your business."],
            ["Payment terms: 30 days.", "Please quote the invoice number with your payment."],
            ["Bank transfer to IBAN DE44 5001 0517 5407 3249 31, BIC INGDDEFFXXX."],
        )
    )
    font = look.font(8)
    y += 14
    if y + 11 * len(notes) > sheet.height - MARGIN:
        return  # no room under the totals: leave the notes out rather than overlap
    for line in notes:
        sheet.page.text(MARGIN, y, line, font)
        y += 11


def classic(rng: random.Random, inv: InvoiceContent) -> Printed:
    """Vendor letterhead top left, meta block top right, customer block, ruled table."""
    look = pick_look(rng, rules=("grid", "grid", "rows"))
    sheet = Sheet(*rng.choice(PAGE_SIZES))
    page, labels = sheet.page, inv.labels
    fields = _fields(inv)
    page.text(MARGIN, MARGIN + 14, inv.vendor.name, look.font(18, bold=True))
    y = MARGIN + 32
    for line in inv.vendor.address:
        page.text(MARGIN, y, line, look.font(9))
        y += 12
    page.text(sheet.width - MARGIN, MARGIN + 16, "INVOICE", look.font(22, bold=True), "right")
    meta = [(labels["number"], fields["Invoice Number"]), (labels["date"], fields["Invoice Date"])]
    if fields["Due Date"]:
        meta.append((labels["due"], fields["Due Date"]))
    label_font = look.font(bold=True)
    label_w = max(label_font.width(look.label(label)) for label, _ in meta)
    value_w = max(look.font().width(value) for _, value in meta)
    mx = sheet.width - MARGIN - label_w - value_w - 12
    my = MARGIN + 44
    for label, value in meta:
        page.text(mx, my, look.label(label), label_font)
        page.text(mx + label_w + 12, my, value, look.font())
        my += look.size * 1.5
    y = max(y, my) + 22
    page.text(MARGIN, y, look.label(labels["customer"]), look.font(bold=True))
    y += look.size * 1.4
    page.text(MARGIN, y, inv.customer.name, look.font())
    for line in inv.customer.address:
        y += look.size * 1.3
        page.text(MARGIN, y, line, look.font())
    y, tables = _table_and_totals(
        rng, sheet, look, inv, y + 30, schema_columns(inv), item_rows(inv), right_labels=False
    )
    _notes(sheet, look, y, rng)
    number_pages(sheet, look.font(8), MARGIN, always=rng.random() < 0.3)
    return Printed("invoice", "invoice-classic", sheet, fields, tables)


def modern(rng: random.Random, inv: InvoiceContent) -> Printed:
    """Big title, a row of labelled meta cells, From / Bill To blocks, light table."""
    look = pick_look(rng, families=("Helvetica", "Times"), rules=("rows", "header", "none"))
    sheet = Sheet(*rng.choice(PAGE_SIZES))
    page, labels = sheet.page, inv.labels
    fields = _fields(inv)
    page.text(
        MARGIN,
        MARGIN + 22,
        rng.choice(("Invoice", "INVOICE", "Tax Invoice")),
        look.font(26, bold=True),
    )
    meta = [(labels["number"], fields["Invoice Number"]), (labels["date"], fields["Invoice Date"])]
    if fields["Due Date"]:
        meta.append((labels["due"], fields["Due Date"]))
    cell_w = (sheet.width - 2 * MARGIN) / 3
    for i, (label, value) in enumerate(meta):
        x = MARGIN + i * cell_w
        page.text(x, MARGIN + 56, label, look.font(8, bold=True))
        page.text(x, MARGIN + 70, value, look.font(11))
    y0 = MARGIN + 110
    blocks = ((labels["vendor"], inv.vendor), (labels["customer"], inv.customer))
    bottom = y0
    for i, (label, party) in enumerate(blocks):
        x = MARGIN + i * (sheet.width - 2 * MARGIN) / 2
        page.text(x, y0, label, look.font(8, bold=True))
        y = y0 + 15
        page.text(x, y, party.name, look.font(10.5, bold=True))
        for line in party.address:
            y += 12
            page.text(x, y, line, look.font(9))
        bottom = max(bottom, y)
    y, tables = _table_and_totals(
        rng, sheet, look, inv, bottom + 34, schema_columns(inv), item_rows(inv), right_labels=True
    )
    _notes(sheet, look, y, rng)
    number_pages(sheet, look.font(8), MARGIN, always=False)
    return Printed("invoice", "invoice-modern", sheet, fields, tables)


def compact(rng: random.Random, inv: InvoiceContent) -> Printed:
    """Typewriter style: inline "Label: value" lines, quantity column first, unruled table."""
    look = pick_look(rng, families=("Courier", "Times"), rules=("header", "none", "rows"))
    look = Look(look.family, look.size, ":", look.rules, look.shade_header)
    sheet = Sheet(*rng.choice(PAGE_SIZES))
    page, labels = sheet.page, inv.labels
    fields = _fields(inv)
    page.text(sheet.width / 2, MARGIN + 12, "INVOICE", look.font(16, bold=True), "center")
    left = [(labels["vendor"], inv.vendor.name), (labels["customer"], inv.customer.name)]
    right = [(labels["number"], fields["Invoice Number"]), (labels["date"], fields["Invoice Date"])]
    if fields["Due Date"]:
        right.append((labels["due"], fields["Due Date"]))
    font = look.font()
    y = MARGIN + 44
    for label, value in left:
        page.text(MARGIN, y, f"{look.label(label)} {value}", font)
        y += look.size * 1.5
    ry = MARGIN + 44
    rx = sheet.width / 2 + 40
    for label, value in right:
        page.text(rx, ry, f"{look.label(label)} {value}", font)
        ry += look.size * 1.5
    rows = item_rows(inv)
    columns = schema_columns(inv)
    numbered = rng.random() < 0.5
    # Quantity first, as many typed invoices print it; the truth keeps schema order.
    columns = [columns[1], columns[0], columns[2], columns[3]]
    rows = [[r[1], r[0], r[2], r[3]] for r in rows]
    if numbered:
        columns.insert(0, Column("#", None, "right"))
        rows = [[str(i), *r] for i, r in enumerate(rows, start=1)]
    y, tables = _table_and_totals(
        rng, sheet, look, inv, max(y, ry) + 26, columns, rows, right_labels=True
    )
    _notes(sheet, look, y, rng)
    number_pages(sheet, look.font(8), MARGIN, always=rng.random() < 0.5)
    return Printed("invoice", "invoice-compact", sheet, fields, tables)


LAYOUTS: dict[str, Callable[[random.Random, InvoiceContent], Printed]] = {
    "invoice-classic": classic,
    "invoice-modern": modern,
    "invoice-compact": compact,
}
