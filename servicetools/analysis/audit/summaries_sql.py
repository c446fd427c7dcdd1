"""`scorecard`, `failures` and `documents` of a `frames.Dataset`, aggregated by DuckDB.

Why: a dataset of a million documents holds tens of millions of values. The in-memory
audits (`summaries`) need them all as frames, gigabytes read for minutes; here each audit
is a few SQL queries over the dataset's ``work`` view (fields and cells stacked and
labelled as `work.work_frame` does) and its ``failures`` table (one row per failed
validation message, its condition already computed), and only the aggregated rows (one
per group) come into Python. `summaries` dispatches here when given a dataset.

The result is the frame the in-memory path gives on the dataset's frames
(``audit.scorecard(ds.fields(), ds.cells())``): same index (dtype and categories),
columns, dtypes, row order, and values up to float rounding. What that takes:

- groups sort as pandas sorts them: a categorical key (names) by its values' first row,
  any other key by value (`pushdown.key_ranks`, `pushdown.group_index`); a key that is
  NULL leaves its rows out of the groups, as pandas leaves NA keys out;
- a missing confidence is NULL in the dataset, and SQL's aggregates skip NULLs as pandas
  skips NaN; quantiles interpolate linearly (``quantile_cont``, pandas' default);
- ties are broken as pandas' stable sorts break them: ``top_condition`` by the
  condition's first row in the whole work frame (its category order), ``failures``'
  examples by their first row in the group (`collections.Counter.most_common`);
- the denominators of ``n_documents`` and ``fill_rate`` follow `summaries`' per
  configuration logic: the extractions of each configuration (missing ids count as
  ``""``, as the in-memory path fills them), summed over the configurations in a group.

Arguments that are frames in memory go into DuckDB as small tables: the ids of the values
a ``corrections`` ledger changed, and the distinct (configuration, extraction) pairs of a
``targets`` frame (`frames.targets` of the same batches: the extractions where a target
has no value at all count in its denominators).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..frames.dataset import TARGET_LABEL_SQL, Dataset
from ..frames.dtypes import STRING
from .arguments import check_rate
from .pushdown import WORK_CATEGORIES, WORK_KEYS, group_index, key_ranks, quote, where_keys
from .summaries import (
    DOCUMENT_COLUMNS,
    FAILURE_COLUMNS,
    SCORECARD_COLUMNS,
    corrected_ids,
)
from .work import By, categorical_names, empty_summary, group_keys

if TYPE_CHECKING:
    import duckdb

__all__ = ["documents", "failures", "scorecard"]


def _keys(by: By, audit: str) -> list[str]:
    """``by`` as a list of the ``work`` view's columns one can group by, else a
    ValueError that says which and how to audit the frames instead."""
    keys = group_keys(by)
    if "condition" in keys:  # what both audits count per group
        raise ValueError(f"by={by!r}: {audit} counts conditions per group; group by "
                         "something else")
    unknown = [k for k in keys if k not in WORK_KEYS]
    if unknown:
        raise ValueError(
            f"by={by!r}: a dataset's {audit} groups by {', '.join(WORK_KEYS)}; for "
            f"{', '.join(map(repr, unknown))}, audit its frames: "
            f"audit.{audit}(ds.fields(), ds.cells(), by=...)")
    return keys


def _no_cells(cells: Any, audit: str) -> None:
    if cells is not None:
        raise TypeError(f"audit.{audit}(dataset, cells): a dataset holds its cells; "
                        "give the dataset alone")


def _columns(keys: Sequence[str]) -> str:
    return ", ".join(quote(k) for k in keys)


def _fetch(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
           ) -> pd.DataFrame:
    """The rows of ``sql`` as a frame of plain columns (texts as objects, counts as
    integers, NULL as None or NaN), for the small aggregated results only."""
    table = con.sql(sql, params=params or None).to_arrow_table()
    out = {}
    for name, column in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_list(column.type):
            out[name] = pd.Series(column.to_pylist(), dtype=object)
        elif pa.types.is_floating(column.type):
            out[name] = column.to_numpy()  # NULL as NaN
        elif pa.types.is_integer(column.type) and column.null_count == 0:
            out[name] = column.to_numpy()
        else:
            out[name] = pd.Series(column.to_pylist(), dtype=object)
    return pd.DataFrame(out, index=pd.RangeIndex(table.num_rows))


def _ranks(con: duckdb.DuckDBPyConnection, keys: list[str], groups: pd.DataFrame
           ) -> dict[str, dict[Any, int]]:
    """`pushdown.key_ranks` of ``keys``; one key needs no query of its own: its groups'
    ``first_row`` (the group's first row in the work view) is where its values are
    first seen, and so their rank."""
    if len(keys) > 1:
        return key_ranks(con, keys)
    key = keys[0]
    if key in WORK_CATEGORIES:
        firsts = groups.groupby(key, sort=False)["first_row"].min().sort_values()
        return {key: {value: rank for rank, value in enumerate(firsts.index)}}
    return {key: {value: rank for rank, value in enumerate(sorted(set(groups[key])))}}


def _count(con: duckdb.DuckDBPyConnection, source: str, where: str = "TRUE") -> int:
    ((n,),) = con.execute(f"SELECT count(*) FROM {source} WHERE {where}").fetchall()
    return int(n)


_TARGET_LABEL = TARGET_LABEL_SQL  # the work view's label, from its parts

# -- scorecard -------------------------------------------------------------------------------
def _register_pairs(con: duckdb.DuckDBPyConnection, targets: pd.DataFrame | None) -> str:
    """The (configuration, extraction) pairs of ``targets`` as a table; the SQL that adds
    them to the work view's pairs (nothing without targets)."""
    if targets is None or not len(targets):
        return ""
    pairs = pd.DataFrame({
        "cfg": targets["configuration_id"].astype(object).to_numpy(),
        "ext": targets["extraction_id"].astype(object).to_numpy()})
    # The in-memory path fills missing ids with "" before it counts distinct pairs.
    pairs = pairs.where(pairs.notna(), "").astype(str).drop_duplicates()
    con.register("_target_pairs", pa.Table.from_pandas(pairs, preserve_index=False))
    return "UNION SELECT cfg, ext FROM _target_pairs"


def _register_corrected(con: duckdb.DuckDBPyConnection, corrections: pd.DataFrame) -> None:
    """The ids of the values the ledger changed (`summaries.corrected_ids`) as a table."""
    ids = sorted(v for v in corrected_ids(corrections) if isinstance(v, str))
    con.register("_corrected", pa.table({"value_id": pa.array(ids, type=pa.string())}))


def _scorecard_sql(keys: list[str], pairs_extra: str, corrections: bool) -> str:
    k = _columns(keys)
    on = " AND ".join(f"a.{quote(key)} = {{t}}.{quote(key)}" for key in keys)
    corrected = ("avg(CASE WHEN value_id IN (SELECT value_id FROM _corrected) "
                 "THEN 1.0 ELSE 0.0 END)" if corrections else "NULL::DOUBLE")
    # One scan of the view (DuckDB materialises a CTE read several times), whose rows
    # every part groups. Rows with a NULL key make groups of their own, dropped at the
    # end (HAVING): cheaper than a filter on the rows, which would compute the cells'
    # target labels twice.
    return f"""
    WITH grouped AS (SELECT * FROM work),
    -- the extractions of each configuration, over all rows (NULL keys too), as
    -- summaries._extractions_per_configuration counts them
    pairs AS (SELECT DISTINCT coalesce(configuration_id, '') AS cfg,
                              coalesce(extraction_id, '') AS ext
              FROM grouped {pairs_extra}),
    per_config AS (SELECT cfg, count(*) AS n FROM pairs GROUP BY cfg),
    documents AS (
        SELECT {k}, sum(p.n)::BIGINT AS n_documents
        FROM (SELECT DISTINCT {k}, coalesce(configuration_id, '') AS cfg FROM grouped)
        JOIN per_config p USING (cfg) GROUP BY ALL),
    -- fields: the extractions with a filled value (a missing id is one more, as pandas'
    -- drop_duplicates keeps one NA)
    filled_fields AS (
        SELECT {k}, count(DISTINCT extraction_id)
                    + (count(*) FILTER (WHERE extraction_id IS NULL) > 0)::BIGINT AS n
        FROM grouped WHERE kind = 'field' AND filled GROUP BY ALL),
    -- top_condition: the most frequent; a tie goes to the condition seen first in the
    -- whole frame (pandas' stable sort over its categories)
    condition_rank AS (SELECT condition, min("order") AS r FROM grouped
                       WHERE condition IS NOT NULL GROUP BY condition),
    tops AS (
        SELECT {k}, condition AS top_condition FROM (
            SELECT {k}, condition, count(*) AS n FROM grouped
            WHERE condition IS NOT NULL GROUP BY ALL)
        JOIN condition_rank USING (condition)
        QUALIFY row_number() OVER (PARTITION BY {k} ORDER BY n DESC, r) = 1),
    a AS (
        SELECT {k},
            -- the first non-NULL of the group, as pandas' first(); named apart from
            -- the keys (by="kind")
            arg_min(kind, "order") AS first_kind,
            arg_min(target_name, "order") FILTER (WHERE target_name IS NOT NULL)
                AS first_target_name,
            arg_min(header, "order") FILTER (WHERE header IS NOT NULL) AS first_header,
            min("order") AS first_row,
            count(*) AS n_values,
            count(*) FILTER (WHERE kind = 'field') AS n_field_values,
            count(*) FILTER (WHERE kind <> 'field') AS n_cells,
            avg(filled::DOUBLE) FILTER (WHERE kind <> 'field') AS cell_fill_rate,
            count(confidence) AS confidence_n,
            avg(confidence) AS confidence_mean,
            min(confidence) AS confidence_min,
            quantile_cont(confidence, [0.1, 0.5, 0.9]) AS quantiles,
            count(*) FILTER (WHERE confidence < $threshold) AS n_below,
            avg(passed::DOUBLE) AS pass_rate,
            count(*) FILTER (WHERE passed = false) AS n_failed,
            {corrected} AS correction_rate
        FROM grouped GROUP BY ALL HAVING {where_keys(keys)})
    SELECT a.*, d.n_documents, coalesce(f.n, 0) AS n_filled_extractions, t.top_condition
    FROM a
    LEFT JOIN documents d ON {on.format(t="d")}
    LEFT JOIN filled_fields f ON {on.format(t="f")}
    LEFT JOIN tops t ON {on.format(t="t")}
    """


def scorecard(data: Dataset, cells: pd.DataFrame | None = None, *, threshold: float = 0.5,
              corrections: pd.DataFrame | None = None, targets: pd.DataFrame | None = None,
              by: By = "target") -> pd.DataFrame:
    """`summaries.scorecard` of a dataset: one query for the groups (and one for the
    order of the keys when there are several), one row per group back.

    ``targets`` is a frame in memory (`frames.targets` of the dataset's results): only
    its distinct (configuration, extraction) pairs go to DuckDB.
    """
    _no_cells(cells, "scorecard")
    check_rate("threshold", threshold)
    keys = _keys(by, "scorecard")
    con = data.connect()
    try:
        if not _count(con, "work"):
            return empty_summary(SCORECARD_COLUMNS, by)
        extra = _register_pairs(con, targets)
        if corrections is not None:
            _register_corrected(con, corrections)
        sql = _scorecard_sql(keys, extra, corrections is not None)
        groups = _fetch(con, sql, {"threshold": float(threshold)})
        ranks = _ranks(con, keys, groups)
    finally:
        con.close()
    out = group_index(groups, keys, ranks)
    quantiles = [q if isinstance(q, list) else [None] * 3 for q in out["quantiles"]]
    q = np.array([[np.nan if x is None else x for x in row] for row in quantiles],
                 dtype=float).reshape(len(out), 3)
    n_documents = out["n_documents"].fillna(0).astype(np.int64)
    confidence_n = out["confidence_n"].astype(np.int64)
    # Fields: the share of the group's extractions with a filled value; cells: the share
    # of filled cells; a group of both has none (NaN), as in memory.
    field_rate = (out["n_filled_extractions"].astype(float)
                  / n_documents.where(n_documents > 0).astype(float))
    fields_only = (out["n_cells"] == 0).to_numpy()
    cells_only = (out["n_field_values"] == 0).to_numpy()
    fill_rate = np.where(fields_only, field_rate.to_numpy(dtype=float),
                         np.where(cells_only, out["cell_fill_rate"].astype(float), np.nan))
    result = pd.DataFrame(index=out.index, data={
        "kind": categorical_names(out["first_kind"].to_numpy(dtype=object)),
        "target_name": categorical_names(out["first_target_name"].to_numpy(dtype=object)),
        "header": categorical_names(out["first_header"].to_numpy(dtype=object)),
        "n_documents": n_documents.to_numpy(),
        "n_values": out["n_values"].astype(np.int64).to_numpy(),
        "fill_rate": fill_rate,
        "confidence_n": confidence_n.to_numpy(),
        "confidence_mean": out["confidence_mean"].astype(float).to_numpy(),
        "confidence_min": out["confidence_min"].astype(float).to_numpy(),
        "confidence_p10": q[:, 0],
        "confidence_p50": q[:, 1],
        "confidence_p90": q[:, 2],
        "share_below": (out["n_below"].astype(float)
                        / confidence_n.where(confidence_n > 0).astype(float)).to_numpy(),
        "pass_rate": out["pass_rate"].astype(float).to_numpy(),
        "n_failed": out["n_failed"].astype(np.int64).to_numpy(),
        "top_condition": categorical_names(out["top_condition"].to_numpy(dtype=object)),
        "correction_rate": out["correction_rate"].astype(float).to_numpy(),
    })
    return result[list(SCORECARD_COLUMNS)]


# -- failures --------------------------------------------------------------------------------
#: The failed messages labelled by target and ordered as the work frame holds its values
#: (fields first, batches in order, then the rows: the failures of a batch are written in
#: its values' order, so ``seq`` keeps it).
_FAILED = f"""
SELECT f.*, {_TARGET_LABEL} AS target,
       ((CASE WHEN kind = 'field' THEN 0 ELSE 1 END)::BIGINT << 60)
       + (b.batch_rank << 40) + seq AS "order"
FROM failures f JOIN _batches b USING (batch)
"""
#: The failures table has no extraction name: it comes from the values of the extraction.
_EXTRACTION_NAMES = """
LEFT JOIN (SELECT extraction_id, arg_min(extraction_name, "order") AS extraction_name
           FROM work WHERE extraction_id IS NOT NULL GROUP BY extraction_id)
USING (extraction_id)
"""


def _failures_sql(keys: list[str]) -> str:
    k = _columns(keys)
    kc = f"{k}, condition"
    on = " AND ".join(f"c.{quote(key)} = {{t}}.{quote(key)}" for key in [*keys, "condition"])
    on_totals = " AND ".join(f"c.{quote(key)} = t.{quote(key)}" for key in keys)
    names = _EXTRACTION_NAMES if "extraction_name" in keys else ""
    return f"""
    WITH failed AS (SELECT * FROM ({_FAILED}) {names}),
    grouped AS (SELECT * FROM failed WHERE {where_keys(keys)}),
    counts AS (
        SELECT {kc}, count(*) AS n, arg_min(kind, "order") AS first_kind,
               count(DISTINCT extraction_id) AS n_documents
        FROM grouped GROUP BY ALL),
    -- the most frequent values first, a tie in the order they were first seen
    -- (Counter.most_common)
    examples AS (
        SELECT {kc}, list(value ORDER BY c DESC, o) AS examples FROM (
            SELECT {kc}, value, count(*) AS c, min("order") AS o FROM grouped
            WHERE value IS NOT NULL GROUP BY {kc}, value
            QUALIFY row_number() OVER (PARTITION BY {kc} ORDER BY c DESC, o) <= $examples)
        GROUP BY ALL),
    -- the documents in the order they were first seen
    docs AS (
        SELECT {kc}, list(document_name ORDER BY o) AS documents FROM (
            SELECT {kc}, document_name, min("order") AS o FROM grouped
            WHERE document_name IS NOT NULL GROUP BY {kc}, document_name
            QUALIFY row_number() OVER (PARTITION BY {kc} ORDER BY o) <= $examples)
        GROUP BY ALL),
    totals AS ({_totals_sql(keys)})
    SELECT c.*, e.examples, d.documents, t.total, t.first_row FROM counts c
    JOIN totals t ON {on_totals}
    LEFT JOIN examples e ON {on.format(t="e")}
    LEFT JOIN docs d ON {on.format(t="d")}
    """


#: The columns a target label is made of (`_TARGET_LABEL`).
_LABEL_PARTS = ("kind", "target_name", "target_id", "header", "column")


def _totals_sql(keys: list[str]) -> str:
    """The values of each group and its first row, over the whole work view.

    By ``target``, counted per the label's parts first, then labelled: the counts add
    up, and labelling a few parts instead of every cell saves a quarter of the scan.
    """
    if "target" not in keys:
        return (f'SELECT {_columns(keys)}, count(*) AS total, min("order") AS first_row '
                f"FROM work WHERE {where_keys(keys)} GROUP BY ALL")
    inner = _columns(list(dict.fromkeys([*(k for k in keys if k != "target"), *_LABEL_PARTS])))
    outer = ", ".join(f"{_TARGET_LABEL} AS target" if k == "target" else quote(k)
                      for k in keys)
    return (f"SELECT {outer}, sum(n)::BIGINT AS total, min(first_row) AS first_row FROM ("
            f'SELECT {inner}, count(*) AS n, min("order") AS first_row FROM work '
            f"GROUP BY ALL) GROUP BY ALL HAVING {where_keys(keys)}")


def failures(data: Dataset, cells: pd.DataFrame | None = None, *, examples: int = 3,
             by: By = "target") -> pd.DataFrame:
    """`summaries.failures` of a dataset: one query over its ``failures`` table (the
    conditions computed when it was written), one row per target and condition back.

    ``examples`` below 0 is refused (in memory it gives every document but the last).
    ``by`` with ``extraction_name`` takes the name from the extraction's values (a
    failure without an extraction id has none, and is left out).
    """
    _no_cells(cells, "failures")
    keys = _keys(by, "failures")
    if examples < 0:
        raise ValueError(f"examples is a number of examples, 0 or more, not {examples!r}")
    index_names = [*keys, "condition"]
    con = data.connect()
    try:
        if not _count(con, "work"):
            return empty_summary(FAILURE_COLUMNS, index_names)
        groups = _fetch(con, _failures_sql(keys), {"examples": int(examples)})
        ranks = _ranks(con, keys, groups)
    finally:
        con.close()
    if groups.empty:
        return empty_summary(FAILURE_COLUMNS, index_names)
    # Targets in group order, then the most frequent condition first, a tie by condition
    # (pandas sorted them by value before its stable sort by frequency).
    order = sorted(range(len(groups)), key=lambda i: (
        *(ranks[key][groups.at[i, key]] for key in keys), -int(groups.at[i, "n"]),
        groups.at[i, "condition"]))
    rows = []
    for i in order:
        row = groups.loc[i]
        rows.append({**{key: row[key] for key in index_names},
                     "kind": row["first_kind"], "n": row["n"],
                     "share": row["n"] / row["total"], "n_documents": row["n_documents"],
                     "examples": tuple(row["examples"] or ()),
                     "documents": tuple(row["documents"] or ())})
    out = pd.DataFrame(rows).set_index(index_names, drop=False)  # by="kind" keeps kind
    out["n"] = out["n"].astype(np.int64)
    out["n_documents"] = out["n_documents"].astype(np.int64)
    return out[list(FAILURE_COLUMNS)]


# -- documents -------------------------------------------------------------------------------
_DOCUMENTS_SQL = f"""
WITH per_document AS (
    SELECT coalesce(extraction_id, '?') AS _key, min("order") AS first,
           arg_min(document_name, "order") FILTER (WHERE document_name IS NOT NULL)
               AS document_name,
           arg_min(configuration_name, "order") FILTER (WHERE configuration_name IS NOT NULL)
               AS configuration_name,
           count(*) AS n_values, count(*) FILTER (WHERE filled) AS n_filled,
           avg(confidence) AS confidence_mean, min(confidence) AS confidence_min,
           count(*) FILTER (WHERE passed = false) AS n_failed
    FROM work GROUP BY _key),
-- failed_targets lists targets in the order of the work frame's categories: by their
-- first row. Taken per target's parts, then labelled: labelling every cell would cost
-- more than the rest of the query.
parts AS (SELECT kind, target_name, target_id, header, "column", min("order") AS r
          FROM work GROUP BY ALL),
target_rank AS (SELECT {_TARGET_LABEL} AS target, min(r) AS r FROM parts GROUP BY 1),
failed AS (
    SELECT _key, list(target ORDER BY r) AS failed_targets FROM (
        SELECT DISTINCT coalesce(extraction_id, '?') AS _key, target FROM work
        WHERE passed = false AND target IS NOT NULL)
    JOIN target_rank USING (target) GROUP BY _key)
SELECT p.*, f.failed_targets FROM per_document p LEFT JOIN failed f USING (_key)
ORDER BY first
"""


def documents(data: Dataset, cells: pd.DataFrame | None = None) -> pd.DataFrame:
    """`summaries.documents` of a dataset: one query, one row per extraction back (in
    the order of their first value, as the in-memory path keeps them)."""
    _no_cells(cells, "documents")
    con = data.connect()
    try:
        if not _count(con, "work"):
            return empty_summary(DOCUMENT_COLUMNS, "extraction_id")
        rows = _fetch(con, _DOCUMENTS_SQL)
    finally:
        con.close()
    n_values = rows["n_values"].astype(np.int64).to_numpy()
    n_filled = rows["n_filled"].astype(np.int64).to_numpy()
    n_failed = rows["n_failed"].astype(np.int64).to_numpy()
    empty: tuple[str, ...] = ()
    out = pd.DataFrame(index=pd.Index(rows["_key"].to_numpy(dtype=object), dtype=STRING,
                                      name="extraction_id"), data={
        "document_name": categorical_names(rows["document_name"].to_numpy(dtype=object)),
        "configuration_name": categorical_names(
            rows["configuration_name"].to_numpy(dtype=object)),
        "n_values": n_values,
        "n_filled": n_filled,
        "fill_rate": n_filled / n_values,
        "confidence_mean": rows["confidence_mean"].astype(float).to_numpy(),
        "confidence_min": rows["confidence_min"].astype(float).to_numpy(),
        "n_failed": n_failed,
        # Float64 as in memory, where the failed flags are nullable booleans.
        "failure_rate": pd.array(n_failed / n_values, dtype="Float64"),
        "failed_targets": [tuple(t) if t is not None else empty
                           for t in rows["failed_targets"]],
    })
    return out[list(DOCUMENT_COLUMNS)]
