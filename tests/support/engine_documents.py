"""Engine inputs made in code, and the engine called on them: one-page documents of
lines or placed phrases (text layer or OCR words), table PDFs drawn with reportlab, table
targets, and the extraction's results by target id or as grids of cell texts."""

from __future__ import annotations

import io
from typing import Any

from servicetools.service.engine import (
    Document,
    EngineCell,
    EngineTarget,
    Page,
    TargetGroup,
    Word,
    extract_group,
    group_targets,
)

__all__ = [
    "EXPECTED_INVOICE",
    "REGIONS",
    "Row",
    "columns",
    "extract_all",
    "field_values",
    "grid",
    "line_document",
    "line_items",
    "placed",
    "read_document",
    "stacked",
    "table_pdf",
    "tables_of",
    "target",
]


EXPECTED_INVOICE = {
    "t-invoice-number": "INV-2024-0012",
    "t-invoice-date": "2024-03-15",
    "t-due-date": "2024-04-14",
    "t-vendor": "Acme Supplies Ltd",
    "t-customer": "Globex Corporation",
    "t-subtotal": "1,250.00",
    "t-tax": "250.00",
    "t-total": "1,500.00",
}


def line_document(*lines: str | tuple[str, float]) -> Document:
    """A one-page document of text lines; a tuple gives the line's x position."""
    words = []
    for number, line in enumerate(lines):
        text, x = (line, 0.05) if isinstance(line, str) else line
        y = 0.05 + 0.03 * number
        for token in text.split():
            width = 0.012 * len(token)
            words.append(Word(token, x, y, x + width, y + 0.015))
            x += width + 0.006
    return Document("application/pdf", [Page(1, 612, 792, b"", words, "text")])


def placed(*phrases: tuple[str, float, float]) -> Document:
    """A one-page document of phrases at (x, y), words 0.015 high."""
    words = []
    for text, x, y in phrases:
        for token in text.split():
            words.append(Word(token, x, y, x + 0.012 * len(token), y + 0.015))
            x += 0.012 * len(token) + 0.006
    return Document("application/pdf", [Page(1, 612, 792, b"", words, "text")])


_BODY = 0.015

def stacked(*lines: str | tuple[str, float]) -> Document:
    """A one-page document of lines one under the other; a tuple gives the line's height."""
    words = []
    y = 0.03
    for line in lines:
        text, height = (line, _BODY) if isinstance(line, str) else line
        x = 0.05
        for token in text.split():
            width = 0.8 * height * len(token)
            words.append(Word(token, x, y, x + width, y + height))
            x += width + 0.4 * height
        y += height + 0.01
    return Document("application/pdf", [Page(1, 612, 792, b"", words, "text")])


def columns(*rows: tuple[str, str]) -> Document:
    """A one-page document of rows as receipts print them: the words left, the amounts
    apart in a column on the right."""
    phrases = []
    for number, (words, amounts) in enumerate(rows):
        y = 0.05 + 0.03 * number
        phrases += [(words, 0.05, y), (amounts, 0.6, y)]
    return placed(*phrases)


# What the recogniser reports for a clear word; text-layer words are 1.0.
_READ = 0.93

def read_document(*lines: str) -> Document:
    """A one-page scan of text lines, as OCR words (confidence below 1)."""
    words = []
    for number, line in enumerate(lines):
        x, y = 0.05, 0.05 + 0.03 * number
        for token in line.split():
            width = 0.012 * len(token)
            words.append(Word(token, x, y, x + width, y + 0.015, _READ))
            x += width + 0.006
    return Document("image/png", [Page(1, 800, 1600, b"", words, "ocr")])


def extract_all(document: Document, configuration: dict[str, Any]) -> dict[str, EngineTarget]:
    return {
        target.target_id: target
        for group in group_targets(configuration)
        for target in extract_group(document, group, configuration)
    }


def field_values(targets: dict[str, EngineTarget]) -> dict[str, str]:
    return {key: target.values[0].text for key, target in targets.items() if target.type == "field"}


def line_items(document: Document, configuration: dict[str, Any]) -> list[EngineCell]:
    target = next(t for t in configuration["extraction_targets"] if t["type"] == "table")
    [result] = extract_group(document, TargetGroup("all", "all", (target,)), configuration)
    assert result.type == "table" and result.values == []
    return result.cells


def grid(cells: list[EngineCell]) -> dict[int, list[list[str]]]:
    """Cells as {table_index: rows of cell texts by column}, checking the grid is complete."""
    tables: dict[int, dict[int, dict[int, str]]] = {}
    for cell in cells:
        tables.setdefault(cell.table_index, {}).setdefault(cell.row, {})[cell.column] = cell.text
    result = {}
    for index, rows in tables.items():
        assert sorted(rows) == list(range(len(rows)))
        result[index] = [[row[c] for c in sorted(row)] for _, row in sorted(rows.items())]
    return result


Row = tuple[str, ...]


REGIONS: list[Row] = [("Region", "Sales", "Staff", "Stores"), ("North", "1200", "15", "4"),
                      ("South", "950", "11", "3"), ("East", "430", "6", "2")]


def table_pdf(*tables: tuple[float, list[Row]], ruled: bool = False,
              columns: tuple[float, ...] = (60, 220, 330, 440),
              prose: tuple[str, ...] = ()) -> bytes:
    """A one-page PDF with the tables (top y in points, rows of cells) drawn in it; with
    `prose`, a page of those lines before it."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    if prose:
        for number, line in enumerate(prose):
            page.drawString(60, 780 - 16 * number, line)
        page.showPage()
    page.setFont("Helvetica", 10)
    page.drawString(60, 800, "Annual report 2024")
    for top, rows in tables:
        y = top
        for row in rows:
            for x, text in zip(columns, row, strict=False):
                page.drawString(x + 4, y, text)
            if ruled:
                page.line(columns[0], y - 4, 560, y - 4)
            y -= 16
        if ruled:
            page.line(columns[0], top + 12, 560, top + 12)
            for x in (*columns, 560):
                page.line(x, top + 12, x, y + 12)
    page.save()
    return buffer.getvalue()


def target(*names: str, target_id: str = "t-table", rules: bool = False) -> dict[str, Any]:
    schema = []
    for position, name in enumerate(names):
        column: dict[str, Any] = {"id": f"h-{position}", "name": name, "position": position}
        if rules:
            rule = {"type": "not_empty"} if position == 0 else {"type": "number"}
            column["extracted_value_validation_tree"] = {
                "name": name, "rule_groups": [{"name": "value", "rules": [rule]}]}
        schema.append(column)
    return {"id": target_id, "type": "table", "name": target_id, "search_area": "all",
            "search_area_type": "all", "extraction_group_id": "g", "header_schema": schema,
            "creation_unix_timestamp": 0.0}


def tables_of(document: Document, *targets: dict[str, Any]) -> dict[str, list[EngineCell]]:
    configuration = {"extraction_targets": list(targets)}
    results = extract_group(document, TargetGroup("all", "all", tuple(targets)), configuration)
    return {r.target_id: r.cells for r in results}


def field_target(target_id: str, name: str, description: str,
                 example: str = "") -> dict[str, Any]:
    """A field target of a user's own configuration, over the whole document."""
    return {"id": target_id, "type": "field", "name": name, "description": description,
            "example": example, "validation_tree": None, "is_multiple": False,
            "search_area": "all", "search_area_type": "all", "extraction_group_id": "g",
            "creation_unix_timestamp": 0.0}


def first_values(document: Document, *targets: dict[str, Any]) -> dict[str, str]:
    """Each target's first value, by target id, under a configuration of these targets."""
    configuration = {"id": "c", "name": "mine", "extraction_targets": list(targets)}
    return {key: target.values[0].text
            for key, target in extract_all(document, configuration).items()}
