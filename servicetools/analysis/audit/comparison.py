"""`compare`: two batches or configurations on the documents they share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from . import comparison_sql
from .grading import accuracy
from .matching import document_matcher
from .normalisation import DEFAULT_NORMALIZE, Normalize
from .pushdown import frames_of, is_dataset
from .summaries import scorecard
from .work import By, empty_summary, work_frame

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

    ``a`` and ``b`` may be `frames.Dataset` sides (``ds.select("monday")``): when both
    are, DuckDB aggregates them over the shared documents (`comparison_sql`) and only
    the rows a grade against ``truth`` reads are fetched; a lone dataset is read into
    frames.
    """
    if is_dataset(a) and is_dataset(b):
        card_a, card_b, accuracies = comparison_sql.compare_parts(
            a, b, truth, normalize=normalize, by=by)
    else:
        card_a, card_b, accuracies = _compare_parts(frames_of(a), frames_of(b), truth,
                                                    normalize, by)
    index = card_a.index.append(card_b.index.difference(card_a.index, sort=False))
    if len(index) == 0:
        return empty_summary(COMPARE_COLUMNS, by)
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
    if truth is not None:
        acc_a, acc_b = accuracies()
        out["accuracy_a"] = acc_a["accuracy"].reindex(index)
        out["accuracy_b"] = acc_b["accuracy"].reindex(index)
    else:
        out["accuracy_a"] = np.nan
        out["accuracy_b"] = np.nan
    out["accuracy_delta"] = out["accuracy_b"] - out["accuracy_a"]
    return out[list(COMPARE_COLUMNS)]


def _compare_parts(a: Any, b: Any, truth: Any, normalize: Normalize, by: By
                   ) -> tuple[pd.DataFrame, pd.DataFrame,
                              Callable[[], tuple[pd.DataFrame, pd.DataFrame]]]:
    """Each side's scorecard over the shared documents, and the function that gives
    each side's accuracy against ``truth``."""
    work_a, work_b = work_frame(a), work_frame(b)
    match = document_matcher(work_b["document_name"].dropna().astype(str))
    in_b = work_a["document_name"].map(match)
    shared_b = set(in_b.dropna())
    work_a = work_a.loc[in_b.notna()]
    work_b = work_b.loc[work_b["document_name"].isin(shared_b)]

    def accuracies() -> tuple[pd.DataFrame, pd.DataFrame]:
        return (accuracy(work_a, truth, normalize=normalize, by=by),
                accuracy(work_b, truth, normalize=normalize, by=by))

    return scorecard(work_a, by=by), scorecard(work_b, by=by), accuracies
