"""`ResultView`: one extraction's values, confidences and validation, read-only."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from . import _data, _parts
from ._parts import widgets

__all__ = ["ResultView", "table_html"]


def _cell_style(cell: Mapping[str, Any], confidence: float | None) -> str:
    if _data.failed(cell):
        return f"background:{_data.FAILED_TINT};border:2px solid {_data.RED}"
    return f"background:{_data.TINTS[_data.colour(confidence)]};border:1px solid #ddd"


def table_html(target: _data.Target, cells: list[dict[str, Any]]) -> str:
    """One table as HTML: header names as columns, cells tinted by confidence; a failing
    cell has class ``st-failed``, a red border and its messages as tooltip and below."""
    columns = _parts.columns_of(target, cells)
    by_place = {(c.get("row"), c.get("column")): c for c in cells}
    rows = sorted({r for r, _ in by_place if isinstance(r, int)})
    head = "".join(f'<th style="padding:2px 6px">{html.escape(_parts.column_name(target, p))}'
                   "</th>" for p in columns)
    body = []
    notes = []
    for r in rows:
        tds = [f'<td style="color:#888;padding:2px 6px">{r}</td>']
        for p in columns:
            cell = by_place.get((r, p))
            if cell is None:
                tds.append('<td style="border:1px dashed #ddd"></td>')
                continue
            confidence = target.confidence_of(cell)
            messages = "; ".join(str(m) for m in cell.get("validation_messages") or [])
            marked = _data.failed(cell)
            text = html.escape(_data.text_of(cell)).replace("\n", "<br>")
            tip = f"confidence {confidence:.2f}" if confidence is not None else ""
            if marked:
                tip = f"{tip}; {messages}" if tip else messages
                notes.append(f"row {r}, {html.escape(_parts.column_name(target, p))}: "
                             f"{html.escape(messages or 'validation failed')}")
            tds.append(f'<td class="st-cell{" st-failed" if marked else ""}" data-row="{r}" '
                       f'data-column="{p}" title="{html.escape(tip)}" '
                       f'style="padding:2px 6px;{_cell_style(cell, confidence)}">{text}</td>')
        body.append("<tr>" + "".join(tds) + "</tr>")
    failures = (f'<div style="color:{_data.RED}"><small>✗ ' + "<br>✗ ".join(notes)
                + "</small></div>") if notes else ""
    return ('<table class="st-table" style="border-collapse:collapse;font-size:90%">'
            f'<thead><tr><th></th>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
            f"</table>{failures}")


class ResultView(widgets.VBox):
    """Each field with its values, a confidence bar and validation state; each table as a
    grid with failing cells marked. Takes an extracted data object or the three-part
    schema-output response (a `Result` or its dict).

    Parts, for tests and for reuse: ``data`` (the extracted data object), ``header``
    (HTML), ``bars[target_id]`` and ``badges[target_id]`` (per field value: its
    FloatProgress and validation HTML), ``tables[target_id][table_id]`` (HTML).
    ``target_id`` is the configuration's target id.
    """

    def __init__(self, result: Mapping[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data = _data.extracted_data(result)
        self.header = widgets.HTML(_parts.header_html(self.data))
        self.bars: dict[str, list[Any]] = {}
        self.badges: dict[str, list[Any]] = {}
        self.tables: dict[str, dict[str, Any]] = {}
        children = [self.header]
        for target in _data.targets(self.data):
            children.append(self._table(target) if target.type == "table"
                            else self._field(target))
        self.children = children

    def _field(self, target: _data.Target) -> Any:
        rows = []
        bars, badges = self.bars.setdefault(target.target_id, []), self.badges.setdefault(
            target.target_id, [])
        for value in target.values:
            confidence = target.confidence_of(value)
            text = html.escape(_data.text_of(value)) or "<i style='color:#888'>(empty)</i>"
            if _data.failed(value):
                text = f'<span style="background:{_data.FAILED_TINT}">{text}</span>'
            bars.append(_parts.confidence_bar(confidence))
            badges.append(_parts.badge(value))
            rows.append(widgets.HBox([
                widgets.HTML(text, layout={"width": _parts.VALUE_WIDTH}), bars[-1],
                _parts.confidence_label(confidence), badges[-1]]))
        if not rows:
            rows.append(widgets.HTML("<i style='color:#888'>no value</i>"))
        return widgets.HBox([_parts.name_label(target), widgets.VBox(rows)])

    def _table(self, target: _data.Target) -> Any:
        grids = self.tables.setdefault(target.target_id, {})
        for table_id, cells in target.tables().items():
            grids[table_id] = widgets.HTML(table_html(target, cells))
        parts = list(grids.values()) or [widgets.HTML("<i style='color:#888'>no table</i>")]
        return widgets.VBox([_parts.title(target), *parts])
