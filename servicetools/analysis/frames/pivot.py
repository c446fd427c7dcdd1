"""`tables`: the cells of each table pivoted into a wide frame, header names as columns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd

from .dtypes import strings
from .read import Errors
from .values import cells

__all__ = ["tables"]


def tables(data: Any, *, errors: Errors = "raise", columns: Literal["header", "position"]
           = "header", documents: Mapping[str, str] | None = None) -> dict[str, pd.DataFrame]:
    """``{table_id: wide DataFrame}``: cells pivoted by row and column, cells kept verbatim.

    Columns are header names in position order (``columns="position"`` keeps the
    integer positions); a position the header schema lacks is named ``"column <n>"``.
    The index is ``row``; missing cells are NA. Each frame's ``attrs`` hold
    ``extraction_id``, ``document_name``, ``target_id``, ``target_name`` and
    ``table_index`` (the table's place within its target). ``data`` may also be a
    `cells` frame (one made by hand needs ``table_id``, ``row``, ``column`` and
    ``value``; cells without a place, or at a negative one, are left out).
    """
    frame = data if isinstance(data, pd.DataFrame) else cells(data, errors=errors,
                                                                documents=documents)
    out: dict[str, pd.DataFrame] = {}
    if frame.empty:
        return out
    index_in_target: dict[tuple[Any, Any], int] = {}
    for table_id, entry in _grouped(frame).items():
        attrs = entry["attrs"]
        place = (attrs["extraction_id"], attrs["target_id"])
        attrs["table_index"] = index_in_target.get(place, 0)
        index_in_target[place] = attrs["table_index"] + 1
        table_cells: dict[tuple[int, int], Any] = entry["cells"]
        n_rows = max(r for r, _ in table_cells) + 1
        positions = sorted({c for _, c in table_cells})
        labels: list[Any] = positions if columns == "position" else _labels(
            positions, entry["heads"])
        body = {label: strings([table_cells.get((r, c)) for r in range(n_rows)])
                for label, c in zip(labels, positions, strict=True)}
        wide = pd.DataFrame(body, index=pd.RangeIndex(n_rows, name="row"))
        wide.columns.name = "header" if columns == "header" else "column"
        wide.attrs.update(attrs)
        out[table_id] = wide
    return out


_ATTRS = ["extraction_id", "document_name", "target_id", "target_name"]


def _grouped(frame: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """``{table_id: {"attrs", "cells": {(row, column): text}, "heads": {column: header}}}``
    of the cells that have a table id and a position, tables in first-seen order."""
    missing = [c for c in ("table_id", "row", "column", "value") if c not in frame.columns]
    if missing:
        raise ValueError(f"tables() needs a cells frame (frames.cells) with the columns "
                         f"table_id, row, column and value; missing: {', '.join(missing)}")
    rows_at = pd.to_numeric(frame["row"], errors="coerce")
    cols_at = pd.to_numeric(frame["column"], errors="coerce")
    keep = frame["table_id"].notna() & (rows_at >= 0) & (cols_at >= 0)
    part = frame.loc[keep]
    table_ids = part["table_id"].to_numpy(dtype=object)
    rows = rows_at.loc[keep].to_numpy(dtype=np.int64)
    cols = cols_at.loc[keep].to_numpy(dtype=np.int64)
    texts = part["value"].to_numpy(dtype=object)

    def column(name: str) -> np.ndarray:  # a frame made by hand may lack the others
        return (part[name].to_numpy(dtype=object) if name in part.columns
                else np.full(len(part), None, dtype=object))

    heads = column("header")
    metas = {c: column(c) for c in _ATTRS}
    grouped: dict[str, dict[str, Any]] = {}
    for i, table_id in enumerate(table_ids):
        entry = grouped.get(table_id)
        if entry is None:
            attrs = {c: (None if pd.isna(metas[c][i]) else str(metas[c][i])) for c in _ATTRS}
            entry = grouped[table_id] = {"attrs": attrs, "cells": {}, "heads": {}}
        entry["cells"][(rows[i], cols[i])] = texts[i]
        if cols[i] not in entry["heads"] and not pd.isna(heads[i]):
            entry["heads"][cols[i]] = heads[i]
    return grouped


def _labels(positions: list[int], heads: dict[int, str]) -> list[str]:
    labels = [heads.get(p) or f"column {p}" for p in positions]
    if len(set(labels)) < len(labels):  # two columns share a name: tell them apart
        labels = [f"{label} ({p})" for label, p in zip(labels, positions, strict=True)]
    return labels
