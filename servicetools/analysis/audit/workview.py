"""The ``work`` view of a dataset: fields and cells stacked and labelled, in DuckDB.

It is the dataset's side of `work.work_frame`: what the audits group (and analysts
query, ``Dataset.connect()``), one row per value with its ``kind``, its ``target``
(`labels.target_label`), ``filled`` (the frames' ``found``), ``passed`` and an ``order``
that sorts rows as the frames in memory hold them: fields before cells, batches in
name order, then each row's place in its batch (``seq``). Beside it, for the audits,
`CODED` (the same rows, each target a number), `VALUES` (without the target, for
queries that need none) and `FAILED` (the ``failures`` table labelled and ordered the
same way).

The target labels are not computed per row: one query finds the distinct
label parts with the first row they appear in, Python labels them with the one rule,
and the views join that small table (`TARGETS`); a join on the parts costs less than
building a text for each of millions of cells, and `TARGETS` also gives the audits the
order in which targets are first seen without another scan.

The dataset reader calls `add_work_view` from `Dataset.connect`; this module imports
nothing of the reader (nor of the audits but the label rule), so neither imports the
other back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from .labels import target_label

if TYPE_CHECKING:
    import duckdb

__all__ = ["CODED", "FAILED", "PARTS", "TARGETS", "VALUES", "add_work_view", "order_sql"]

#: The table of each distinct combination of label parts: its ``target``, the ``code`` of
#: that label and the ``order`` of its ``first_row``.
TARGETS = "_targets"
#: The view of fields and cells stacked as ``work`` stacks them, without the target
#: (cheaper where a query needs none), with each value's ``extracted_target_id``.
VALUES = "_values"
#: ``work`` with each target as a number (`TARGETS`' ``code``, one per label): cheaper to
#: group by than a text.
CODED = "_coded"
#: The view of the ``failures`` table with each row's ``target`` and ``order`` (the
#: failures of a batch are written in its values' order).
FAILED = "_failed"
#: A value's label parts (`labels.target_label`'s arguments), as the view names them.
PARTS: tuple[str, ...] = ("kind", "target_name", "target_id", "header", "column")
_KINDS = {"fields": "field", "cells": "cell"}


def order_sql(table: str, alias: str, batches: str = "b") -> str:
    """The ``order`` of a row of ``table`` (``fields``, ``cells`` or ``failures``) as
    SQL, given its alias and that of its batch's row in ``_batches``."""
    part = {"fields": "0", "cells": "1"}.get(
        table, f"CASE WHEN {alias}.kind = 'field' THEN 0 ELSE 1 END")
    return f"({part}::BIGINT << 60) + ({batches}.batch_rank << 40) + {alias}.seq"


def add_work_view(con: duckdb.DuckDBPyConnection, batches: Sequence[str]) -> None:
    """Add ``_batches`` (each batch's rank), `TARGETS` and the views ``work``, `VALUES`
    and `FAILED` to ``con``, which has the views ``fields``, ``cells`` and ``failures``
    of the batches ``batches`` (in order)."""
    con.register("_batches", pa.table({
        "batch": pa.array(list(batches), type=pa.string()),
        "batch_rank": pa.array(range(len(batches)), type=pa.int64())}))
    # The distinct label parts with their first row.
    found = con.execute(
        "SELECT 'field', target_name, target_id, NULL::VARCHAR, NULL::BIGINT, "
        f"min({order_sql('fields', 't')}) FROM fields t JOIN _batches b USING (batch) "
        "GROUP BY ALL UNION ALL "
        'SELECT \'cell\', target_name, target_id, header, "column", '
        f"min({order_sql('cells', 't')}) FROM cells t JOIN _batches b USING (batch) "
        "GROUP BY ALL").fetchall()
    rows: dict[str, list[Any]] = {name: [] for name in (*PARTS, "target", "code", "first_row")}
    codes: dict[str | None, int | None] = {None: None}
    for *parts, order in found:
        key = tuple(parts)
        for name, value in zip(PARTS, key, strict=True):
            rows[name].append(value)
        label = target_label(*key)
        rows["target"].append(label)
        rows["code"].append(codes.setdefault(label, len(codes) - 1))
        rows["first_row"].append(order)
    types = {"column": pa.int64(), "code": pa.int64(), "first_row": pa.int64()}
    con.register(TARGETS, pa.table({name: pa.array(values, type=types.get(name, pa.string()))
                                    for name, values in rows.items()}))
    for view in _VIEWS:
        con.execute(view)


def _on_parts(kind: str, alias: str) -> str:
    """The join of a row to its `TARGETS` row ``l``: the same parts, NULL matching NULL."""
    parts = ["target_name", "target_id", *(["header", '"column"'] if kind == "cell" else [])]
    return " AND ".join(f"{alias}.{p} IS NOT DISTINCT FROM l.{p}" for p in parts)


def _stacked(table: str, target: str | None) -> str:
    """The rows of ``table`` as ``work`` has them, with ``target`` (a column of
    `TARGETS`) as their target, or none."""
    kind = _KINDS[table]
    header, column = (("t.header", 't."column"') if kind == "cell"
                      else ("NULL::VARCHAR", "NULL::BIGINT"))
    join = (f"JOIN (SELECT * FROM {TARGETS} WHERE kind = '{kind}') l "
            f"ON {_on_parts(kind, 't')}") if target else ""
    return f"""
    SELECT '{kind}' AS kind, {f"l.{target} AS target, " if target else ""}t.target_name,
           {header} AS header, {column} AS "column", t.extraction_id, t.extraction_name,
           t.document_name, t.configuration_id, t.configuration_name, t.target_id,
           t.value_id, t.value, t.confidence, t.validation_passed AS passed,
           coalesce(t.found, false) AS filled, t.condition, t.batch,
           {order_sql(table, 't')} AS "order"{"" if target else ", t.extracted_target_id"}
    FROM {table} t JOIN _batches b USING (batch) {join}"""


# Joined branch by branch: DuckDB joins a union's rows far slower than each part's.
_VIEWS = [
    f"CREATE VIEW work AS {_stacked('fields', 'target')} UNION ALL "
    f"{_stacked('cells', 'target')}",
    f"CREATE VIEW {CODED} AS {_stacked('fields', 'code')} UNION ALL "
    f"{_stacked('cells', 'code')}",
    f"CREATE VIEW {VALUES} AS {_stacked('fields', None)} UNION ALL {_stacked('cells', None)}",
    f"""CREATE VIEW {FAILED} AS
    SELECT t.*, l.target, {order_sql('failures', 't')} AS "order"
    FROM failures t JOIN _batches b USING (batch)
    JOIN {TARGETS} l ON l.kind = t.kind AND {_on_parts('cell', 't')}""",
]
