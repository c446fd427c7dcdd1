"""Line-item tables: column sizing, in-cell wrapping, rules, and continuation on new pages.

The drawer returns what it printed on each page, in the order of the
configurations' ``header_schema`` (Description, Quantity, Unit Price, Amount), which
is exactly the ground truth of the table target.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from servicetools.datagen.sheet import Align, Font, Sheet, wrap

if TYPE_CHECKING:
    from servicetools.datagen.content import InvoiceContent, ReceiptContent

Rules = Literal["grid", "rows", "header", "none"]
SCHEMA_WIDTH = 4  # Description, Quantity, Unit Price, Amount


@dataclass(frozen=True)
class Column:
    header: str
    slot: int | None  # position in the header_schema; None for columns the schema ignores
    align: Align = "left"
    wraps: bool = False  # takes the width the other columns leave and wraps into it


@dataclass(frozen=True)
class TableStyle:
    font: Font
    bold: Font
    rules: Rules = "grid"
    shade_header: bool = False
    pad: float = 4.0
    leading_factor: float = 1.25

    @property
    def leading(self) -> float:
        return self.font.size * self.leading_factor


@dataclass
class PrintedTable:
    """One table as printed on one page (a continuation is another PrintedTable)."""

    page: int
    rows: list[list[str]] = field(default_factory=list)

    def as_truth(self) -> dict[str, object]:
        return {"page": self.page, "rows": self.rows}


def _column_widths(
    columns: list[Column], rows: list[list[str]], style: TableStyle, total: float, wrap_share: float
) -> list[float]:
    widths: list[float] = []
    for i, col in enumerate(columns):
        natural = max([style.bold.width(col.header)] + [style.font.width(r[i]) for r in rows])
        widths.append(natural + 2 * style.pad)
    flexible = [i for i, col in enumerate(columns) if col.wraps]
    fixed = [i for i in range(len(columns)) if i not in flexible]
    spare = total - sum(widths[i] for i in fixed)
    # Capping the wrapping column is what makes long descriptions wrap in their cell;
    # the width it leaves goes to the other columns, as on real invoices.
    share = min(spare, total * wrap_share) if fixed else spare
    for i in flexible:
        widths[i] = max(share / len(flexible), 60.0)
    # Row numbers and other columns outside the schema keep their natural width.
    growing = [i for i in fixed if columns[i].slot is not None] or fixed
    for i in growing:
        widths[i] += (spare - share) / len(growing)
    return widths


def draw_table(
    sheet: Sheet,
    *,
    x: float,
    y: float,
    width: float,
    bottom: float,
    columns: list[Column],
    rows: list[list[str]],
    style: TableStyle,
    continue_on_new_page: Callable[[], float],
    wrap_share: float = 1.0,
) -> tuple[float, list[PrintedTable]]:
    """Draw ``rows`` under a header at (x, y); return the y below the table and the tables printed.

    When a row would cross ``bottom`` the table closes, ``continue_on_new_page``
    opens a page and returns where the table resumes, and the header is repeated.
    Wrapping columns take at most ``wrap_share`` of ``width``.
    """
    widths = _column_widths(columns, rows, style, width, wrap_share)
    lefts = [x + sum(widths[:i]) for i in range(len(columns))]
    right = x + sum(widths)
    # Wrapped cells as printed: the lines of a cell joined by a newline.
    cells = [
        [
            "\n".join(wrap(text, style.font, widths[i] - 2 * style.pad)) if col.wraps else text
            for i, (col, text) in enumerate(zip(columns, row, strict=True))
        ]
        for row in rows
    ]

    def row_height(row: list[str]) -> float:
        lines = max(cell.count("\n") + 1 for cell in row)
        return lines * style.leading + 2 * style.pad - (style.leading - style.font.size)

    def draw_row(top: float, row: list[str], font: Font) -> float:
        page = sheet.page
        height = row_height(row)
        for i, (col, cell) in enumerate(zip(columns, row, strict=True)):
            for n, line in enumerate(cell.split("\n")):
                baseline = top + style.pad + font.size * 0.8 + n * style.leading
                if col.align == "right":
                    page.text(lefts[i] + widths[i] - style.pad, baseline, line, font, "right")
                elif col.align == "center":
                    page.text(lefts[i] + widths[i] / 2, baseline, line, font, "center")
                else:
                    page.text(lefts[i] + style.pad, baseline, line, font)
        if style.rules in ("grid", "rows"):
            page.rule(x, top + height, right, top + height)
        return top + height

    def draw_header(top: float) -> float:
        header = [col.header for col in columns]
        height = row_height(header)
        if style.shade_header:
            sheet.page.shade(x, top, right - x, height)
        if style.rules != "none":
            sheet.page.rule(x, top, right, top, 0.9)
        end = draw_row(top, header, style.bold)
        if style.rules == "header":
            sheet.page.rule(x, end, right, end, 0.9)
        return end

    def close(top: float, end: float) -> None:
        if style.rules == "grid":
            for edge in [*lefts, right]:
                sheet.page.rule(edge, top, edge, end)

    printed: list[PrintedTable] = []
    header_h = row_height([col.header for col in columns])
    if cells and y + header_h + row_height(cells[0]) > bottom:
        y = continue_on_new_page()
    top = y
    y = draw_header(y)
    current = PrintedTable(sheet.page_number)
    for row in cells:
        if y + row_height(row) > bottom:
            close(top, y)
            printed.append(current)
            top = y = continue_on_new_page()
            y = draw_header(y)
            current = PrintedTable(sheet.page_number)
        y = draw_row(y, row, style.font)
        truth = [""] * SCHEMA_WIDTH
        for col, cell in zip(columns, row, strict=True):
            if col.slot is not None:
                truth[col.slot] = cell
        current.rows.append(truth)
    close(top, y)
    printed.append(current)
    return y, printed


def item_rows(content: InvoiceContent | ReceiptContent) -> list[list[str]]:
    """The line items as printed, in header_schema order (the truth's column order)."""
    money = content.money
    return [
        [
            item.description,
            money.quantity(item.quantity),
            money.cell(item.unit_price),
            money.cell(item.amount),
        ]
        for item in content.items
    ]


def schema_columns(content: InvoiceContent | ReceiptContent) -> list[Column]:
    """The four columns of the configurations' header_schema, with this document's labels."""
    labels = content.labels
    return [
        Column(labels["description"], 0, wraps=True),
        Column(labels["quantity"], 1, "right"),
        Column(labels["price"], 2, "right"),
        Column(labels["amount"], 3, "right"),
    ]
