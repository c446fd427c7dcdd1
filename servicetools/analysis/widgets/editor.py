"""`ResultEditor`: correct one extraction's values and send them to the update endpoint."""

from __future__ import annotations

import html
import uuid
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...client.errors import ServiceError
from ...client.result import extraction_id_of
from ..ledger import COLUMNS, Ledger
from . import _data, _parts
from ._parts import widgets

if TYPE_CHECKING:
    from ...client import Client

__all__ = ["ResultEditor"]

_Place = tuple[str, int, int]  # table_id, row, column


class ResultEditor(widgets.VBox):
    """One extraction, editable; Save sends the changed targets to the service (D8).

    Save sends ``updates()``, one update per target whose values changed, with
    ``client.update_results``, shows the result the service answers (re-validated), and
    appends one row per changed value to ``ledger``. ``changes()`` lists the changes not
    saved yet, as ledger rows: it is empty after a Save, whose changes are in ``ledger``.
    A `ServiceError` is shown in ``status`` and the edits stay.

    ``extraction_id`` is an id (or the answer of ``trigger_async``), whose result is
    fetched from the service (a `ServiceError` if it cannot be), or a result in hand (the
    `Result` of ``trigger_sync`` or ``get_result``, or its dict), shown as it is:
    ``ResultEditor(client, client.trigger_sync(...))``. ``result`` also skips the fetch,
    when the caller holds the current extracted data of an id already.

    Controls, to drive it from Python (``target_id`` is the configuration's target id):

    - ``inputs[target_id]``: the Text of each value of a field, in order;
    - ``cells[target_id][table_id, row, column]``: the Text (Textarea) of each table cell;
    - ``add_buttons[target_id]`` (fields with ``is_multiple``) and
      ``remove_buttons[target_id][i]``: add an empty value, remove value ``i``;
    - ``add_row_buttons[target_id][table_id]``, ``remove_row_buttons[target_id][table_id,
      row]``: add an empty row at the end, remove a row;
    - ``save_button``, ``reset_button`` (back to the last saved state), ``status`` (HTML).

    Save and Reset build the value controls anew: look them up again after either.
    ``data`` is the extracted data as last saved, ``original`` as first loaded (what
    `confirm` records), ``error`` the last error of Save (None after a success).
    """

    def __init__(self, client: Client, extraction_id: str | Mapping[str, Any],
                 ledger: Ledger | None = None, *, result: Mapping[str, Any] | None = None,
                 audit_ids: Iterable[str] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client = client
        # Values a review plan drew as its random audit: their ledger rows say so.
        self.audit_ids = frozenset(str(i) for i in audit_ids)
        # A result in hand is shown; an extraction info object (trigger_async) holds no
        # data, so its extraction is fetched like an id.
        if result is None and isinstance(extraction_id, Mapping) and (
                "extracted_targets" in extraction_id or "extracted_data" in extraction_id):
            result = extraction_id
        self.extraction_id = extraction_id_of(extraction_id)
        self.ledger = ledger if ledger is not None else Ledger()
        self.data = _data.extracted_data(
            result if result is not None else client.get_result(self.extraction_id))
        self.original = self.data
        self.error: ServiceError | None = None
        self.save_button = widgets.Button(description="Save", button_style="primary",
                                          icon="save", tooltip="send the changes")
        self.reset_button = widgets.Button(description="Reset", icon="undo",
                                           tooltip="back to the last saved values")
        self.status = widgets.HTML()
        self.save_button.on_click(lambda _: self.save())
        self.reset_button.on_click(lambda _: self.reset())
        self._render()

    # -- building ------------------------------------------------------------------------
    def _render(self) -> None:
        self._targets = {t.target_id: t for t in _data.targets(self.data)}
        self.inputs: dict[str, list[Any]] = {}
        self.cells: dict[str, dict[_Place, Any]] = {}
        self.add_buttons: dict[str, Any] = {}
        self.remove_buttons: dict[str, list[Any]] = {}
        self.add_row_buttons: dict[str, dict[str, Any]] = {}
        self.remove_row_buttons: dict[str, dict[tuple[str, int], Any]] = {}
        # What each control started from (None: added here); by id() as widgets are
        # not hashable by value.
        self._origin: dict[int, dict[str, Any] | None] = {}
        self._sections: dict[str, Any] = {}
        self._shape: dict[str, dict[str, tuple[int, list[int]]]] = {}  # rows, columns
        self.header = widgets.HTML(_parts.header_html(self.data))
        sections = []
        for target in self._targets.values():
            self._sections[target.target_id] = widgets.VBox()
            if target.type == "table":
                self._build_table(target)
            else:
                self.inputs[target.target_id] = [self._control(v) for v in target.values]
                if not target.values:  # room to type a value the engine missed
                    self.inputs[target.target_id].append(self._control(None))
                self._layout_field(target)
            sections.append(self._sections[target.target_id])
        self.children = [self.header, *sections,
                         widgets.HBox([self.save_button, self.reset_button]), self.status]

    def _control(self, value: dict[str, Any] | None) -> Any:
        text = _data.text_of(value) if value is not None else ""
        kind = widgets.Textarea if "\n" in text else widgets.Text
        control = kind(value=text, placeholder="new value" if value is None else "",
                       layout={"width": "100%"})
        self._origin[id(control)] = value
        self._tint(control)
        control.observe(self._edited, names="value")
        return control

    def _tint(self, control: Any) -> None:
        origin = self._origin.get(id(control))
        if origin is None or control.value != _data.text_of(origin):
            control.style.background = _data.EDITED_TINT if control.value else ""
            control.tooltip = "changed, not saved" if control.value else ""
        elif _data.failed(origin):
            control.style.background = _data.FAILED_TINT
            control.tooltip = "; ".join(str(m) for m in origin.get("validation_messages") or [])
        else:
            control.style.background = ""
            control.tooltip = ""

    def _edited(self, change: Mapping[str, Any]) -> None:
        self._tint(change["owner"])
        self._show_pending()

    def _show_pending(self) -> None:
        pending = len(self._diff())
        self.status.value = (f"{pending} unsaved change{'s' * (pending != 1)}" if pending
                             else "")

    def _button(self, description: str, tooltip: str, action: Callable[[], None]) -> Any:
        button = widgets.Button(description=description, tooltip=tooltip,
                                layout={"width": "auto"})
        button.on_click(lambda _: action())
        return button

    def _layout_field(self, target: _data.Target) -> None:
        tid = target.target_id
        removable = target.is_multiple or len(self.inputs[tid]) > 1
        self.remove_buttons[tid] = []
        rows = []
        for control in self.inputs[tid]:
            origin = self._origin[id(control)]
            parts = [widgets.Box([control], layout={"width": _parts.VALUE_WIDTH})]
            if origin is None:
                parts.append(widgets.HTML("<i style='color:#888'>new</i>"))
            else:
                confidence = target.confidence_of(origin)
                parts += [_parts.confidence_bar(confidence), _parts.confidence_label(confidence),
                          _parts.badge(origin)]
            if removable:
                button = self._button("✕", "remove this value",
                                      partial(self._remove_value, tid, control))
                self.remove_buttons[tid].append(button)
                parts.insert(1, button)
            rows.append(widgets.HBox(parts))
        if target.is_multiple:
            self.add_buttons[tid] = self._button("+ value", "add a value",
                                                 partial(self._add_value, tid))
            rows.append(self.add_buttons[tid])
        self._sections[tid].children = [widgets.HBox([_parts.name_label(target),
                                                      widgets.VBox(rows)])]

    def _add_value(self, target_id: str) -> None:
        self.inputs[target_id].append(self._control(None))
        self._layout_field(self._targets[target_id])

    def _remove_value(self, target_id: str, control: Any) -> None:
        self.inputs[target_id].remove(control)
        self._layout_field(self._targets[target_id])
        self._show_pending()

    def _build_table(self, target: _data.Target) -> None:
        tid = target.target_id
        self.cells[tid] = {}
        shapes = self._shape[tid] = {}
        tables = target.tables() or {uuid.uuid4().hex: []}  # an empty grid to fill in
        for table_id, cells in tables.items():
            columns = _parts.columns_of(target, cells) or [0]
            rows = [c["row"] for c in cells if isinstance(c.get("row"), int)]
            for cell in cells:
                if isinstance(cell.get("row"), int) and isinstance(cell.get("column"), int):
                    self.cells[tid][table_id, cell["row"], cell["column"]] = self._control(cell)
            shapes[table_id] = (max(rows) + 1 if rows else 1, columns)
        self._layout_table(target)

    def _layout_table(self, target: _data.Target) -> None:
        tid = target.target_id
        self.add_row_buttons[tid], self.remove_row_buttons[tid] = {}, {}
        parts = [_parts.title(target)]
        for table_id, (n_rows, columns) in self._shape[tid].items():
            items = [widgets.HTML("")]
            items += [widgets.HTML(f"<b>{html.escape(_parts.column_name(target, p))}</b>")
                      for p in columns]
            items.append(widgets.HTML(""))
            notes = []
            for r in range(n_rows):
                items.append(widgets.HTML(f"<span style='color:#888'>{r}</span>"))
                for p in columns:
                    place = (table_id, r, p)
                    if place not in self.cells[tid]:
                        self.cells[tid][place] = self._control(None)
                    control = self.cells[tid][place]
                    items.append(control)
                    origin = self._origin[id(control)]
                    if origin is not None and _data.failed(origin):
                        notes.append(f"row {r}, {_parts.column_name(target, p)}: "
                                     + "; ".join(map(str, origin.get("validation_messages")
                                                     or ["validation failed"])))
                button = self._button("✕", f"remove row {r}",
                                      partial(self._remove_row, tid, table_id, r))
                self.remove_row_buttons[tid][table_id, r] = button
                items.append(button)
            grid = widgets.GridBox(items, layout={
                "grid_template_columns": f"32px repeat({len(columns)}, minmax(90px, 1fr)) 40px",
                "grid_gap": "2px"})
            add = self._button("+ row", "add an empty row",
                               partial(self._add_row, tid, table_id))
            self.add_row_buttons[tid][table_id] = add
            failures = [widgets.HTML(f'<small style="color:{_data.RED}">✗ '
                                     + "<br>✗ ".join(html.escape(n) for n in notes)
                                     + "</small>")] if notes else []
            parts += [grid, *failures, add]
        self._sections[tid].children = parts

    def _add_row(self, target_id: str, table_id: str) -> None:
        n_rows, columns = self._shape[target_id][table_id]
        self._shape[target_id][table_id] = (n_rows + 1, columns)
        self._layout_table(self._targets[target_id])

    def _remove_row(self, target_id: str, table_id: str, row: int) -> None:
        cells = self.cells[target_id]
        n_rows, columns = self._shape[target_id][table_id]
        for p in columns:
            cells.pop((table_id, row, p), None)
        for r in range(row + 1, n_rows):  # the rows below move up by one
            for p in columns:
                moved = cells.pop((table_id, r, p), None)
                if moved is not None:
                    cells[table_id, r - 1, p] = moved
        self._shape[target_id][table_id] = (max(n_rows - 1, 0), columns)
        self._layout_table(self._targets[target_id])
        self._show_pending()

    # -- what changed --------------------------------------------------------------------
    def _items(self, target: _data.Target) -> list[tuple[Any, dict[str, Any]]]:
        """(origin, new value item) per value the target would have after the update; an
        added control left empty is no value."""
        out = []
        if target.type == "table":
            for (table_id, row, column), control in sorted(self.cells.get(
                    target.target_id, {}).items(), key=lambda kv: kv[0]):
                origin = self._origin[id(control)]
                if origin is not None or control.value:
                    out.append((origin, {**_id(origin), "extracted_cell": control.value,
                                         "table_id": table_id, "row": row, "column": column}))
        else:
            for control in self.inputs.get(target.target_id, []):
                origin = self._origin[id(control)]
                if origin is not None or control.value:
                    out.append((origin, {**_id(origin), "extracted_field": control.value}))
        return out

    @staticmethod
    def _key(origin: Mapping[str, Any] | None, item: Mapping[str, Any]) -> tuple[Any, ...]:
        return (id(origin) if origin is not None else None, _data.text_of(item),
                item.get("table_id"), item.get("row"), item.get("column"))

    def _changed(self, target: _data.Target) -> list[tuple[Any, dict[str, Any]]] | None:
        items = self._items(target)
        before = [self._key(v, v) for v in target.values]
        after = [self._key(origin, item) for origin, item in items]
        same = sorted(before, key=repr) == sorted(after, key=repr)
        return None if same and (target.type == "table" or before == after) else items

    def updates(self) -> list[dict[str, Any]]:
        """The D8 update objects for the targets changed since the last save."""
        out = []
        for target in self._targets.values():
            items = self._changed(target)
            if items is not None:
                out.append({"extracted_target_id": target.extracted_id, "type": target.type,
                            "new_extracted_values": [item for _, item in items]})
        return out

    def _row(self, target: _data.Target, value: Mapping[str, Any] | None,
             new: Mapping[str, Any] | None, change: str) -> dict[str, Any]:
        place = value if value is not None else (new or {})
        return {
            "extraction_id": self.extraction_id, "target_id": target.target_id,
            "target_name": target.name,
            "value_id": value.get("id") if value is not None else None,
            "table_id": place.get("table_id"), "row": place.get("row"),
            "column": place.get("column"),
            "old_value": _data.text_of(value) if value is not None else None,
            "new_value": _data.text_of(new) if new is not None else "",
            "old_confidence": target.confidence_of(value) if value is not None else None,
            "change": change,
            "audit": value is not None and str(value.get("id")) in self.audit_ids}

    def _diff(self) -> list[tuple[dict[str, Any], int]]:
        """Ledger rows of the pending changes, each with its place in its target's update."""
        rows = []
        for target in self._targets.values():
            items = self._changed(target)
            if items is None:
                continue
            kept = set()
            for index, (origin, item) in enumerate(items):
                if origin is None:
                    rows.append((self._row(target, None, item, "add"), index))
                    continue
                kept.add(id(origin))
                if _data.text_of(item) != _data.text_of(origin):
                    rows.append((self._row(target, origin, item, "edit"), index))
            rows += [(self._row(target, v, None, "remove"), -1) for v in target.values
                     if id(v) not in kept]
        return rows

    def changes(self) -> pd.DataFrame:
        """The pending changes as ledger rows (``value_id`` of an added value: NA)."""
        columns = [c for c in COLUMNS if c != "time"]
        return pd.DataFrame([row for row, _ in self._diff()], columns=columns)

    # -- actions -------------------------------------------------------------------------
    def save(self) -> int:
        """Send the changes; the number of values changed (0 on an error, shown in
        ``status``)."""
        updates, diff = self.updates(), self._diff()
        if not updates:
            self.status.value = "Nothing to save."
            return 0
        try:
            response = self.client.update_results(self.extraction_id, updates)
        except ServiceError as exc:
            self.error = exc
            self.status.value = (f'<span style="color:{_data.RED}">Not saved: '
                                 f"{html.escape(str(exc))}</span>")
            return 0
        self.error = None
        self.data = _data.extracted_data(response)
        after = {t.target_id: t for t in _data.targets(self.data)}
        rows = []
        for row, index in diff:
            if row["change"] == "add":
                row["value_id"] = _added_id(after.get(row["target_id"]), row, index)
            rows.append(row)
        self.ledger.append(rows)
        self._render()
        failing = _data.summary(self.data)["n_failed"]
        note = (f'; <span style="color:{_data.RED}">{failing} '
                f'{"value fails" if failing == 1 else "values fail"} validation</span>'
                if failing else "; all values pass validation")
        self.status.value = (f"Saved {len(rows)} change{'s' * (len(rows) != 1)} in "
                             f"{len(updates)} target{'s' * (len(updates) != 1)}{note}.")
        return len(rows)

    def reset(self) -> None:
        """Drop the unsaved edits."""
        self._render()
        self.status.value = ""

    def confirm(self) -> int:
        """Record the values a reviewer checked and left as they were (``change``
        ``confirm``): those of `original` still unchanged, not already in the ledger and
        not edited now. Their old confidence is the engine's, from `original`."""
        recorded = self.ledger.value_ids(self.extraction_id)
        pending = {row["value_id"] for row, _ in self._diff()}
        now = {v.get("id"): _data.text_of(v) for t in self._targets.values() for v in t.values}
        rows = []
        for target in _data.targets(self.original):
            for value in target.values:
                value_id = value.get("id")
                text = _data.text_of(value)
                if (not value_id or value_id in recorded or value_id in pending
                        or now.get(value_id) != text):
                    continue
                rows.append(self._row(target, value, value, "confirm"))
        self.ledger.append(rows)
        return len(rows)


def _id(origin: Mapping[str, Any] | None) -> dict[str, Any]:
    """The value's id to send back, so the service keeps it and the ledger can name it."""
    return {"id": origin["id"]} if origin is not None and origin.get("id") else {}


def _added_id(target: _data.Target | None, row: Mapping[str, Any], index: int) -> str | None:
    """The id the service gave an added value: the cell at its place, or the field value
    at its index."""
    if target is None:
        return None
    if row.get("table_id") is not None:
        for cell in target.values:
            if (cell.get("table_id"), cell.get("row"), cell.get("column")) == (
                    row["table_id"], row["row"], row["column"]):
                return str(cell.get("id") or "") or None
        return None
    if 0 <= index < len(target.values):
        return str(target.values[index].get("id") or "") or None
    return None
