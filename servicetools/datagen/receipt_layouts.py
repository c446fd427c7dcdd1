"""Receipt layouts on narrow till paper: ``till`` (monospace, dashed separators) and
``store`` (proportional font, ruled item table).

The page is as long as its content, like a till roll: layouts draw on a tall page
and cut it to length at the end.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from decimal import Decimal

from servicetools.datagen.content import ReceiptContent
from servicetools.datagen.look import Look, pick_look, tax_label
from servicetools.datagen.printed import format_date
from servicetools.datagen.sheet import Sheet
from servicetools.datagen.table import (
    TableStyle,
    draw_table,
    item_rows,
    schema_columns,
)
from servicetools.datagen.truth import Printed

PAPER_WIDTHS = (226.77, 204.09)  # 80 mm and 72 mm rolls
MARGIN = 12.0
TALL = 5000.0


def _fields(rc: ReceiptContent) -> dict[str, str]:
    return {
        "Merchant": rc.merchant.name,
        "Date": format_date(rc.bought.date(), rc.date_format),
        "Receipt Number": rc.number,
        "Tax": rc.money.amount(rc.totals.tax) if rc.show_tax else "",
        "Total": rc.money.amount(rc.totals.total),
        "Payment Method": rc.payment,
    }


def _cut(sheet: Sheet, y: float) -> None:
    height = y + MARGIN + 8
    sheet.height = height
    sheet.page.height = height


def _no_second_page() -> float:
    raise AssertionError("a receipt is one till roll: its page has no bottom")


def _pair(
    sheet: Sheet,
    y: float,
    left: str,
    right: str,
    look: Look,
    *,
    bold: bool = False,
    size: float | None = None,
) -> None:
    font = look.font(size, bold=bold)
    sheet.page.text(MARGIN, y, left, font)
    sheet.page.text(sheet.width - MARGIN, y, right, font, "right")


def _totals(rng: random.Random, rc: ReceiptContent) -> list[tuple[str, str]]:
    money, totals, labels = rc.money, rc.totals, rc.labels
    lines = []
    if rc.show_tax or rng.random() < 0.5:
        lines.append(("Subtotal", money.amount(totals.subtotal)))
    if rc.show_tax:
        lines.append((tax_label(rng, labels["tax"], totals.tax_rate), money.amount(totals.tax)))
    lines.append((labels["total"], money.amount(totals.total)))
    return lines


def _tender(rng: random.Random, rc: ReceiptContent) -> list[tuple[str, str]]:
    lines = [(f"{rc.labels['payment']}:", rc.payment)]
    if rc.payment.lower() == "cash":
        step = rng.choice((5, 10, 20))
        change = Decimal(math.ceil(rc.totals.total / step) * step) - rc.totals.total
        lines.append(("Change", rc.money.amount(change)))
    else:
        lines.append(("Card", f"**** {rng.randint(1000, 9999)}"))
    return lines


def till(rng: random.Random, rc: ReceiptContent) -> Printed:
    look = pick_look(rng, families=("Courier",), sizes=(7.0, 7.5, 8.0), rules=("header", "none"))
    sheet = Sheet(rng.choice(PAPER_WIDTHS), TALL)
    page, labels = sheet.page, rc.labels
    fields = _fields(rc)
    mid = sheet.width / 2
    y = MARGIN + 12
    # Tills often print the name in capitals; the truth is what is printed.
    if rng.random() < 0.3:
        fields["Merchant"] = rc.merchant.name.upper()
    page.text(mid, y, fields["Merchant"], look.font(11, bold=True), "center")
    for line in [*rc.merchant.address, rc.phone]:
        y += look.size * 1.4
        page.text(mid, y, line, look.font(), "center")
    dashes = "-" * int((sheet.width - 2 * MARGIN) / look.font().width("-"))
    y += look.size * 1.8
    page.text(MARGIN, y, dashes, look.font())
    y += look.size * 1.6
    _pair(sheet, y, f"{labels['date']}: {fields['Date']}", f"{rc.bought:%H:%M}", look)
    number_on_top = rng.random() < 0.6
    if number_on_top:
        y += look.size * 1.4
        page.text(MARGIN, y, f"{labels['number']}: {rc.number}", look.font())
    y += look.size * 1.6
    style = TableStyle(look.font(), look.font(bold=True), look.rules, False, pad=3.0)
    y, tables = draw_table(
        sheet,
        x=MARGIN,
        y=y,
        width=sheet.width - 2 * MARGIN,
        bottom=TALL,
        columns=schema_columns(rc),
        rows=item_rows(rc),
        style=style,
        continue_on_new_page=_no_second_page,
        wrap_share=rng.uniform(0.42, 0.55),
    )
    y += look.size * 0.8
    page.text(MARGIN, y, dashes, look.font())
    totals = _totals(rng, rc)
    for i, (label, value) in enumerate(totals):
        y += look.size * 1.5
        last = i == len(totals) - 1
        _pair(sheet, y, label, value, look, bold=last, size=look.size + 1.5 if last else None)
    y += look.size * 0.8
    for label, value in _tender(rng, rc):
        y += look.size * 1.5
        _pair(sheet, y, label, value, look)
    if not number_on_top:
        y += look.size * 2
        page.text(MARGIN, y, f"{labels['number']}: {rc.number}", look.font())
    y += look.size * 2.2
    thanks = rng.choice(("Thank you!", "Thank you for shopping with us", "Please come again"))
    page.text(mid, y, thanks, look.font(), "center")
    _cut(sheet, y)
    return Printed("receipt", "receipt-till", sheet, fields, tables)


def store(rng: random.Random, rc: ReceiptContent) -> Printed:
    look = pick_look(
        rng, families=("Helvetica", "Times"), sizes=(7.5, 8.0, 8.5), rules=("grid", "rows")
    )
    sheet = Sheet(rng.choice(PAPER_WIDTHS), TALL)
    page, labels = sheet.page, rc.labels
    fields = _fields(rc)
    y = MARGIN + 14
    page.text(MARGIN, y, rc.merchant.name, look.font(13, bold=True))
    for line in [", ".join(rc.merchant.address), rc.phone]:
        y += look.size * 1.4
        page.text(MARGIN, y, line, look.font(look.size - 0.5))
    y += look.size * 2.2
    page.text(MARGIN, y, f"{look.label(labels['date'])} {fields['Date']}", look.font())
    page.text(sheet.width - MARGIN, y, f"{rc.bought:%H:%M}", look.font(), "right")
    y += look.size * 1.4
    page.text(MARGIN, y, f"{look.label(labels['number'])} {rc.number}", look.font())
    y += look.size * 1.2
    y, tables = draw_table(
        sheet,
        x=MARGIN,
        y=y,
        width=sheet.width - 2 * MARGIN,
        bottom=TALL,
        columns=schema_columns(rc),
        rows=item_rows(rc),
        style=TableStyle(look.font(), look.font(bold=True), look.rules, look.shade_header, pad=2.5),
        continue_on_new_page=_no_second_page,
        wrap_share=rng.uniform(0.42, 0.55),
    )
    y += look.size * 0.6
    totals = _totals(rng, rc)
    for i, (label, value) in enumerate(totals):
        y += look.size * 1.5
        last = i == len(totals) - 1
        _pair(
            sheet,
            y,
            look.label(label),
            value,
            look,
            bold=last,
            size=look.size + 2 if last else None,
        )
    y += look.size * 0.8
    for label, value in _tender(rng, rc):
        y += look.size * 1.5
        _pair(sheet, y, label, value, look)
    y += look.size * 2.2
    thanks = f"Thank you for visiting {rc.merchant.name}"
    if look.font().width(thanks) > sheet.width - 2 * MARGIN:
        thanks = "Thank you for your visit"
    page.text(sheet.width / 2, y, thanks, look.font(look.size - 0.5), "center")
    _cut(sheet, y)
    return Printed("receipt", "receipt-store", sheet, fields, tables)


LAYOUTS: dict[str, Callable[[random.Random, ReceiptContent], Printed]] = {
    "receipt-till": till,
    "receipt-store": store,
}
