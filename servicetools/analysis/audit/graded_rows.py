"""The rows of a `frames.Dataset` that a grade against the truth needs, as a work frame.

Why: the truth covers a dev set of a few hundred documents, the dataset may hold a
million. `grade` (and `accuracy`, `calibration`, `thresholds`, `compare` through it)
given a dataset has DuckDB find the rows the grade reads, fetches only those, and grades
them with `grading`'s own code: the grade is the one of the dataset's frames in memory
(``audit.grade(ds.fields(), truth, cells=ds.cells())``), to the last bit.

Which rows, with a truth of expected values (`truth_work`):

- the truth's documents are matched by path suffix (`matching.document_matcher`) to the
  distinct (document name, extraction name) pairs of the dataset: a pair per document,
  not one per value;
- of the matched extractions, the rows of the targets the truth names (by
  ``target_name``, as `grading` compares them), and each extraction's first row:
  `grade` sorts by where each extraction first appears, and a matched extraction
  without any of the truth's targets is graded too (every expected value missing).

With a corrections ledger: the rows whose ``value_id`` the ledger names, every row of
the extractions it names (an entry without a value is found by extraction and target),
the first row of each target id it names (found by target alone), and again each
extraction's first row.

The fetched rows are converted as `Dataset.fields` and `Dataset.cells` convert theirs
and stacked by `work.work_frame`; only the ``target`` categories differ (the fetched
rows see targets in another first-seen order), and are set to the order of the whole
dataset (`workview`'s targets), which `grade` sorts its rows by.

`calibration` and `thresholds` aggregate the grade with numpy, as in memory: it holds
the truth's documents only, and is in memory already; DuckDB's sums of confidences
would differ from numpy's in the last bits (another order of addition), and the
figures would no longer be the in-memory ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from ..frames.dataset import table_frame
from ..frames.dtypes import STRING
from .ground_truth import is_ledger
from .matching import document_matcher, truth_documents
from .work import work_frame
from .workview import TARGETS, VALUES, order_sql

if TYPE_CHECKING:
    import duckdb

__all__ = ["truth_work"]

def truth_work(con: duckdb.DuckDBPyConnection, expected: pd.DataFrame,
               scope: str = "TRUE") -> pd.DataFrame:
    """The work frame of the rows of ``con``'s dataset (those ``scope``, SQL, keeps)
    that grading ``expected`` reads."""
    if is_ledger(expected):
        _keep_ledger(con, expected, scope)
    else:
        _keep_truth(con, expected, scope)
    work = work_frame([_fetched(con, "fields"), _fetched(con, "cells")])
    # The order of the targets among all the rows (in scope or not), as the categories
    # of a work frame filtered in memory keep it.
    order = [target for (target,) in con.execute(
        f"SELECT target FROM {TARGETS} WHERE target IS NOT NULL GROUP BY target "
        "ORDER BY min(first_row)").fetchall()]
    if len(work) and set(work["target"].cat.categories) <= set(order):
        work["target"] = work["target"].cat.set_categories(pd.Index(order, dtype=STRING))
    return work


def _texts(values: Any) -> pa.Array:
    found = sorted({v for v in pd.Series(values, dtype=object).dropna() if isinstance(v, str)})
    return pa.array(found, type=pa.string())


def _keep_truth(con: duckdb.DuckDBPyConnection, expected: pd.DataFrame, scope: str) -> None:
    match = document_matcher(expected["document"].dropna().astype(str))
    # Names repeat on every row of their extraction: the distinct pairs only.
    pairs = con.sql(f"SELECT DISTINCT document_name, extraction_name FROM {VALUES} "
                    f"WHERE {scope}").to_arrow_table()
    names = pairs.column(0).to_pylist(), pairs.column(1).to_pylist()
    matched = [(d, e) for d, e, found in zip(*names, truth_documents(match, *names), strict=True)
               if found is not None]
    con.register("_truth_matched", pa.table({
        "document_name": pa.array([d for d, _ in matched], type=pa.string()),
        "extraction_name": pa.array([e for _, e in matched], type=pa.string())}))
    con.register("_truth_targets", pa.table({"target_name": _texts(expected["target_name"])}))
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _truth_keep AS
        WITH matched AS (
            SELECT r.* FROM (SELECT * FROM {VALUES} WHERE {scope}) r
            JOIN _truth_matched m
              ON r.document_name IS NOT DISTINCT FROM m.document_name
             AND r.extraction_name IS NOT DISTINCT FROM m.extraction_name)
        SELECT "order" FROM matched
        WHERE target_name IN (SELECT target_name FROM _truth_targets)
        UNION
        SELECT min("order") FROM matched GROUP BY extraction_id""")


def _keep_ledger(con: duckdb.DuckDBPyConnection, ledger: pd.DataFrame, scope: str) -> None:
    con.register("_ledger_values", pa.table({"id": _texts(ledger["value_id"])}))
    con.register("_ledger_extractions", pa.table({"id": _texts(ledger["extraction_id"])}))
    con.register("_ledger_targets", pa.table({"id": _texts(ledger["target_id"])}))
    # An entry's target id may be the configuration's or the extracted target's.
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _truth_keep AS
        WITH r AS (SELECT * FROM {VALUES} WHERE {scope}),
        first_of_target AS (
            SELECT min("order") AS "order" FROM r
            WHERE target_id IN (SELECT id FROM _ledger_targets) GROUP BY target_id
            UNION ALL
            SELECT min("order") FROM r
            WHERE extracted_target_id IN (SELECT id FROM _ledger_targets)
            GROUP BY extracted_target_id),
        chosen AS (
            SELECT "order", extraction_id FROM r
            WHERE value_id IN (SELECT id FROM _ledger_values)
               OR extraction_id IN (SELECT id FROM _ledger_extractions)
               OR "order" IN (SELECT "order" FROM first_of_target))
        SELECT "order" FROM chosen
        UNION
        SELECT min("order") FROM r WHERE extraction_id IN (SELECT extraction_id FROM chosen)
        GROUP BY extraction_id""")


def _fetched(con: duckdb.DuckDBPyConnection, table: str) -> pd.DataFrame:
    """The kept rows of ``table`` in the order of the in-memory frame, as
    `Dataset.fields` (or ``cells``) gives them."""
    arrow = con.sql(f"""
        SELECT t.* FROM {table} t JOIN _batches b USING (batch)
        WHERE {order_sql(table, "t")} IN (SELECT "order" FROM _truth_keep)
        ORDER BY b.batch_rank, t.seq""").to_arrow_table()
    return table_frame(arrow, table)
