"""`Result`: one extraction's result, the service's JSON with its parts by name.

`Client.trigger_sync`, `Client.get_result` and `Client.update_results` return one. It is
a read-only mapping over the dict the service sent, so ``r["extracted_targets"]`` works as
on the plain JSON; ``r.raw`` is that dict (for ``json.dumps``), and attributes name what
an analyst looks for:

>>> r = Result({
...     "extraction_info": {"extraction_id": "e1", "extraction_name": "inv.pdf",
...                         "used_extraction_configuration_name": "invoices"},
...     "used_extraction_configuration": {"extraction_targets": [
...         {"id": "t-total", "type": "field", "name": "Total"},
...         {"id": "t-items", "type": "table",
...          "header_schema": [{"name": "Item", "position": 0},
...                            {"name": "Price", "position": 1}]}]},
...     "extracted_targets": [
...         {"used_extraction_target_id": "t-total", "type": "field", "confidence": 0.9,
...          "extracted_values": [{"extracted_field": "12.50", "validation_passed": True}]},
...         {"used_extraction_target_id": "t-items", "type": "table", "confidence": 0.7,
...          "extracted_values": [
...              {"extracted_cell": "Tea", "table_id": "a", "row": 0, "column": 0},
...              {"extracted_cell": "3.00", "table_id": "a", "row": 0, "column": 1}]}]})
>>> r
<Result e1 'inv.pdf' (invoices): 2 targets>
>>> r.extraction_id, r.configuration_name
('e1', 'invoices')
>>> r.fields
{'Total': '12.50'}
>>> r.tables
{'t-items': [{'Item': 'Tea', 'Price': '3.00'}]}
>>> r["extraction_info"]["extraction_id"] == extraction_id_of(r) == "e1"
True

Anywhere the client (and the widgets) take an extraction id, they take a result too:
`extraction_id_of` finds the id in either.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeAlias

__all__ = ["ExtractionRef", "Result", "extraction_id_of", "extraction_ids_of"]

#: An extraction, named by its id or by what the service answered about it: a `Result`,
#: an extracted data object, a three-part response, or the extraction info object of
#: `Client.trigger_async`.
ExtractionRef: TypeAlias = "str | Mapping[str, Any]"

# Keys by which a mapping is one extraction's answer rather than a {extraction_id: ...}
# mapping of many.
_ONE_EXTRACTION = ("extraction_id", "extraction_info", "extracted_data", "extracted_targets")
_SHORT = 60  # characters of a value shown in the HTML table


class Result(Mapping[str, Any]):
    """The result of one extraction: the extracted data object (2.3), or the three-part
    response (``extracted_data``, ``schema_output``, ``validation``) of
    ``show_schema_output=True``.

    Attributes (None, or empty, where the result lacks the part):

    - ``raw``: the dict the service sent, unknown fields included;
    - ``extracted_data``: the extracted data object (inside a three-part response);
    - ``extraction_id``, ``extraction_name``, ``configuration_name``,
      ``configuration_id``: from ``extraction_info``;
    - ``configuration``: the copy of the configuration used, ``targets``: the extracted
      targets (2.4);
    - ``fields``: ``{name: value}``, the first non-empty value of each field, a list for
      a field with ``is_multiple``, None for none; ``tables``: ``{name: rows}``, each row
      a dict keyed by header name (``column_<n>`` without one). These are D11's
      ``fields`` and ``records``, what an output schema sees; a target without a name
      goes by its id (D9);
    - ``schema_output``, ``validation``: the other two parts of a three-part response.
    """

    __slots__ = ("_raw",)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        if isinstance(raw, Result):
            raw = raw.raw
        elif not isinstance(raw, Mapping):
            raise TypeError(f"a result is a mapping (the service's JSON object), not "
                            f"{type(raw).__name__}")
        self._raw: dict[str, Any] = raw if isinstance(raw, dict) else dict(raw)

    # -- the mapping: the service's JSON, read-only --------------------------------------
    def __getitem__(self, key: str) -> Any:
        return self._raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    @property
    def raw(self) -> dict[str, Any]:
        """The dict the service sent (``json.dumps(r.raw)``; copy it before changing it)."""
        return self._raw

    # -- the parts by name -----------------------------------------------------------------
    @property
    def extracted_data(self) -> dict[str, Any]:
        inner = self._raw.get("extracted_data")
        if isinstance(inner, dict) and "extracted_targets" not in self._raw:
            return inner
        return self._raw

    @property
    def _info(self) -> dict[str, Any]:
        info = self.extracted_data.get("extraction_info")
        return info if isinstance(info, dict) else {}

    @property
    def extraction_id(self) -> str | None:
        return _text(self._info.get("extraction_id"))

    @property
    def extraction_name(self) -> str | None:
        return _text(self._info.get("extraction_name"))

    @property
    def configuration(self) -> dict[str, Any]:
        config = self.extracted_data.get("used_extraction_configuration")
        return config if isinstance(config, dict) else {}

    @property
    def configuration_name(self) -> str | None:
        return (_text(self._info.get("used_extraction_configuration_name"))
                or _text(self.configuration.get("name")))

    @property
    def configuration_id(self) -> str | None:
        return (_text(self._info.get("used_extraction_configuration_id"))
                or _text(self.configuration.get("id")))

    @property
    def targets(self) -> list[dict[str, Any]]:
        targets = self.extracted_data.get("extracted_targets")
        return [t for t in targets if isinstance(t, dict)] if isinstance(targets, list) else []

    @property
    def fields(self) -> dict[str, str | list[str] | None]:
        out: dict[str, str | list[str] | None] = {}
        for target, parent in self._targets("field"):
            texts = [text for text in (_text(v.get("extracted_field"))
                                       for v in _values(target)) if text and text.strip()]
            multiple = parent.get("is_multiple") is True
            out.setdefault(_name(target, parent),
                           (texts if multiple else texts[0]) if texts else None)
        return out

    @property
    def tables(self) -> dict[str, list[dict[str, str]]]:
        out: dict[str, list[dict[str, str]]] = {}
        for target, parent in self._targets("table"):
            out.setdefault(_name(target, parent), _records(_values(target), parent))
        return out

    @property
    def schema_output(self) -> Any:
        return self._raw.get("schema_output") if self.extracted_data is not self._raw else None

    @property
    def validation(self) -> Any:
        return self._raw.get("validation") if self.extracted_data is not self._raw else None

    def _targets(self, kind: str | None = None
                 ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(extracted target, its target in the configuration) pairs, in order."""
        parents = {t.get("id"): t for t in self.configuration.get("extraction_targets") or []
                   if isinstance(t, dict)}
        pairs = []
        for target in self.targets:
            parent = parents.get(target.get("used_extraction_target_id")) or {}
            if kind is None or (target.get("type") or parent.get("type")) == kind:
                pairs.append((target, parent))
        return pairs

    # -- display -------------------------------------------------------------------------
    def _failing(self) -> int:
        return sum(v.get("validation_passed") is False
                   for target in self.targets for v in _values(target))

    def __repr__(self) -> str:
        parts = [self.extraction_id or "(no extraction id)"]
        if self.extraction_name:
            parts.append(repr(self.extraction_name))
        if self.configuration_name:
            parts.append(f"({self.configuration_name})")
        facts = [f"{len(self.targets)} targets"]
        failing = self._failing()
        if failing:
            facts.append(f"{failing} value{'s' if failing != 1 else ''} failing validation")
        if self.extracted_data is not self._raw:
            facts.append("with schema output")
        return f"<Result {' '.join(parts)}: {', '.join(facts)}>"

    def _repr_html_(self) -> str:
        esc = html.escape
        title = esc(self.extraction_name or self.extraction_id or "extraction")
        about = " · ".join(esc(x) for x in (self.configuration_name, self.extraction_id) if x)
        rows = []
        for target, parent in self._targets():
            values = _values(target)
            kind = target.get("type") or parent.get("type")
            if kind == "table":
                records = _records(values, parent)
                width = max((len(row) for row in records), default=0)
                shown = f"<i>table, {len(records)} rows × {width} columns</i>"
            else:
                shown = "<br>".join(esc(_short(_text(v.get("extracted_field")) or ""))
                                    for v in values) or "<i>no value</i>"
            confidence = target.get("confidence")
            confidence = (f"{confidence:.2f}" if isinstance(confidence, int | float)
                          and not isinstance(confidence, bool) else "")
            failed = [v for v in values if v.get("validation_passed") is False]
            if failed and kind == "table":
                check = f"✗ {len(failed)} of {len(values)} cells"
            elif failed:
                check = "✗ " + esc("; ".join(str(m) for v in failed
                                             for m in v.get("validation_messages") or []))
            else:
                check = "✓" if values else ""
            rows.append(f"<tr><td>{esc(_name(target, parent))}</td>"
                        f"<td style='text-align:left'>{shown}</td>"
                        f"<td>{confidence}</td><td style='text-align:left'>{check}</td></tr>")
        head = "".join(f"<th>{h}</th>" for h in ("target", "value", "confidence", "validation"))
        note = ("<br><small>with <code>schema_output</code> and <code>validation</code>"
                "</small>" if self.extracted_data is not self._raw else "")
        return (f"<div><b>{title}</b> <small>{about}</small>{note}"
                f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
                "</table></div>")


def extraction_id_of(ref: ExtractionRef) -> str:
    """The extraction id of an id (returned as is) or of a result (`ExtractionRef`)."""
    if isinstance(ref, str):
        return ref
    if not isinstance(ref, Mapping):
        raise TypeError(f"an extraction id or a result, not {type(ref).__name__}")
    found = _text(ref.get("extraction_id")) or Result(ref).extraction_id
    if found is None:
        raise ValueError("this result holds no extraction id "
                         "(extraction_info.extraction_id)")
    return found


def extraction_ids_of(refs: ExtractionRef | Iterable[ExtractionRef]) -> list[str]:
    """The ids of one extraction or of many (each an `ExtractionRef`), without repeats.

    A mapping that is not one extraction's answer (``batch.results``) gives its keys.
    """
    if isinstance(refs, str) or (isinstance(refs, Mapping)
                                 and any(key in refs for key in _ONE_EXTRACTION)):
        return [extraction_id_of(refs)]
    return list(dict.fromkeys(extraction_id_of(ref) for ref in refs))


def _text(x: Any) -> str | None:
    return x if isinstance(x, str) else None


def _short(text: str) -> str:
    return text if len(text) <= _SHORT else text[:_SHORT - 1] + "…"


def _values(target: Mapping[str, Any]) -> list[dict[str, Any]]:
    values = target.get("extracted_values")
    return [v for v in values if isinstance(v, dict)] if isinstance(values, list) else []


def _name(target: Mapping[str, Any], parent: Mapping[str, Any]) -> str:
    # D9: a target without a name goes by its id.
    return (_text(parent.get("name")) or _text(target.get("used_extraction_target_id"))
            or _text(target.get("id")) or "")


def _records(cells: list[dict[str, Any]], parent: Mapping[str, Any]) -> list[dict[str, str]]:
    """Rows as dicts keyed by header name, every table of the target in order (D11)."""
    headers: dict[int, str] = {}
    for i, head in enumerate(parent.get("header_schema") or []):
        if isinstance(head, Mapping):
            position = head.get("position", i)
            if isinstance(position, int):
                headers[position] = _text(head.get("name")) or f"column_{position}"
    tables: dict[Any, dict[int, dict[int, str]]] = {}
    for cell in cells:
        row, column = cell.get("row"), cell.get("column")
        if isinstance(row, int) and isinstance(column, int):
            text = _text(cell.get("extracted_cell")) or ""
            tables.setdefault(cell.get("table_id"), {}).setdefault(row, {}).setdefault(
                column, text)
    records = []
    for rows in tables.values():
        width = max([*(p + 1 for p in headers), *(max(r) + 1 for r in rows.values())])
        for row in sorted(rows):
            records.append({headers.get(p, f"column_{p}"): rows[row].get(p, "")
                            for p in range(width)})
    return records
