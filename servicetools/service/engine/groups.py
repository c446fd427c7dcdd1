"""Extraction targets grouped by search area, and the extraction of one group."""

from __future__ import annotations

import itertools
import json
import math
import re
import statistics
from dataclasses import dataclass, replace
from typing import Any

from ...wire.values import parse_number
from .calibration import cell_confidence
from .candidates import choose, found_candidates, own_candidates, table_cells
from .fields import extract_fields
from .lines import area_lines
from .page_model import Document
from .results import EngineCell, EngineTarget
from .shapes import validates
from .tables import OwnTable, extract_table, header_bands

__all__ = ["TargetGroup", "extract_group", "group_targets"]


@dataclass(frozen=True)
class TargetGroup:
    """Targets that read the same region; `id` is the search area's id ("all" or an area)."""

    id: str
    search_area: str
    targets: tuple[dict[str, Any], ...]


def group_targets(configuration: dict[str, Any]) -> list[TargetGroup]:
    """Targets grouped by search area, groups and targets in order of first appearance."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for target in configuration.get("extraction_targets", []):
        area = str(target.get("search_area") or "all")
        if target.get("search_area_type") == "all":
            area = "all"
        grouped.setdefault(area, []).append(target)
    return [TargetGroup(area, area, tuple(targets)) for area, targets in grouped.items()]


def extract_group(
    document: Document, group: TargetGroup, configuration: dict[str, Any]
) -> list[EngineTarget]:
    """One EngineTarget per target of the group, in the group's order."""
    lines = area_lines(document, group.search_area, configuration)
    field_targets = [t for t in group.targets if t.get("type") == "field"]
    # Labels of every field in the configuration compete for words, so that "Date"
    # does not claim the "Date" of "Due Date" even when the two are in other groups.
    every_field = [
        t for t in configuration.get("extraction_targets", []) if t.get("type") == "field"
    ]
    # Header rows of every table: needed for the group's tables, and to keep column
    # headers ("Amount") from passing as field labels.
    # Every group asks the same header texts: what they match is remembered per document
    # and header schema.
    memos = document.cache.header_matches
    headers = {
        str(t.get("id", "")): header_bands(lines, t, memos.setdefault(_schema_key(t), {}))
        for t in configuration.get("extraction_targets", [])
        if t.get("type") == "table"
    }
    tables: dict[str, list[EngineCell]] = {}
    covered: set[int] = set()
    every_table = [t for t in configuration.get("extraction_targets", [])
                   if t.get("type") == "table"]
    read: dict[str, list[EngineCell]] = {}  # the tables of each headings key, read once
    ocr = sum(page.source == "ocr" for page in document.pages) / max(1, len(document.pages))
    for target in every_table:
        target_id = str(target.get("id", ""))
        key = _headings_key(target)
        # Targets with the same headings read the same tables: they share them out in
        # document order (_dealt), and are no rivals of each other.
        twins = [t for t in every_table if _headings_key(t) == key]
        if key not in read:
            places: list[OwnTable] = []
            own = extract_table(lines, target, headers[target_id], covered, places)
            # Found tables are whole pages' tables: they answer only a search of them all.
            rivals = [t for t in every_table if not any(t is twin for twin in twins)]
            # The finders cost a third of a second a page: not spent where the engine's
            # own reader already found a header row naming every column of a table
            # whose columns have rules to check it by.
            settled = own and _ruled(target) and _names_every_column(headers[target_id],
                                                                      target)
            proposed, contested = (found_candidates(document, target, rivals)
                                   if group.search_area == "all" and not settled else ([], {}))
            # Every reader's tables are candidates, one chosen at each place by evidence.
            pooled = (table_cells(target, choose(document, target, [
                *proposed, *own_candidates(document, target, own, places, rivals)]), contested,
                own)
                if proposed else [])
            chosen = _better(own, pooled, target)
            if chosen is own or all(c.evidence.get("own") for c in chosen):
                # The other reading, which the cells' confidence compares with: the finders'.
                other = table_cells(target, choose(document, target, proposed, record=False),
                                    contested)
            else:
                other = own
            read[key] = _calibrated(chosen, other, ocr)
        place = next(i for i, twin in enumerate(twins) if twin is target)
        tables[target_id] = _dealt(read[key], place, len(twins))
    covered.update(i for bands in headers.values() for i, b in enumerate(bands) if b is not None)
    values = (
        extract_fields(
            lines, field_targets, every_field, frozenset(covered), _at_top(group, configuration)
        )
        if field_targets
        else {}
    )
    results = []
    for target in group.targets:
        target_id = str(target.get("id", ""))
        if target.get("type") == "table":
            cells = tables[target_id]
            confidence = statistics.fmean(c.confidence for c in cells) if cells else 0.0
            results.append(EngineTarget(target_id, "table", round(confidence, 4), [], cells))
        else:
            found = values[target_id]
            confidence = statistics.fmean(v.confidence for v in found)
            results.append(EngineTarget(target_id, "field", round(confidence, 4), found, []))
    return results


def _better(own: list[EngineCell], judged: list[EngineCell], target: dict[str, Any]
            ) -> list[EngineCell]:
    """The found tables' cells, unless the columns have rules and the engine's own reading
    passes them more often (line items it reads exactly up to the totals, where a found
    table may run on into them or split a row)."""
    if not judged:
        return own
    trees = {int(c.get("position", 0)): c.get("extracted_value_validation_tree")
             for c in target.get("header_schema") or []}
    if not own or not _ruled(target):
        return judged
    return own if _passing(own, trees) >= _passing(judged, trees) else judged


def _calibrated(cells: list[EngineCell], other: list[EngineCell], ocr: float
                ) -> list[EngineCell]:
    """The cells with their calibrated confidence (calibration.cell_confidence), from how
    each was read and what its table, row and column look like.

    Whatever the reader: whether the other reading (the found tables' for the engine's
    own, and the other way round) holds the same text at the same place, or at another
    row of the same column (a row split or a heading taken for a row shifts every cell
    under it), or was not made at all; and how the cell's kind (number or words) fits
    its column's. The engine's own cells get the row and column shape that candidates.py
    gives the found tables' cells.
    """
    if not cells:
        return cells
    def key(text: str) -> str:
        return "".join(text.split())
    theirs = {(c.table_index, c.row, c.column): key(c.text) for c in other}
    by_column: dict[tuple[int, int], set[str]] = {}
    for c in other:
        by_column.setdefault((c.table_index, c.column), set()).add(key(c.text))
    shapes = {index: _Shape.of([c for c in cells if c.table_index == index])
              for index in {c.table_index for c in cells}}
    agreeing: dict[int, list[bool]] = {}
    for c in cells:
        agreeing.setdefault(c.table_index, []).append(
            theirs.get((c.table_index, c.row, c.column)) == key(c.text))
    agreed = {index: statistics.fmean(flags) for index, flags in agreeing.items()}
    out = []
    for c in cells:
        shape = shapes[c.table_index]
        text = c.text.strip()
        is_number = bool(text) and parse_number(text) is not None
        numeric = shape.numeric[c.column]
        evidence = dict(c.evidence)
        if evidence.get("own"):
            evidence.update({
                "ocr": ocr, "empty": float(not text), "number": float(is_number),
                "column_numeric": numeric,
                "odd_kind": float(bool(text) and is_number != (numeric > 0.5)),
                "row_fill": shape.fills[c.row], "lone": float(shape.lones[c.row]),
                "lines": float(min(text.count("\n"), 3)),
                "first_row": float(c.row == 0), "last_row": float(c.row == shape.rows - 1),
                "depth": c.row / shape.rows, "few_rows": float(shape.rows < 3),
                "lone_above": math.log1p(shape.lone_above[c.row])})
        mine = key(c.text)
        place = (c.table_index, c.row, c.column)
        evidence.update({
            "alone": float(not other),
            "agree": float(bool(other) and theirs.get(place) == mine),
            "agree_elsewhere": float(bool(mine) and theirs.get(place) != mine
                                     and mine in by_column.get(place[::2], set())),
            "short_row": float(shape.fills[c.row] < shape.typical_fill),
            # The table as a whole: a table read off its columns shows in every cell.
            "table_agree": agreed[c.table_index] if other else 0.0,
            "table_fill": shape.fill,
            "column_fill": shape.column_fills[c.column],
            "column_mixed": 1 - abs(2 * numeric - 1),
            "table_mixed": shape.mixed,
            "empty_columns": shape.empty_columns,
            "chars": math.log1p(len(text)) / 4,
        })
        out.append(replace(c, evidence=evidence, confidence=cell_confidence(
            evidence, evidence.get("raw", c.confidence))))
    return out


@dataclass(frozen=True)
class _Shape:
    """A table's rows; each column's share of numbers and of filled cells; each row's
    share of filled columns and whether it holds one cell alone."""

    rows: int
    numeric: dict[int, float]
    column_fills: dict[int, float]
    fills: list[float]
    lones: list[bool]
    # Of the whole table: the share of filled cells, the median row's, how far the
    # columns are from holding numbers only or words only (0..1), the share of empty
    # columns; and before each row, how many rows hold one cell alone.
    fill: float = 0.0
    typical_fill: float = 0.0
    mixed: float = 0.0
    empty_columns: float = 0.0
    lone_above: tuple[int, ...] = ()

    @classmethod
    def of(cls, table: list[EngineCell]) -> _Shape:
        rows = max(c.row for c in table) + 1
        columns = sorted({c.column for c in table})
        grid = {(c.row, c.column): c.text.strip() for c in table}
        texts = {col: [grid.get((r, col), "") for r in range(rows)] for col in columns}
        filled = [sum(bool(grid.get((r, col))) for col in columns) for r in range(rows)]
        numeric = {col: _numeric_share(t) for col, t in texts.items()}
        column_fills = {col: sum(map(bool, t)) / rows for col, t in texts.items()}
        fills = [f / len(columns) for f in filled]
        lones = [f == 1 for f in filled]
        return cls(rows, numeric, column_fills, fills, lones,
                   fill=statistics.fmean(fills), typical_fill=statistics.median(fills),
                   mixed=statistics.fmean(1 - abs(2 * n - 1) for n in numeric.values()),
                   empty_columns=sum(f == 0 for f in column_fills.values()) / len(columns),
                   lone_above=tuple(itertools.accumulate(lones, initial=0))[:-1])


def _numeric_share(texts: list[str]) -> float:
    filled = [t for t in texts if t]
    return sum(parse_number(t) is not None for t in filled) / len(filled) if filled else 0.0


def _headings_key(target: dict[str, Any]) -> str:
    """What decides which tables a target reads: each column's position, name and
    header tree, case and spaces aside (the finders' tables are judged by names without
    spaces, where "(95%CI)" is "(95% CI)", and a user's regex of either heading says the
    same). Targets with the same key read the same tables."""
    return json.dumps(sorted(
        (int(c.get("position", 0)), _spaceless(str(c.get("name", ""))),
         _spaceless(json.dumps(c.get("header_matching_validation_tree") or {},
                               sort_keys=True, default=str)))
        for c in target.get("header_schema") or []), sort_keys=True, default=str)


# Spaces as a regex writes them too: "\s", "\s*", "\s+", "\s?", "\ ".
_SPACES = re.compile(r"(?:\\\\s|\\\\ )[*+?]?|\s+")


def _spaceless(text: str) -> str:
    return _SPACES.sub("", text).casefold()


def _dealt(cells: list[EngineCell], place: int, twins: int) -> list[EngineCell]:
    """The tables of the `place`-th of `twins` targets with the same headings (counted
    in configuration order): each table goes to one of them, in document order, the
    first table to the first target, the second to the second, and every table past
    the last target's turn to the last target."""
    if twins <= 1:
        return cells
    last = place == twins - 1
    kept = [c for c in cells if c.table_index == place or (last and c.table_index > place)]
    return [replace(c, table_index=c.table_index - place) for c in kept]


def _ruled(target: dict[str, Any]) -> bool:
    return any((c.get("extracted_value_validation_tree") or {}).get("rule_groups")
               for c in target.get("header_schema") or [])


def _names_every_column(headers: list[Any], target: dict[str, Any]) -> bool:
    """Whether some header row found in the lines has a band for every schema column."""
    wanted = {int(c.get("position", 0)) for c in target.get("header_schema") or []}
    return any(bands is not None and wanted <= {b.column for b in bands} for bands in headers)


def _passing(cells: list[EngineCell], trees: dict[int, Any]) -> float:
    """The share of cells their column's rules accept."""
    checked = [validates(c.text, trees.get(c.column)) for c in cells]
    return sum(v is not False for v in checked) / len(checked) if checked else 0.0


def _schema_key(target: dict[str, Any]) -> str:
    return json.dumps(target.get("header_schema") or [], sort_keys=True, default=str)


def _at_top(group: TargetGroup, configuration: dict[str, Any]) -> bool:
    """Whether the group's area holds the top of the first page (a letterhead's place):
    the whole document, or a box of page 1 from its top edge, however far down it
    reaches (a user's "first page" area as much as a header box)."""
    if group.search_area == "all":
        return True
    area = (configuration.get("search_areas") or {}).get(group.search_area)
    if not isinstance(area, dict):
        return False
    box = area.get("box") or (0.0, 0.0, 1.0, 1.0)
    return int(area.get("page", 1)) == 1 and float(box[1]) <= 0.05
