"""The rows of a `frames.Dataset` that a grade against the truth needs, as a work frame.

Why: the truth covers a dev set of a few hundred documents, the dataset may hold a
million. `grade` (and `accuracy`, `calibration`, `thresholds`, `compare` through it)
given a dataset has DuckDB find the rows the grade reads, fetches only those, and grades
them with `grading`'s own code: the grade is the one of the dataset's frames in memory
(``audit.grade(ds.fields(), truth, cells=ds.cells())``), to the last bit.

Which rows, with a truth of expected values (`truth_work`):

- the truth's documents are matched by path suffix (`matching.document_matcher`) to the
  distinct (document name, extraction name) pairs of the dataset whose last path part
  is a truth document's, which no other name can match: a few names, not a million;
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
dataset, which `grade` sorts its rows by.

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
from .matching import base_name, document_matcher
from .pushdown import group_ranks
from .work import work_frame

if TYPE_CHECKING:
    import duckdb

__all__ = ["is_ledger", "truth_work"]

#: Every row of the fields and cells, with the keys the selection reads and its place
#: in the in-memory frames (the ``order`` of the ``work`` view: fields before cells,
#: batches in order, then the row's place in its batch).
_ROWS = """
CREATE OR REPLACE TEMP VIEW _truth_rows AS
SELECT (0::BIGINT << 60) + (b.batch_rank << 40) + t.seq AS "order", extraction_id,
       extraction_name, document_name, target_name, target_id, extracted_target_id,
       value_id
FROM fields t JOIN _batches b USING (batch)
UNION ALL
SELECT (1::BIGINT << 60) + (b.batch_rank << 40) + t.seq, extraction_id, extraction_name,
       document_name, target_name, target_id, extracted_target_id, value_id
FROM cells t JOIN _batches b USING (batch)
"""
#: A name's last path part as `matching` splits it ("/" or "\\", no empty or "." parts).
_BASE = r"regexp_extract_all(replace({name}, '\', '/'), '[^/.][^/]*|\.[^/]+')[-1]"


def is_ledger(expected: pd.DataFrame) -> bool:
    """Whether `grade` grades ``expected`` (`ground_truth.truth`) as a ledger."""
    return bool(len(expected)) and bool((expected["source"] == "ledger").all())


def truth_work(con: duckdb.DuckDBPyConnection, expected: pd.DataFrame,
               scope: str = "TRUE") -> pd.DataFrame:
    """The work frame of the rows of ``con``'s dataset (those ``scope``, SQL, keeps)
    that grading ``expected`` reads."""
    con.execute(_ROWS)
    if is_ledger(expected):
        _keep_ledger(con, expected, scope)
    else:
        _keep_truth(con, expected, scope)
    work = work_frame([_fetched(con, "fields"), _fetched(con, "cells")])
    # The order of the targets among all the rows (in scope or not), as the categories
    # of a work frame filtered in memory keep it.
    ranks = group_ranks(con, ["target"])["target"]
    order = sorted(ranks, key=ranks.__getitem__)
    if len(work) and set(work["target"].cat.categories) <= set(order):
        work["target"] = work["target"].cat.set_categories(pd.Index(order, dtype=STRING))
    return work


def _texts(values: Any) -> pa.Array:
    found = sorted({v for v in pd.Series(values, dtype=object).dropna() if isinstance(v, str)})
    return pa.array(found, type=pa.string())


def _keep_truth(con: duckdb.DuckDBPyConnection, expected: pd.DataFrame, scope: str) -> None:
    documents = expected["document"].dropna().astype(str)
    match = document_matcher(documents)
    con.register("_truth_bases", pa.table({"base": _texts(
        [base_name(d) for d in documents])}))
    # Names repeat on every row of their extraction: the distinct pairs first.
    pairs = con.execute(f"""
        SELECT * FROM (SELECT DISTINCT document_name, extraction_name FROM _truth_rows
                       WHERE {scope})
        WHERE {_BASE.format(name="document_name")} IN (SELECT base FROM _truth_bases)
           OR {_BASE.format(name="extraction_name")} IN (SELECT base FROM _truth_bases)
        """).fetchall()
    # As `grading` does: the document name's match, else the extraction name's.
    matched = [(d, e) for d, e in pairs if (match(d) or match(e)) is not None]
    con.register("_truth_matched", pa.table({
        "document_name": pa.array([d for d, _ in matched], type=pa.string()),
        "extraction_name": pa.array([e for _, e in matched], type=pa.string())}))
    con.register("_truth_targets", pa.table({"target_name": _texts(expected["target_name"])}))
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _truth_keep AS
        WITH matched AS (
            SELECT r.* FROM (SELECT * FROM _truth_rows WHERE {scope}) r
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
        WITH r AS (SELECT * FROM _truth_rows WHERE {scope}),
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
    part = 0 if table == "fields" else 1
    arrow = con.sql(f"""
        SELECT t.* FROM {table} t JOIN _batches b USING (batch)
        WHERE ({part}::BIGINT << 60) + (b.batch_rank << 40) + t.seq
              IN (SELECT "order" FROM _truth_keep)
        ORDER BY b.batch_rank, t.seq""").to_arrow_table()
    return table_frame(arrow, table)
