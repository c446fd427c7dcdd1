"""What the audits share when given a `frames.Dataset`: DuckDB does the aggregation.

Each audit that takes a dataset (`scorecard`, `failures`, `drift`, `compare`, and the
measures against the truth) runs SQL over the dataset's ``work`` view (fields and
cells stacked and labelled as `work.work_frame` labels them) and returns the frame its
in-memory path returns: same index, columns, dtypes and row order. The pieces here make
that last part exact:

- `group_ranks`: a categorical of the work frame lists its values in first-seen order
  (fields before cells, batches in order, rows in order); the rank of a value is where
  its first row is (``min("order")`` of the view), so groups sort as pandas sorts them;
- `sorted_groups`: an aggregated frame (one row per group) sorted by those ranks and
  indexed by its keys as pandas' groupby would index it (a `CategoricalIndex` of the
  groups for one key, a MultiIndex for several).

Rows whose key is NULL are left out, as pandas' groupby leaves NA keys out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..frames.dataset import Dataset
from ..frames.dtypes import STRING

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "WORK_CATEGORIES",
    "WORK_KEYS",
    "WORK_VALUES",
    "connect",
    "frames_of",
    "group_index",
    "group_ranks",
    "is_dataset",
    "key_ranks",
    "quote",
    "sorted_groups",
    "where_keys",
]


def is_dataset(obj: Any) -> bool:
    """Whether an audit was given a `frames.Dataset` (then it pushes down to DuckDB)."""
    return isinstance(obj, Dataset)


def connect(data: Dataset) -> duckdb.DuckDBPyConnection:
    """A connection with the dataset's views (see `Dataset.connect`)."""
    return data.connect()


def quote(name: str) -> str:
    """A column name as a SQL identifier (``column`` and ``order`` are keywords)."""
    return '"' + name.replace('"', '""') + '"'


def where_keys(keys: Sequence[str]) -> str:
    """The condition that leaves out rows with a NULL key (pandas drops NA groups)."""
    return " AND ".join(f"{quote(k)} IS NOT NULL" for k in keys) or "TRUE"


def group_ranks(con: duckdb.DuckDBPyConnection, keys: Sequence[str],
                source: str = "work", where: str = "TRUE") -> dict[str, dict[Any, int]]:
    """For each key, its values' first-seen rank among the rows of ``source``."""
    out: dict[str, dict[Any, int]] = {}
    for key in keys:
        rows = con.execute(
            f"SELECT {quote(key)} FROM {source} WHERE {where} AND {quote(key)} IS NOT NULL "
            f"GROUP BY ALL ORDER BY min({quote('order')})").fetchall()
        out[key] = {value: rank for rank, (value,) in enumerate(rows)}
    return out


def sorted_groups(frame: pd.DataFrame, keys: Sequence[str],
                  ranks: dict[str, dict[Any, int]]) -> pd.DataFrame:
    """``frame`` (one row per group, keys as columns) sorted and indexed as pandas'
    ``groupby(keys, observed=True, sort=True)`` of the work frame would give it."""
    keys = list(keys)
    order = np.lexsort([frame[k].map(ranks[k]).to_numpy(dtype=float) for k in reversed(keys)]
                       ) if len(frame) else np.arange(0)
    frame = frame.iloc[order].reset_index(drop=True)
    levels = []
    for k in keys:
        # The work frame's categories after `observed`: the values its rows use, in order.
        used = [v for v, _ in sorted(ranks[k].items(), key=lambda item: item[1])]
        present = set(frame[k])
        categories = pd.Index([v for v in used if v in present], dtype=STRING)
        levels.append(pd.Categorical(frame[k].astype(object), categories=categories))
    if len(keys) == 1:
        index: pd.Index = pd.CategoricalIndex(levels[0], name=keys[0])
    else:
        index = pd.MultiIndex.from_arrays(levels, names=keys)
    return frame.drop(columns=keys).set_index(index)


#: The ``work`` view's columns that the work frame holds as categoricals, their
#: categories in first-seen order: pandas sorts their groups by that order.
WORK_CATEGORIES: tuple[str, ...] = (
    "kind", "target", "target_name", "header", "document_name", "extraction_name",
    "configuration_id", "configuration_name", "target_id", "condition")
#: The other columns of the view a work frame is grouped by, sorted by value, with the
#: dtype of the work frame's column (and so of pandas' group index).
WORK_VALUES: dict[str, Any] = {"extraction_id": STRING, "value": STRING, "value_id": STRING,
                               "column": "Int64"}
#: Every key an audit of a dataset can group by.
WORK_KEYS: tuple[str, ...] = WORK_CATEGORIES + tuple(WORK_VALUES)


def key_ranks(con: duckdb.DuckDBPyConnection, keys: Sequence[str], source: str = "work",
              where: str = "TRUE") -> dict[str, dict[Any, int]]:
    """Each key's values ranked as pandas' ``groupby(sort=True)`` of the work frame
    sorts them: a categorical's (`WORK_CATEGORIES`) by first-seen row, as `group_ranks`
    does, in one scan for all of them; any other key's by value."""
    out: dict[str, dict[Any, int]] = {}
    named = [k for k in dict.fromkeys(keys) if k in WORK_CATEGORIES]
    if named:
        # One GROUPING SETS query: each key's values with the row they are first seen in.
        rows = con.execute(
            f"SELECT {', '.join(quote(k) for k in named)}, GROUPING_ID("
            f"{', '.join(quote(k) for k in named)}) AS set_id, min({quote('order')}) "
            f"FROM {source} WHERE {where} GROUP BY GROUPING SETS ("
            f"{', '.join(f'({quote(k)})' for k in named)}) ORDER BY min({quote('order')})"
            ).fetchall()
        width = len(named)
        for at, k in enumerate(named):
            # GROUPING_ID sets a bit (the first key highest) for each key not grouped.
            mine = ((1 << width) - 1) ^ (1 << (width - 1 - at))
            values = [row[at] for row in rows if row[width] == mine and row[at] is not None]
            out[k] = {value: rank for rank, value in enumerate(values)}
    for k in dict.fromkeys(keys):
        if k not in out:
            values = [v for (v,) in con.execute(
                f"SELECT DISTINCT {quote(k)} FROM {source} WHERE {where} "
                f"AND {quote(k)} IS NOT NULL").fetchall()]
            out[k] = {value: rank for rank, value in enumerate(sorted(values))}
    return out


def group_index(frame: pd.DataFrame, keys: Sequence[str], ranks: dict[str, dict[Any, int]]
                ) -> pd.DataFrame:
    """``frame`` (one row per group, keys as columns) sorted and indexed exactly as
    pandas' ``groupby(keys, observed=True, sort=True)`` of the whole work frame indexes it.

    Unlike `sorted_groups`, a categorical level keeps every value of its key (``ranks``),
    as pandas keeps a categorical's categories on each level of a MultiIndex, also those
    no group uses because their rows miss another key; a key that is not categorical
    (`WORK_VALUES`) has its own dtype.
    """
    keys = list(keys)
    order = np.lexsort([frame[k].map(ranks[k]).to_numpy(dtype=float) for k in reversed(keys)]
                       ) if len(frame) else np.arange(0)
    frame = frame.iloc[order].reset_index(drop=True)
    levels: list[Any] = []
    for k in keys:
        values = frame[k].to_numpy(dtype=object)
        if k in WORK_VALUES:
            levels.append(pd.Index(values, dtype=WORK_VALUES[k], name=k))
        else:
            used = [v for v, _ in sorted(ranks[k].items(), key=lambda item: item[1])]
            levels.append(pd.Categorical(values, categories=pd.Index(used, dtype=STRING)))
    if len(keys) == 1:
        level = levels[0]
        index: pd.Index = (pd.CategoricalIndex(level, name=keys[0])
                           if isinstance(level, pd.Categorical) else level)
    else:
        index = pd.MultiIndex.from_arrays(levels, names=keys)
    return frame.drop(columns=keys).set_index(index)


def frames_of(data: Any) -> Any:
    """A dataset as its frames (fields, cells), read into memory; anything else as it is.

    For an audit of two sides of which only one is a dataset: the other side's frames
    are in memory already, and the in-memory path compares them.
    """
    return (data.fields(), data.cells()) if is_dataset(data) else data
