"""Summaries of extracted data, no truth needed: `scorecard`, `failures`, `documents`.

Each asks its source (frames, or a `frames.Dataset`: `sources`) for per-group
statistics (`grouped`) and makes its frame from them here, whichever the source: the
rules of the figures (what a fill rate divides by, how many documents a target is
counted over, which condition tops a group, how groups and rows sort) are these
functions'.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..frames.dtypes import STRING
from .arguments import check_rate
from .ground_truth import latest_entries
from .grouped import (
    ExtractionGroups,
    FailureGroups,
    ValueGroups,
    confidence_figures,
    group_order,
    group_positions,
)
from .sources import source
from .work import By, categorical_names, empty_summary, group_keys

__all__ = [
    "DOCUMENT_COLUMNS",
    "FAILURE_COLUMNS",
    "SCORECARD_COLUMNS",
    "corrected_ids",
    "documents",
    "failures",
    "scorecard",
    "scorecard_frame",
]

SCORECARD_COLUMNS: tuple[str, ...] = (
    "kind", "target_name", "header", "n_documents", "n_values", "fill_rate", "confidence_n",
    "confidence_mean", "confidence_min", "confidence_p10", "confidence_p50", "confidence_p90",
    "share_below", "pass_rate", "n_failed", "top_condition", "correction_rate")


def scorecard(fields: Any, cells: pd.DataFrame | None = None, *, threshold: float = 0.5,
              corrections: pd.DataFrame | None = None, targets: pd.DataFrame | None = None,
              by: By = "target") -> pd.DataFrame:
    """Per target: how often it is found, how confident, how often it passes validation.

    ``n_documents`` counts the extractions whose configuration has the target;
    ``fill_rate`` is, for a field, the share of those with a non-blank value, and for a
    table column the share of its cells that are not blank (NaN for a group of both,
    ``by="configuration_name"``: one is per document, the other per cell).
    ``share_below`` is the share of values (with a confidence) under ``threshold``;
    ``pass_rate`` the share passing validation. ``correction_rate`` is the share of values
    whose ``value_id`` the ``corrections`` ledger changed (NaN without a ledger).
    ``targets`` (`frames.targets`) adds extractions in which a target has no value at all
    to the denominators.

    A `frames.Dataset` (with ``cells=None``) is aggregated by DuckDB, same result.
    """
    check_rate("threshold", threshold)
    with source(fields, cells, "scorecard") as data:
        keys = data.keys(by, "scorecard")
        if data.empty:
            return empty_summary(SCORECARD_COLUMNS, by)
        corrected = corrected_ids(corrections) if corrections is not None else None
        groups = data.values(keys, corrected=corrected, pairs=targets)
    return scorecard_frame(groups, threshold, corrections=corrections is not None)


def scorecard_frame(groups: ValueGroups, threshold: float | None = None, *,
                    corrections: bool = False) -> pd.DataFrame:
    """The scorecard of a source's `grouped.ValueGroups` (`drift` and `compare` read
    each side's)."""
    g = groups.groups
    figures = confidence_figures(groups.confidences, len(g), threshold)
    n_values = g["n_values"].to_numpy(np.int64)
    n_fields = g["n_fields"].to_numpy(np.int64)
    n_documents = _documents_per_group(groups)
    n = figures["n"]
    judged = g["n_judged"].to_numpy(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        # A field's fill rate is over the documents whose configuration has it, a
        # column's over its cells; a group of both has none.
        per_document = g["n_found"].to_numpy(float) / np.where(n_documents > 0, n_documents,
                                                                np.nan)
        per_cell = g["n_cells_filled"].to_numpy(float) / (n_values - n_fields)
        columns: dict[str, np.ndarray] = {
            "kind": g["kind"].to_numpy(object),
            "target_name": g["target_name"].to_numpy(object),
            "header": g["header"].to_numpy(object),
            "n_documents": n_documents,
            "n_values": n_values,
            "fill_rate": np.where(n_fields == n_values, per_document,
                                  np.where(n_fields == 0, per_cell, np.nan)),
            "confidence_n": n,
            "confidence_mean": g["confidence_sum"].to_numpy(float) / np.where(n > 0, n, np.nan),
            "confidence_min": figures["min"],
            "confidence_p10": figures["p10"],
            "confidence_p50": figures["p50"],
            "confidence_p90": figures["p90"],
            "share_below": (figures["below"] / np.where(n > 0, n, np.nan)
                            if "below" in figures else np.full(len(g), np.nan)),
            "pass_rate": g["n_passed"].to_numpy(float) / np.where(judged > 0, judged, np.nan),
            "n_failed": g["n_failed"].to_numpy(np.int64),
            "top_condition": _top_conditions(groups),
            "correction_rate": (g["n_corrected"].to_numpy(float) / n_values if corrections
                                else np.full(len(g), np.nan)),
        }
    order, index = group_order(g, groups.keys, groups.levels)
    out = pd.DataFrame({name: values[order] for name, values in columns.items()}, index=index)
    for name in ("kind", "target_name", "header", "top_condition"):
        out[name] = categorical_names(out[name].to_numpy(dtype=object))
    return out[list(SCORECARD_COLUMNS)]


def _documents_per_group(groups: ValueGroups) -> np.ndarray:
    """The extractions of each configuration a group's values come from, added up."""
    found = groups.configurations
    per = found["configuration"].map(groups.extractions).fillna(0).to_numpy(np.int64)
    out = np.zeros(len(groups.groups), dtype=np.int64)
    np.add.at(out, found["group"].to_numpy(np.int64), per)
    return out


def _top_conditions(groups: ValueGroups) -> np.ndarray:
    """Each group's most frequent failed condition; a tie goes to the first seen."""
    out = np.full(len(groups.groups), None, dtype=object)
    counted = groups.conditions
    if len(counted):
        rank = counted["condition"].map(groups.condition_ranks).to_numpy(dtype=np.int64)
        order = np.lexsort((rank, -counted["n"].to_numpy(np.int64),
                            counted["group"].to_numpy(np.int64)))
        top = counted.iloc[order].drop_duplicates("group")
        out[top["group"].to_numpy(np.int64)] = top["condition"].to_numpy(dtype=object)
    return out


def corrected_ids(corrections: pd.DataFrame) -> set[Any]:
    """The ``value_id`` of each value the ledger changed (its latest entry's new value
    is not the old one); `scorecard`'s ``correction_rate`` counts them."""
    ledger = latest_entries(corrections)
    changed = ledger["old_value"].astype(object).fillna("") != ledger["new_value"].astype(
        object).fillna("")
    return set(ledger.loc[changed, "value_id"].dropna())


FAILURE_COLUMNS: tuple[str, ...] = ("kind", "n", "share", "n_documents", "examples",
                                    "documents")


def failures(fields: Any, cells: pd.DataFrame | None = None, *, examples: int = 3,
             by: By = "target") -> pd.DataFrame:
    """Failed validations per target and condition, most frequent first within a target.

    ``n`` counts values that failed with the condition (a value failing two rule groups
    counts under both), ``share`` is ``n`` over the target's values, ``n_documents`` the
    extractions affected; ``examples`` holds up to ``examples`` distinct failed values,
    most frequent first, and ``documents`` up to as many document names.

    A `frames.Dataset` (with ``cells=None``) is aggregated by DuckDB, same result.
    """
    if examples < 0:
        raise ValueError(f"examples is a number of examples, 0 or more, not {examples!r}")
    keys = group_keys(by)
    index_names = [*keys, "condition"]
    with source(fields, cells, "failures") as data:
        keys = data.keys(by, "failures")
        if data.empty:
            return empty_summary(FAILURE_COLUMNS, index_names)
        groups = data.failures(keys, examples)
    return _failures_frame(groups, index_names)


def _failures_frame(groups: FailureGroups, index_names: Sequence[str]) -> pd.DataFrame:
    keys = groups.keys
    found = groups.rows
    if found.empty:  # failures, but none with every key (by="header": fields have none)
        return empty_summary(FAILURE_COLUMNS, index_names)
    totals = groups.totals
    order, _ = group_order(totals, keys, groups.levels)
    rank = np.empty(len(totals), dtype=np.int64)
    rank[order] = np.arange(len(totals))
    # Each row's group among the totals, by the keys' positions in their levels.
    at = pd.MultiIndex.from_arrays(group_positions(totals, keys, groups.levels)).get_indexer(
        pd.MultiIndex.from_arrays(group_positions(found, keys, groups.levels)))
    n = found["n"].to_numpy(np.int64)
    # Groups in their order, then the most frequent condition first, a tie by condition.
    rows = found.assign(_rank=rank[at], share=n / totals["n"].to_numpy(np.int64)[at]
                        ).sort_values(["_rank", "n", "condition"], ascending=[True, False, True],
                                      kind="stable")
    # Built as rows are (lists of values), so each column's dtype is inferred the same way
    # whichever source the rows come from.
    out = pd.DataFrame({name: rows[name].tolist() for name in dict.fromkeys(
        [*index_names, *FAILURE_COLUMNS])})
    out = out.set_index(list(index_names), drop=False)  # by="kind" keeps its kind column
    out["n"] = out["n"].astype(np.int64)
    out["n_documents"] = out["n_documents"].astype(np.int64)
    for name in ("examples", "documents"):
        out[name] = [tuple(x) for x in out[name]]
    return out[list(FAILURE_COLUMNS)]


DOCUMENT_COLUMNS: tuple[str, ...] = (
    "document_name", "configuration_name", "n_values", "n_filled", "fill_rate",
    "confidence_mean", "confidence_min", "n_failed", "failure_rate", "failed_targets")


def documents(fields: Any, cells: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per extraction (index ``extraction_id``): how full, how confident, what failed.

    ``fill_rate`` and ``failure_rate`` are over the extraction's values and cells;
    ``failed_targets`` names the targets with a failed value, in configuration order.
    Extractions come in the order of their first value.

    A `frames.Dataset` (with ``cells=None``) is aggregated by DuckDB, same result.
    """
    with source(fields, cells, "documents") as data:
        if data.empty:
            return empty_summary(DOCUMENT_COLUMNS, "extraction_id")
        groups = data.extractions()
    return _documents_frame(groups)


def _documents_frame(groups: ExtractionGroups) -> pd.DataFrame:
    rows = groups.rows
    n_values = rows["n_values"].to_numpy(np.int64)
    n_filled = rows["n_filled"].to_numpy(np.int64)
    n_failed = rows["n_failed"].to_numpy(np.int64)
    n = rows["confidence_n"].to_numpy(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = rows["confidence_sum"].to_numpy(float) / np.where(n > 0, n, np.nan)
    out = pd.DataFrame(index=pd.Index(rows["extraction_id"].to_numpy(dtype=object),
                                      dtype=STRING, name="extraction_id"), data={
        "document_name": categorical_names(rows["document_name"].to_numpy(dtype=object)),
        "configuration_name": categorical_names(
            rows["configuration_name"].to_numpy(dtype=object)),
        "n_values": n_values,
        "n_filled": n_filled,
        "fill_rate": n_filled / n_values,
        "confidence_mean": mean,
        "confidence_min": rows["confidence_min"].to_numpy(dtype=float),
        "n_failed": n_failed,
        # Float64, as the failed flags are nullable booleans in the work frame.
        "failure_rate": pd.array(n_failed / n_values, dtype="Float64"),
        "failed_targets": list(rows["failed_targets"]),
    })
    return out[list(DOCUMENT_COLUMNS)]
