"""Per target figures of one side of `drift` or `compare` when it is a `frames.Dataset`.

Why: `drift` and `compare` set two batches side by side target by target (or by other
keys): values, mean confidence, fill and pass rates as `scorecard` defines them, and
for `drift` a test of the two confidence samples. On a dataset, DuckDB aggregates the
``work`` view (fields and cells stacked and labelled as `work.work_frame` does), and
Python receives two small results per side, whatever the number of values:

- one row per group: counts of values, of values judged and passed by validation, of
  extractions with a filled field, of cells filled, and the documents a field's fill
  rate is over (`summaries`' per configuration count);
- one row per group and distinct confidence, with how many values have it: the
  service rounds confidences to 4 decimals, so a target has at most 10,001 of them.

A group holding both fields and table cells (``by="document_name"``) has no fill rate
(NaN): a field's is over documents, a column's over cells, and the in-memory
`scorecard` fails on such groups (pandas finds duplicate labels).

From the second come ``confidence_n``, ``confidence_mean`` and (`shift_sql`) the
Mann-Whitney and Kolmogorov-Smirnov statistics, with `significance`'s own functions.

Exactness: counts, and rates of counts, are the in-memory figures to the last bit; so
are the tests (`shift_sql`). A mean is not quite: pandas adds a group's values in row
order with Kahan's compensation (its last correction never applied), which no SQL
aggregate reproduces, and DuckDB's own sums depend on how its threads split the rows.
Here the mean is the sum of ``value * count`` over the distinct confidences rounded
once (`exact_mean`), divided by the count: the same whatever the threads, and within
a unit or two in the last place of pandas' (``0.63`` where pandas says
``0.6299999999999999``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .pushdown import group_ranks, quote, sorted_groups, where_keys
from .work import By, empty_summary, group_keys

if TYPE_CHECKING:
    import duckdb

__all__ = ["CARD_COLUMNS", "GROUP_KEYS", "Side", "check_keys", "exact_mean", "side"]

#: The `scorecard` columns a side gives, with the scorecard's dtypes.
CARD_COLUMNS: tuple[str, ...] = ("n_values", "confidence_n", "confidence_mean", "fill_rate",
                                 "pass_rate")
#: The ``work`` view's columns a dataset's sides group by: those the work frame holds as
#: categoricals, whose groups pandas sorts by first-seen row (`pushdown.sorted_groups`).
GROUP_KEYS: tuple[str, ...] = (
    "kind", "target", "target_name", "header", "document_name", "extraction_name",
    "configuration_id", "configuration_name", "target_id", "condition")

Key = Any  # a group's key: the value of one key, or a tuple of several


def check_keys(by: By, audit: str) -> list[str]:
    """``by`` as a list of keys, or a ValueError naming the keys a dataset groups by."""
    keys = group_keys(by)
    unknown = [k for k in keys if k not in GROUP_KEYS]
    if unknown or not keys:
        raise ValueError(f"by={by!r}: on a dataset, {audit} groups by "
                         f"{', '.join(GROUP_KEYS)}; for other keys, give it the frames "
                         "(ds.fields(), ds.cells())")
    return keys


@dataclass(frozen=True)
class Side:
    """One side: ``card`` (the scorecard's `CARD_COLUMNS`, indexed as `scorecard`
    indexes them) and each group's distinct confidences (ascending, NaN left out) with
    their counts."""

    card: pd.DataFrame
    confidences: dict[Key, tuple[np.ndarray, np.ndarray]]


def side(con: duckdb.DuckDBPyConnection, by: By, scope: str = "TRUE") -> Side:
    """The figures of the ``work`` rows of ``con`` that ``scope`` (SQL) keeps."""
    keys = group_keys(by)
    counts = _groups(con, keys, scope)
    if counts.empty and not _any_row(con, scope):
        # `scorecard` of no rows at all: an empty summary (its index is no categorical)
        return Side(empty_summary(CARD_COLUMNS, by), {})
    confidences = _confidences(con, keys, scope)
    n_conf, means = [], []
    for key in _group_tuples(counts, keys):
        values, count = confidences.get(key if len(keys) > 1 else key[0], _NONE)
        n_conf.append(int(count.sum()))
        means.append(exact_mean(values, count))
    judged = counts["n_judged"].to_numpy(dtype=np.int64)
    documents = counts["n_documents"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        pass_rate = np.where(judged > 0, counts["n_passed"].to_numpy(dtype=float)
                             / np.maximum(judged, 1), np.nan)
        # A field's fill rate is over the documents whose configuration has it, a
        # column's over its cells (`summaries._fill_rates`).
        field_fill = np.where(documents > 0, counts["n_found"].to_numpy(dtype=float)
                              / np.where(documents > 0, documents, 1.0), np.nan)
        cells = counts["n_cells"].to_numpy(dtype=np.int64)
        cell_fill = counts["n_cells_filled"].to_numpy(dtype=float) / np.maximum(cells, 1)
    frame = counts[keys].copy()
    frame["n_values"] = counts["n_values"].to_numpy(dtype=np.int64)
    frame["confidence_n"] = np.asarray(n_conf, dtype=np.int64)
    frame["confidence_mean"] = np.asarray(means, dtype=float)
    # A group of fields and cells together (by document, by configuration) has no fill
    # rate: one is per document, the other per cell (`scorecard` in memory raises).
    has_fields = counts["n_fields"].to_numpy() > 0
    frame["fill_rate"] = np.where(has_fields & (cells > 0), np.nan,
                                  np.where(has_fields, field_fill, cell_fill))
    frame["pass_rate"] = pass_rate
    # Groups sort by where their key is first seen among all the rows, not only those
    # in scope: the in-memory path filters a work frame, which keeps its categories' order.
    ranks = group_ranks(con, keys)
    return Side(sorted_groups(frame, keys, ranks)[list(CARD_COLUMNS)], confidences)


_NONE = (np.zeros(0, dtype=float), np.zeros(0, dtype=np.int64))


def _fetch(con: duckdb.DuckDBPyConnection, sql: str) -> pd.DataFrame:
    """A small aggregated result as a frame: texts as Python strings, NULL as None."""
    table = con.sql(sql).to_arrow_table()
    return pd.DataFrame({name: (column.to_numpy(zero_copy_only=False)
                                if column.null_count == 0 and not _is_text(column.type)
                                else pd.Series(column.to_pylist(), dtype=object))
                         for name, column in zip(table.column_names, table.columns,
                                                 strict=True)})


def _any_row(con: duckdb.DuckDBPyConnection, scope: str) -> bool:
    return con.execute(f"SELECT 1 FROM work WHERE {scope} LIMIT 1").fetchone() is not None


def _is_text(kind: Any) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind)
                or pa.types.is_string_view(kind))


def _group_tuples(frame: pd.DataFrame, keys: Sequence[str]) -> list[tuple[Any, ...]]:
    return list(zip(*(frame[k].tolist() for k in keys), strict=True))


def _groups(con: duckdb.DuckDBPyConnection, keys: list[str], scope: str) -> pd.DataFrame:
    k = ", ".join(quote(key) for key in keys)
    return _fetch(con, f"""
    WITH w AS (SELECT * FROM work WHERE {scope}),
    -- the extractions of each configuration, over every row (NULL keys too); missing
    -- ids count as "", as summaries._extractions_per_configuration fills them
    per_config AS (
        SELECT cfg, count(*) AS n FROM (
            SELECT DISTINCT coalesce(configuration_id, '') AS cfg,
                            coalesce(extraction_id, '') AS ext FROM w)
        GROUP BY cfg),
    documents AS (
        SELECT {k}, sum(p.n) AS n_documents
        FROM (SELECT DISTINCT {k}, coalesce(configuration_id, '') AS cfg FROM w
              WHERE {where_keys(keys)}) JOIN per_config p USING (cfg)
        GROUP BY ALL),
    groups AS (
        SELECT {k}, count(*) AS n_values,
               count(passed) AS n_judged, count(*) FILTER (WHERE passed) AS n_passed,
               count(*) FILTER (WHERE kind = 'field') AS n_fields,
               -- extractions with a filled value; a missing id is one more extraction,
               -- as pandas' drop_duplicates counts NA once
               count(DISTINCT extraction_id) FILTER (WHERE kind = 'field' AND filled)
               + count(DISTINCT 1) FILTER (WHERE kind = 'field' AND filled
                                            AND extraction_id IS NULL) AS n_found,
               count(*) FILTER (WHERE kind <> 'field') AS n_cells,
               count(*) FILTER (WHERE kind <> 'field' AND filled) AS n_cells_filled
        FROM w WHERE {where_keys(keys)} GROUP BY ALL)
    SELECT g.*, coalesce(d.n_documents, 0) AS n_documents
    FROM groups g LEFT JOIN documents d USING ({k})""")


def _confidences(con: duckdb.DuckDBPyConnection, keys: list[str], scope: str
                 ) -> dict[Key, tuple[np.ndarray, np.ndarray]]:
    """Each group's distinct confidences, ascending, and how many values have each."""
    k = ", ".join(quote(key) for key in keys)
    found = _fetch(con, f"""
    SELECT {k}, confidence, count(*) AS n FROM work
    WHERE {scope} AND {where_keys(keys)} AND confidence IS NOT NULL AND NOT isnan(confidence)
    GROUP BY ALL ORDER BY {k}, confidence""")
    if found.empty:
        return {}
    changes = np.zeros(len(found) - 1, dtype=bool)
    for key in keys:  # a group's rows are adjacent (ordered by the keys)
        column = found[key].to_numpy(dtype=object)
        changes |= column[1:] != column[:-1]
    starts = np.concatenate([[0], np.flatnonzero(changes) + 1, [len(found)]])
    values = found["confidence"].to_numpy(dtype=float)
    n = found["n"].to_numpy(dtype=np.int64)
    labels = _group_tuples(found, keys)
    return {(labels[a] if len(keys) > 1 else labels[a][0]): (values[a:b], n[a:b])
            for a, b in zip(starts[:-1], starts[1:], strict=True)}


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp's split: ``x = high + low``, each with at most 26 significant bits."""
    t = 134217729.0 * x  # 2**27 + 1
    high = t - (t - x)
    return high, x - high


def exact_mean(values: np.ndarray, counts: np.ndarray) -> float:
    """The mean of ``values`` each repeated ``counts`` times: their sum rounded once,
    divided by the count (NaN for none).

    Each product ``value * count`` is a double and its exact rounding error (Dekker's
    product, without fused multiply-add), and `math.fsum` adds all of them exactly.

    >>> exact_mean(np.array([0.1, 0.7]), np.array([3, 1]))
    0.25
    """
    n = int(np.sum(counts))
    if n == 0:
        return math.nan
    if not np.isfinite(values).all():  # inf (or inf - inf): the plain sum says it
        return float(np.sum(values * counts)) / n
    c = counts.astype(float)  # exact: counts stay far below 2**53
    product = values * c
    vh, vl = _split(values)
    ch, cl = _split(c)
    error = ((vh * ch - product) + vh * cl + vl * ch) + vl * cl
    return math.fsum(np.concatenate([product, error]).tolist()) / n
