"""The per-group statistics of a `frames.Dataset` (`grouped`), aggregated by DuckDB.

Why: a dataset of a million documents holds tens of millions of values; the frames in
memory would take gigabytes and minutes to read. Here DuckDB aggregates the dataset's
views (`workview`) and only the statistics come into Python: for `value_groups` one row
per group, per group and distinct confidence, and per group and failed condition; for
`failure_groups` one row per group and condition (from the ``failures`` table, whose
conditions were computed when it was written), with its examples; for
`extraction_groups` one row per extraction. A key's level lists its values as the frames
read from the dataset would hold them: a categorical's in the order they are first seen
(the ``order`` of their first row), any other key's sorted.

A ``scope`` (SQL over the view's columns) keeps some rows, as a filter of the frames
would; the levels keep the order of all the rows, as a filtered frame keeps its
categories' order. A sum of confidences is exact, rounded once (`exact_sum`): the same
whatever order DuckDB's threads add in, and within an ulp or two of pandas' sum of the
same values.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ..frames.dtypes import STRING
from .grouped import (
    EXTRACTION_COLUMNS,
    MISSING_EXTRACTION,
    ExtractionGroups,
    FailureGroups,
    Level,
    ValueGroups,
)
from .workview import CODED, FAILED, PARTS, TARGETS, VALUES

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "CATEGORIES",
    "KEYS",
    "VALUE_KEYS",
    "exact_sum",
    "extraction_groups",
    "failure_groups",
    "fetch",
    "is_empty",
    "levels",
    "quote",
    "value_groups",
    "where_keys",
]

#: The ``work`` view's columns that the work frame holds as categoricals.
CATEGORIES: tuple[str, ...] = (
    "kind", "target", "target_name", "header", "document_name", "extraction_name",
    "configuration_id", "configuration_name", "target_id", "condition")
#: The other columns a dataset's audits group by, with their dtype in the work frame.
VALUE_KEYS: dict[str, Any] = {"extraction_id": STRING, "value": STRING, "value_id": STRING,
                              "column": "Int64"}
#: Every key an audit of a dataset can group by.
KEYS: tuple[str, ...] = CATEGORIES + tuple(VALUE_KEYS)


def quote(name: str) -> str:
    """A column name as a SQL identifier (``column`` and ``order`` are keywords)."""
    return '"' + name.replace('"', '""') + '"'


def where_keys(keys: Sequence[str]) -> str:
    """The condition that leaves out rows with a NULL key (pandas drops NA groups)."""
    return " AND ".join(f"{quote(k)} IS NOT NULL" for k in keys) or "TRUE"


def fetch(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
          ) -> pd.DataFrame:
    """The rows of ``sql`` as a frame of plain columns (texts and lists as objects,
    NULL as None, or NaN in a float column), for small aggregated results."""
    table = con.sql(sql, params=params or None).to_arrow_table()
    out: dict[str, Any] = {}
    for name, column in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_floating(column.type) or (
                pa.types.is_integer(column.type) and column.null_count == 0):
            out[name] = column.to_numpy()
        elif pa.types.is_list(column.type):
            out[name] = pd.Series(column.to_pylist(), dtype=object)
        else:  # texts, flags, integers with NULL: Python objects, NULL as None
            out[name] = column.to_numpy(zero_copy_only=False).astype(object)
    return pd.DataFrame(out, index=pd.RangeIndex(table.num_rows))


def levels(con: duckdb.DuckDBPyConnection, keys: Sequence[str], scope: str = "TRUE"
           ) -> list[Level]:
    """Each key's `grouped.Level` among the rows ``scope`` keeps: a categorical's values
    by their first row among all rows, any other key's sorted."""
    named = [k for k in dict.fromkeys(keys) if k in CATEGORIES]
    ranked: dict[str, list[Any]] = {}
    if "target" in named:  # first rows known per label parts (`workview`)
        kept = "" if scope == "TRUE" else (
            f"AND target IN (SELECT target FROM work WHERE {scope})")
        rows = con.execute(f"""
            SELECT target FROM {TARGETS} WHERE target IS NOT NULL {kept}
            GROUP BY target ORDER BY min(first_row)""").fetchall()
        ranked["target"] = [value for (value,) in rows]
        named.remove("target")
    if named:
        # One GROUPING SETS query: each key's values with the row they are first seen in
        # (the target aside, no key needs the labels: the view without them).
        columns = ", ".join(quote(k) for k in named)
        rows = con.execute(
            f"SELECT {columns}, GROUPING_ID({columns}) AS set_id, min({quote('order')}) AS r, "
            f"bool_or({scope}) AS kept FROM {VALUES} GROUP BY GROUPING SETS ("
            f"{', '.join(f'({quote(k)})' for k in named)}) ORDER BY r").fetchall()
        width = len(named)
        for at, k in enumerate(named):
            # GROUPING_ID sets a bit (the first key highest) for each key not grouped.
            mine = ((1 << width) - 1) ^ (1 << (width - 1 - at))
            ranked[k] = [row[at] for row in rows
                         if row[width] == mine and row[at] is not None and row[-1]]
    out = []
    for k in keys:
        if k in ranked:
            out.append(Level.of_categories(ranked[k]))
        else:
            values = sorted(v for (v,) in con.execute(
                f"SELECT DISTINCT {quote(k)} FROM {VALUES} WHERE ({scope}) "
                f"AND {quote(k)} IS NOT NULL").fetchall())
            out.append(Level(pd.Index(values, dtype=VALUE_KEYS[k])))
    return out


def _register(con: duckdb.DuckDBPyConnection, name: str, columns: dict[str, list[Any]]
              ) -> None:
    con.register(name, pa.table({k: pa.array(v, type=pa.string()) for k, v in columns.items()}))


def is_empty(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the dataset of ``con`` holds no value (every value has a `TARGETS` row)."""
    return not con.execute(f"SELECT count(*) FROM {TARGETS}").fetchall()[0][0]


def _numbering(groups: pd.DataFrame, keys: list[str]) -> Any:
    """A function giving the row in ``groups`` of each row of a frame (by its keys)."""

    def index(frame: pd.DataFrame) -> pd.Index:
        return (pd.MultiIndex.from_frame(frame[keys]) if len(keys) > 1
                else pd.Index(frame[keys[0]].to_numpy(dtype=object)))

    known = index(groups)

    def numbered(frame: pd.DataFrame) -> np.ndarray:
        if not len(frame):
            return np.zeros(0, dtype=np.int64)
        return known.get_indexer(index(frame)).astype(np.int64)

    return numbered


def value_groups(con: duckdb.DuckDBPyConnection, keys: Sequence[str], *,
                 corrected: Collection[Any] | None = None, pairs: pd.DataFrame | None = None,
                 conditions: bool = True, scope: str = "TRUE") -> ValueGroups:
    """`grouped.ValueGroups` of the ``work`` rows of ``con`` that ``scope`` keeps:
    ``corrected`` the ids of corrected values, ``pairs`` more (configuration, extraction)
    ids for the extraction counts."""
    keys = list(keys)
    k = ", ".join(quote(key) for key in keys)
    if corrected is not None:
        _register(con, "_corrected", {"value_id": sorted(
            v for v in corrected if isinstance(v, str))})
    is_corrected = ("value_id IN (SELECT value_id FROM _corrected)" if corrected is not None
                    else "false")
    # A group's first kind, name and header (the first row's that has one): when every
    # key is a label part (or the label) of all the rows, from the first row of each
    # combination of parts, which `TARGETS` holds; else from the query's first rows.
    from_parts = scope == "TRUE" and set(keys) <= {"target", *PARTS}
    firsts = "" if from_parts else ", _name, _header"
    # One scan for most of it: values per group and distinct confidence, per group and
    # combination of the flags the counts are of, per group and condition.
    found = fetch(con, f"""
        SELECT {k}, _confidence, _kind, _filled, _passed, _corrected, _configuration
               {firsts}, _condition, GROUPING(_confidence) AS no_confidence,
               GROUPING(_kind) AS no_flags, GROUPING(_condition) AS no_condition,
               count(*) AS n {"" if from_parts else ', min("order") AS first'}
        FROM (SELECT {k}, confidence AS _confidence, kind AS _kind, target_name AS _name,
                     header AS _header, filled AS _filled, passed AS _passed,
                     {is_corrected} AS _corrected,
                     coalesce(configuration_id, '') AS _configuration,
                     {"condition" if conditions else "NULL::VARCHAR"} AS _condition, "order"
              FROM {CODED} WHERE ({scope}) AND {where_keys(keys)})
        GROUP BY GROUPING SETS (({k}, _confidence),
            ({k}, _kind, _filled, _passed, _corrected, _configuration {firsts}),
            ({k}, _condition))""")
    flags = found.loc[found["no_flags"].to_numpy() == 0]
    groups = _counts(flags, keys)
    for name, values in (_firsts_of_parts(con, keys) if from_parts
                         else _firsts(flags, keys)).items():
        groups[name] = values.reindex(pd.MultiIndex.from_frame(groups[keys]) if len(keys) > 1
                                      else groups[keys[0]]).to_numpy(dtype=object)
    numbered = _numbering(groups, keys)
    # Fields only (the view's cells are left out unread); a missing id is one more.
    filled = fetch(con, f"""
        SELECT {k}, count(DISTINCT extraction_id)
                    + (count(*) FILTER (WHERE extraction_id IS NULL) > 0)::BIGINT AS n
        FROM {CODED} WHERE ({scope}) AND {where_keys(keys)} AND kind = 'field' AND filled
        GROUP BY ALL""")
    groups["n_found"] = np.zeros(len(groups), dtype=np.int64)
    groups.loc[numbered(filled), "n_found"] = filled["n"].to_numpy(np.int64)
    confidence = found["_confidence"].to_numpy(dtype=float)
    values = found.loc[(found["no_confidence"].to_numpy() == 0) & ~np.isnan(confidence),
                       [*keys, "_confidence", "n"]]
    confidences = pd.DataFrame({"group": numbered(values),
                                "confidence": values["_confidence"].to_numpy(float),
                                "n": values["n"].to_numpy(np.int64)}
                               ).sort_values(["group", "confidence"], kind="stable",
                                             ignore_index=True)
    groups["confidence_sum"] = _sums(confidences, len(groups))
    ranks: dict[str, int] = {}
    counted = found.loc[(found["no_condition"].to_numpy() == 0)
                        & found["_condition"].notna().to_numpy(), [*keys, "_condition", "n"]]
    if conditions:
        # Each condition's first row among all the rows (a NULL key too, as a frame's
        # categories count them): a tie between two goes to the first.
        ranks = {c: i for i, (c,) in enumerate(con.execute(f"""
            SELECT condition FROM {VALUES} WHERE ({scope}) AND condition IS NOT NULL
            GROUP BY condition ORDER BY min("order")""").fetchall())}
    counted = pd.DataFrame({"group": numbered(counted), "condition": counted["_condition"],
                            "n": counted["n"].to_numpy(np.int64)})
    configurations = flags[[*keys, "_configuration"]].drop_duplicates()
    extra = ""
    if pairs is not None and len(pairs):
        given = pairs[["configuration_id", "extraction_id"]].astype(object)
        given = given.where(given.notna(), "").astype(str).drop_duplicates()
        _register(con, "_pairs", {"cfg": given["configuration_id"].tolist(),
                                  "ext": given["extraction_id"].tolist()})
        extra = "UNION SELECT cfg, ext FROM _pairs"
    extractions = {str(c): int(n) for c, n in con.execute(f"""
        SELECT cfg, count(*) FROM (
            SELECT DISTINCT coalesce(configuration_id, '') AS cfg,
                            coalesce(extraction_id, '') AS ext
            FROM {VALUES} WHERE {scope} {extra})
        GROUP BY cfg""").fetchall()}
    if "target" in keys:  # grouped as numbers (`workview.CODED`), labelled back
        labels = dict(con.execute(f"SELECT DISTINCT code, target FROM {TARGETS}").fetchall())
        groups["target"] = groups["target"].map(labels).astype(object)
    return ValueGroups(
        keys=keys, levels=levels(con, keys, scope), groups=groups, confidences=confidences,
        conditions=counted, condition_ranks=ranks,
        configurations=pd.DataFrame({
            "group": numbered(configurations),
            "configuration": configurations["_configuration"].to_numpy(dtype=object)}),
        extractions=extractions)


def _counts(flags: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The keys and counts of `grouped.GROUP_COLUMNS` from the values per group and
    combination of the flags the counts are of."""
    kind, passed = flags["_kind"].to_numpy(dtype=object), flags["_passed"]
    n = flags["n"].to_numpy(np.int64)
    counted = flags[keys].assign(
        n_values=n, n_fields=np.where(kind == "field", n, 0),
        n_cells_filled=np.where((kind != "field") & flags["_filled"].eq(True).to_numpy(), n, 0),
        n_judged=np.where(passed.notna().to_numpy(), n, 0),
        n_passed=np.where(passed.eq(True).to_numpy(), n, 0),
        n_failed=np.where(passed.eq(False).to_numpy(), n, 0),
        n_corrected=np.where(flags["_corrected"].eq(True).to_numpy(), n, 0))
    return counted.groupby(keys, sort=False).sum().reset_index()


_FIRSTS = {"kind": "_kind", "target_name": "_name", "header": "_header"}


def _first(rows: pd.DataFrame, keys: list[str], order: str) -> dict[str, pd.Series]:
    """Per group of ``keys``, the first (by ``order``) of each of `_FIRSTS`' columns
    that is not missing, indexed by the group's keys."""
    ordered = rows.sort_values(order, kind="stable")
    out = {}
    for name, column in _FIRSTS.items():
        kept = ordered.loc[ordered[column].notna().to_numpy(), [*keys, column]]
        out[name] = kept.drop_duplicates(keys).set_index(keys)[column]
    return out


def _firsts(flags: pd.DataFrame, keys: list[str]) -> dict[str, pd.Series]:
    """The groups' firsts from the first row of each group and combination of flags."""
    return _first(flags, keys, "first")


def _firsts_of_parts(con: duckdb.DuckDBPyConnection, keys: list[str]) -> dict[str, pd.Series]:
    """The groups' firsts from the first row of each combination of label parts, when
    every key is a part or the label: a part is the same on every row of its
    combination, so a group's first is that of its first combination that has one."""
    found = fetch(con, f"SELECT * FROM {TARGETS}")
    # The groups' targets are numbers here (`workview.CODED`).
    found = found.assign(target=found["code"],
                         **{column: found[name] for name, column in _FIRSTS.items()})
    return _first(found.loc[found[keys].notna().all(axis=1).to_numpy()], keys, "first_row")


# -- failures ----------------------------------------------------------------------------
#: The failures table has no extraction name: it comes from the values of the extraction.
_EXTRACTION_NAMES = """
LEFT JOIN (SELECT extraction_id, arg_min(extraction_name, "order") AS extraction_name
           FROM work WHERE extraction_id IS NOT NULL GROUP BY extraction_id)
USING (extraction_id)
"""


def failure_groups(con: duckdb.DuckDBPyConnection, keys: Sequence[str], examples: int
                   ) -> FailureGroups:
    """`grouped.FailureGroups` from the dataset's ``failures`` table (one row per failed
    message, its condition computed when it was written). ``by`` with
    ``extraction_name`` takes the name from the extraction's values (a failure without
    an extraction id has none, and is left out)."""
    keys = list(keys)
    k = ", ".join(quote(key) for key in keys)
    kc = f"{k}, condition"
    names = _EXTRACTION_NAMES if "extraction_name" in keys else ""
    rows = fetch(con, f"""
    WITH grouped AS (SELECT * FROM (SELECT * FROM {FAILED} {names}) WHERE {where_keys(keys)}),
    counts AS (
        SELECT {kc}, arg_min(kind, "order") AS first_kind, count(*) AS n,
               count(DISTINCT extraction_id) AS n_documents
        FROM grouped GROUP BY ALL),
    -- the most frequent values first, a tie in the order they were first seen
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
        GROUP BY ALL)
    SELECT c.*, e.examples, d.documents FROM counts c
    LEFT JOIN examples e USING ({kc}) LEFT JOIN docs d USING ({kc})
    """, {"examples": int(examples)})
    # by="kind" has the kind as a key already
    rows = rows.drop(columns="first_kind") if "kind" in keys else rows.rename(
        columns={"first_kind": "kind"})
    for name in ("examples", "documents"):
        rows[name] = [tuple(x) if x is not None else () for x in rows[name]]
    totals = fetch(con, f"SELECT {k}, count(*) AS n FROM work WHERE {where_keys(keys)} "
                        "GROUP BY ALL")
    return FailureGroups(keys=keys, levels=levels(con, keys), rows=rows, totals=totals)


# -- documents ---------------------------------------------------------------------------
def extraction_groups(con: duckdb.DuckDBPyConnection) -> ExtractionGroups:
    """`grouped.ExtractionGroups` of the dataset: one query, one row per extraction."""
    rows = fetch(con, f"""
    WITH per_document AS (
        SELECT coalesce(extraction_id, $missing) AS extraction_id, min("order") AS first,
               arg_min(document_name, "order") FILTER (WHERE document_name IS NOT NULL)
                   AS document_name,
               arg_min(configuration_name, "order")
                   FILTER (WHERE configuration_name IS NOT NULL) AS configuration_name,
               count(*) AS n_values, count(*) FILTER (WHERE filled) AS n_filled,
               count(confidence) AS confidence_n, sum(confidence) AS confidence_sum,
               min(confidence) AS confidence_min,
               count(*) FILTER (WHERE NOT passed) AS n_failed
        FROM work GROUP BY 1),
    -- the targets in the order they are first seen
    target_rank AS (SELECT target, min(first_row) AS r FROM {TARGETS} GROUP BY target),
    failed AS (
        SELECT extraction_id, list(target ORDER BY r) AS failed_targets FROM (
            SELECT DISTINCT coalesce(extraction_id, $missing) AS extraction_id, target
            FROM work WHERE NOT passed AND target IS NOT NULL)
        JOIN target_rank USING (target) GROUP BY extraction_id)
    SELECT p.*, f.failed_targets FROM per_document p LEFT JOIN failed f USING (extraction_id)
    ORDER BY first
    """, {"missing": MISSING_EXTRACTION})
    empty: tuple[str, ...] = ()
    rows["failed_targets"] = [tuple(t) if t is not None else empty
                              for t in rows["failed_targets"]]
    return ExtractionGroups(rows[list(EXTRACTION_COLUMNS)])


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp's split: ``x = high + low``, each with at most 26 significant bits."""
    t = 134217729.0 * x  # 2**27 + 1
    high = t - (t - x)
    return high, x - high


def exact_sum(values: np.ndarray, counts: np.ndarray) -> float:
    """The sum of ``values`` each repeated ``counts`` times, exact and rounded once: the
    same whatever order DuckDB's threads would add them in.

    Each product ``value * count`` is a double and its exact rounding error (Dekker's
    product, without fused multiply-add), and `math.fsum` adds all of them exactly.

    >>> exact_sum(np.array([0.1, 0.7]), np.array([3, 1]))
    1.0
    """
    if not np.isfinite(values).all():  # inf (or inf - inf): the plain sum says it
        return float(np.sum(values * counts))
    c = counts.astype(float)  # exact: counts stay far below 2**53
    product = values * c
    vh, vl = _split(values)
    ch, cl = _split(c)
    error = ((vh * ch - product) + vh * cl + vl * ch) + vl * cl
    return math.fsum(np.concatenate([product, error]).tolist())


def _sums(confidences: pd.DataFrame, n_groups: int) -> np.ndarray:
    """Each group's `exact_sum` of its confidences."""
    values = confidences["confidence"].to_numpy(dtype=float)
    counts = confidences["n"].to_numpy(dtype=np.int64)
    bounds = np.searchsorted(confidences["group"].to_numpy(dtype=np.int64),
                             np.arange(n_groups + 1), side="left")
    return np.array([exact_sum(values[a:b], counts[a:b])
                     for a, b in zip(bounds[:-1], bounds[1:], strict=True)], dtype=float)
