"""`compare` of two `frames.Dataset` sides (batches or configurations), by DuckDB.

Why: `compare` sets two batches side by side on the documents they share. In memory,
that is both batches as frames, matched and filtered; here the only things that come
into Python are the distinct document names of each side (a name per document, matched
by path suffix with `matching.document_matcher` as in memory), each side's figures per
target over the shared documents (`figures_sql`: one row per target and one per
target and distinct confidence), and, with a truth, the rows its documents' grade reads
(`grading_sql`). The shared names go back into DuckDB as a small table each side's
queries join against.

`comparison.compare` dispatches here when both sides are datasets and builds the table
from what `compare_parts` returns, as it does from two scorecards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from ..frames.dataset import Dataset
from . import ground_truth
from .figures_sql import check_keys, side
from .grading import accuracy, grade_work
from .grading_sql import truth_work
from .matching import document_matcher
from .normalisation import Normalize
from .work import By

if TYPE_CHECKING:
    import duckdb

__all__ = ["compare_parts"]

#: The rows of a side's shared documents (``_shared``, registered by `_open`).
_SCOPE = "document_name IN (SELECT document_name FROM _shared)"


def compare_parts(a: Dataset, b: Dataset, truth: Any, *, normalize: Normalize, by: By
                  ) -> tuple[pd.DataFrame, pd.DataFrame,
                             Callable[[], tuple[pd.DataFrame, pd.DataFrame]]]:
    """Each side's scorecard columns `compare` reads (over the shared documents), and
    the function that grades each side's shared documents against ``truth``."""
    check_keys(by, "compare")
    names_a, names_b = _document_names(a), _document_names(b)
    match = document_matcher(names_b)
    # As in memory: a's documents that match one of b's, and b's documents so matched.
    matched = {name: match(name) for name in names_a}
    shared_a = sorted(name for name, found in matched.items() if found is not None)
    shared_b = sorted({found for found in matched.values() if found is not None})
    cards = []
    for data, shared in ((a, shared_a), (b, shared_b)):
        con = _open(data, shared)
        try:
            cards.append(side(con, by, _SCOPE).card)
        finally:
            con.close()

    def accuracies() -> tuple[pd.DataFrame, pd.DataFrame]:
        expected = ground_truth.truth(truth)
        out = []
        for data, shared in ((a, shared_a), (b, shared_b)):
            con = _open(data, shared)
            try:
                work = truth_work(con, expected, _SCOPE)
            finally:
                con.close()
            out.append(accuracy(grade_work(work, expected, normalize), by=by))
        return out[0], out[1]

    return cards[0], cards[1], accuracies


def _document_names(data: Dataset) -> list[str]:
    con = data.connect()
    try:
        return [name for (name,) in con.execute(
            "SELECT DISTINCT document_name FROM work WHERE document_name IS NOT NULL"
            ).fetchall()]
    finally:
        con.close()


def _open(data: Dataset, shared: list[str]) -> duckdb.DuckDBPyConnection:
    """A connection to ``data`` with its shared documents as the table ``_shared``."""
    con = data.connect()
    con.register("_shared", pa.table({"document_name": pa.array(shared, type=pa.string())}))
    return con
