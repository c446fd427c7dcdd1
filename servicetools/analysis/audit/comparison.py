"""`compare`: two batches or configurations on the documents they share."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from . import ground_truth
from .grading import accuracy, grade_work
from .matching import document_matcher
from .normalisation import DEFAULT_NORMALIZE, Normalize
from .sources import source
from .summaries import SCORECARD_COLUMNS, scorecard_frame
from .work import By, empty_summary

__all__ = ["COMPARE_COLUMNS", "compare"]

COMPARE_COLUMNS: tuple[str, ...] = (
    "n_a", "n_b", "confidence_a", "confidence_b", "confidence_delta", "failure_rate_a",
    "failure_rate_b", "failure_rate_delta", "fill_rate_a", "fill_rate_b", "fill_rate_delta",
    "accuracy_a", "accuracy_b", "accuracy_delta")


def compare(a: Any, b: Any, truth: Any = None, *,
            normalize: Normalize = DEFAULT_NORMALIZE, by: By = "target") -> pd.DataFrame:
    """Two batches or configurations on the documents they share, per target.

    Documents are matched by name (path suffix, as for the truth); each side keeps
    only documents found in the other. ``*_delta`` is b minus a. Accuracy needs
    ``truth`` (NaN without). Targets are matched by name, so two versions of a
    configuration compare even when their target ids differ.

    ``a`` and ``b`` may be `frames.Dataset` sides (``ds.select("monday")``): DuckDB
    aggregates them over the shared documents, and only the rows a grade against
    ``truth`` reads are fetched.
    """
    with source(a, None, "compare") as side_a, source(b, None, "compare") as side_b:
        keys = side_a.keys(by, "compare", names_only=True)
        side_b.keys(by, "compare", names_only=True)
        # a's documents that match one of b's, and b's documents so matched.
        match = document_matcher(side_b.document_names())
        matched = {name: match(name) for name in side_a.document_names()}
        shared_a = side_a.shared([n for n, found in matched.items() if found is not None])
        shared_b = side_b.shared({found for found in matched.values() if found is not None})
        card_a, card_b = (empty_summary(SCORECARD_COLUMNS, by) if side.empty
                          else scorecard_frame(side.values(keys, conditions=False))
                          for side in (shared_a, shared_b))
        index = card_a.index.append(card_b.index.difference(card_a.index, sort=False))
        if len(index) == 0:
            return empty_summary(COMPARE_COLUMNS, by)
        accuracies = None
        if truth is not None:
            expected = ground_truth.truth(truth)
            accuracies = [accuracy(grade_work(side.graded_work(expected), expected, normalize,
                                              side.holds_cells), by=by)
                          for side in (shared_a, shared_b)]
    ca, cb = card_a.reindex(index), card_b.reindex(index)
    out = pd.DataFrame({
        "n_a": ca["n_values"].fillna(0).astype(np.int64),
        "n_b": cb["n_values"].fillna(0).astype(np.int64),
        "confidence_a": ca["confidence_mean"], "confidence_b": cb["confidence_mean"],
        "failure_rate_a": 1 - ca["pass_rate"], "failure_rate_b": 1 - cb["pass_rate"],
        "fill_rate_a": ca["fill_rate"], "fill_rate_b": cb["fill_rate"],
    }, index=index)
    out["confidence_delta"] = out["confidence_b"] - out["confidence_a"]
    out["failure_rate_delta"] = out["failure_rate_b"] - out["failure_rate_a"]
    out["fill_rate_delta"] = out["fill_rate_b"] - out["fill_rate_a"]
    if accuracies is not None:
        out["accuracy_a"] = accuracies[0]["accuracy"].reindex(index)
        out["accuracy_b"] = accuracies[1]["accuracy"].reindex(index)
    else:
        out["accuracy_a"] = np.nan
        out["accuracy_b"] = np.nan
    out["accuracy_delta"] = out["accuracy_b"] - out["accuracy_a"]
    return out[list(COMPARE_COLUMNS)]
