"""Extracted values against the truth: `grade` per value, `accuracy` per target.

`as_graded`, `summary_groups` and `summary_index` are the steps every measure against
the truth shares (accuracy here, `calibration`, `thresholds`): grade unless given a
`grade` frame, group per target then `ALL`, index the summary.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .. import frames
from ..frames.dtypes import observed
from . import ground_truth
from .matching import document_matcher, truth_documents
from .normalisation import DEFAULT_NORMALIZE, Normalize, normalize_series
from .sources import source
from .work import By, categorical_names, group_keys, known_keys, target_labels

__all__ = [
    "ACCURACY_COLUMNS",
    "ALL",
    "GRADE_COLUMNS",
    "accuracy",
    "as_graded",
    "grade",
    "grade_work",
    "summary_groups",
    "summary_index",
]

#: The label of the row that summarises all targets together.
ALL = "All"
GRADE_COLUMNS: tuple[str, ...] = (
    "extraction_id", "document_name", "document", "kind", "target", "target_name", "header",
    "value_index", "record", "column", "value_id", "value", "expected", "confidence",
    "correct", "present")


def grade(data: Any, truth: Any, *, cells: pd.DataFrame | None = None,
          normalize: Normalize = DEFAULT_NORMALIZE) -> pd.DataFrame:
    """One row per compared value, columns `GRADE_COLUMNS`.

    With truth files or a table of expected values, each extraction whose
    ``document_name`` (or ``extraction_name``) matches a truth document by path suffix is
    compared target by target: fields on ``value_index``, cells on ``record`` (row
    counted across the target's tables in order) and ``column``. Only targets the truth
    lists for the document are graded; among those, a value the truth lacks is
    expected to be blank; an expected value never extracted has ``present`` False
    and no confidence. Only targets the data holds are graded too: a field target
    the data has no value of for any document of that configuration (a frame filtered
    to some targets, a truth sheet with columns of another configuration) is left out,
    and so are the truth's tables when the data is field frames alone (no ``cells``).
    With a corrections ledger, each ledger entry is a row: its old value and confidence
    against its new value. ``correct`` compares after `normalize`
    with ``normalize`` (default: whitespace only).

    ``data`` may be a `frames.Dataset`: DuckDB finds the rows of the documents the
    truth covers (or the values a ledger names) and only those are read
    (`graded_rows`); the grade is the one of the dataset's frames.
    """
    expected = ground_truth.truth(truth)
    with source(data, cells, "grade") as found:
        work = found.graded_work(expected)
        with_cells = found.holds_cells
    return grade_work(work, expected, normalize, with_cells)


def grade_work(work: pd.DataFrame, expected: pd.DataFrame,
               normalize: Normalize = DEFAULT_NORMALIZE, with_cells: bool = True
               ) -> pd.DataFrame:
    """`grade` of a work frame against ``expected`` (`ground_truth.truth`);
    ``with_cells`` False: the work holds no table's cells, and none is graded."""
    if ground_truth.is_ledger(expected):
        graded = _grade_ledger(work, expected)
    else:
        graded = _grade_truth(work, expected, with_cells)
    value_n = normalize_series(graded["value"], normalize)
    expected_n = normalize_series(graded["expected"], normalize)
    graded["correct"] = pd.array((value_n == expected_n).to_numpy(), dtype="boolean")
    graded.loc[graded["expected"].isna(), "correct"] = pd.NA
    return _grade_dtypes(graded, work)


def _grade_dtypes(graded: pd.DataFrame, work: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({name: graded[name] if name in graded.columns else None
                        for name in GRADE_COLUMNS})
    # Rows in the data's order (merges sort their keys): extraction, kind, target, place.
    known = list(work["target"].cat.categories) if len(work) else []
    order = list(dict.fromkeys(known + out["target"].astype(object).dropna().tolist()))
    # Text categories even when there are none (an empty grade has the dtypes of a full one).
    out["target"] = pd.Categorical(out["target"].astype(object),
                                   categories=pd.Index(order, dtype=frames.STRING))
    extraction_order = {e: i for i, e in enumerate(pd.unique(work["extraction_id"]))}
    out = out.assign(
        _e=out["extraction_id"].map(extraction_order).astype(float),
        _k=(out["kind"] != "field").astype(int), _t=out["target"].cat.codes,
        _v=pd.to_numeric(out["value_index"], errors="coerce"),
        _r=pd.to_numeric(out["record"], errors="coerce"),
        _c=pd.to_numeric(out["column"], errors="coerce"),
    ).sort_values(["_e", "_k", "_t", "_v", "_r", "_c"], kind="stable", na_position="last")
    out = out.drop(columns=["_e", "_k", "_t", "_v", "_r", "_c"])
    for name in ("document_name", "document", "kind", "target_name", "header"):
        out[name] = categorical_names(out[name].to_numpy(dtype=object))
    for name in ("value_index", "record", "column"):
        out[name] = pd.to_numeric(out[name], errors="coerce").astype("Int64")
    for name in ("extraction_id", "value_id", "value", "expected"):
        out[name] = out[name].astype(object).astype(frames.STRING)
    out["confidence"] = pd.to_numeric(out["confidence"], errors="coerce").astype(float)
    out["correct"] = out["correct"].astype("boolean")
    out["present"] = out["present"].astype(bool)
    # Only the documents the truth covers are graded: their targets, not all the data's.
    return observed(out.reset_index(drop=True))


def _records(work: pd.DataFrame) -> pd.Series:
    """Row numbers counted across each extraction's tables of a target, in table order."""
    cells = work.loc[work["kind"] == "cell", ["extraction_id", "target_name", "table_id", "row"]]
    if cells.empty:
        return pd.Series(dtype="Int64")
    keys = cells[["extraction_id", "target_name", "table_id"]].astype(object).fillna("")
    rows = pd.to_numeric(cells["row"], errors="coerce")
    sizes = (rows.groupby([keys[c] for c in keys.columns], sort=False).max() + 1).rename("n")
    sizes = sizes.reset_index()
    sizes["offset"] = sizes.groupby(["extraction_id", "target_name"], sort=False)["n"].transform(
        lambda s: s.cumsum() - s)
    offsets = keys.merge(sizes, on=["extraction_id", "target_name", "table_id"], how="left")
    return pd.Series(offsets["offset"].to_numpy() + rows.to_numpy(), index=cells.index)


def _grade_truth(work: pd.DataFrame, expected: pd.DataFrame, with_cells: bool = True
                 ) -> pd.DataFrame:
    match = document_matcher(expected["document"].dropna().astype(str))
    work = work.copy()
    # Matched once per distinct pair of names (a million values name a few documents).
    documents = work["document_name"].astype("category").array
    extractions = work["extraction_name"].astype("category").array
    width = len(extractions.categories) + 1
    codes, pairs = pd.factorize((np.asarray(documents.codes, dtype=np.int64) + 1) * width
                                + np.asarray(extractions.codes, dtype=np.int64) + 1)
    names = [None, *documents.categories], [None, *extractions.categories]
    found = np.array(truth_documents(match, [names[0][k // width] for k in pairs],
                                     [names[1][k % width] for k in pairs]), dtype=object)
    work["document"] = found[codes] if len(codes) else np.array([], dtype=object)
    work = work.loc[work["document"].notna()]
    extractions = work[["extraction_id", "document"]].astype(object).drop_duplicates()
    parts = []
    kinds = (("field", ["value_index"]), ("cell", ["record", "column"]))
    for kind, on in kinds if with_cells else kinds[:1]:
        mine = work.loc[work["kind"] == kind].copy()
        if kind == "cell":
            mine["record"] = _records(work)
        theirs = expected.loc[expected["kind"] == kind, ["document", "target_name", *on,
                                                         "value"]].astype(object)
        theirs = theirs.rename(columns={"value": "expected"}).merge(extractions, on="document")
        if kind == "field":
            theirs = _held(theirs, mine, work)
        keys = ["extraction_id", "target_name", *on]
        for frame in (mine, theirs):
            for k in keys:
                frame[k] = frame[k].astype(object)
            for k in on:
                frame[k] = pd.to_numeric(frame[k], errors="coerce").astype(float)
        # Only targets the truth speaks of for the document are graded: a truth of
        # fields alone says nothing about the tables.
        covered = theirs[["extraction_id", "target_name"]].drop_duplicates()
        mine = mine.merge(covered, on=["extraction_id", "target_name"], how="inner")
        mine["present"] = True
        both = mine.merge(theirs.drop(columns="document"), on=keys, how="outer")
        both["present"] = both["present"].astype(object).fillna(False).astype(bool)
        # A value the truth does not list should not exist: it is expected blank.
        both["expected"] = both["expected"].where(both["expected"].notna(), "")
        doc = both["extraction_id"].map(dict(zip(extractions["extraction_id"],
                                                 extractions["document"], strict=True)))
        both["document"] = doc
        names_of = dict(zip(work["extraction_id"], work["document_name"], strict=False))
        both["document_name"] = both["extraction_id"].map(names_of)
        both["kind"] = kind
        if kind == "field":
            both["target"] = both["target_name"]
        else:
            both = _cell_targets(both, work)
        parts.append(both)
    graded = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return graded


def _held(theirs: pd.DataFrame, mine: pd.DataFrame, work: pd.DataFrame) -> pd.DataFrame:
    """The truth's field rows of targets the data holds: a target is held for a
    document when the data has a value of it for some document of the same
    configuration (the service gives every field target a value, found or empty)."""
    pairs = work[["extraction_id", "configuration_id"]].astype(object).drop_duplicates(
        "extraction_id")  # one per document, not a dict entry per value
    configuration = dict(zip(pairs["extraction_id"], pairs["configuration_id"].fillna(""),
                             strict=True))
    held = pd.DataFrame({"_c": mine["extraction_id"].astype(object).map(configuration),
                         "target_name": mine["target_name"].astype(object)}).drop_duplicates()
    return theirs.assign(_c=theirs["extraction_id"].map(configuration)).merge(
        held, on=["_c", "target_name"]).drop(columns="_c")


def _cell_targets(both: pd.DataFrame, work: pd.DataFrame) -> pd.DataFrame:
    """Header and label for cells only the truth has (their column's header elsewhere)."""
    cells = work.loc[work["kind"] == "cell"]
    heads = cells.dropna(subset=["header"]).drop_duplicates(["target_name", "column"])
    head_of = {(t, c): h for t, c, h in zip(heads["target_name"], heads["column"],
                                            heads["header"], strict=True)}
    missing = both["header"].isna()
    both.loc[missing, "header"] = [head_of.get((t, c)) for t, c in zip(
        both.loc[missing, "target_name"], both.loc[missing, "column"], strict=True)]
    labels = target_labels(both, "cell")
    both["target"] = labels
    return both


def _first_rows(work: pd.DataFrame, keys: list[str]) -> dict[Any, dict[str, Any]]:
    """The first row of ``work`` for each value of ``keys`` (a tuple key when several)."""
    part = work.dropna(subset=keys).drop_duplicates(keys)
    out: dict[Any, dict[str, Any]] = {}
    for row in part.to_dict("records"):
        out[tuple(row[k] for k in keys) if len(keys) > 1 else row[keys[0]]] = row
    return out


def _grade_ledger(work: pd.DataFrame, expected: pd.DataFrame) -> pd.DataFrame:
    """Each ledger entry against the value it corrected (found by ``value_id``)."""
    ledger = expected.astype({c: object for c in expected.columns
                              if isinstance(expected[c].dtype, pd.CategoricalDtype)})
    by_value = _first_rows(work, ["value_id"])
    # The ledger's target_id may be the configuration's or the extracted target's id.
    by_place = {**_first_rows(work, ["extraction_id", "extracted_target_id"]),
                **_first_rows(work, ["extraction_id", "target_id"])}
    by_target = {**_first_rows(work, ["extracted_target_id"]),
                 **_first_rows(work, ["target_id"])}
    rows = []
    for entry in ledger.to_dict("records"):
        value = by_value.get(entry["value_id"])
        place = value or by_place.get((entry["extraction_id"], entry["target_id"]))
        target = place or by_target.get(entry["target_id"])
        old, confidence = entry["old_value"], entry["old_confidence"]
        if value is not None and not isinstance(old, str):
            old = value["value"]
        if value is not None and (confidence is None or pd.isna(confidence)):
            confidence = value["confidence"]
        named = entry["target_name"] if isinstance(entry["target_name"], str) else (
            entry["target_id"])
        extraction_id = entry["extraction_id"]
        if not isinstance(extraction_id, str) and place is not None:
            extraction_id = place["extraction_id"]
        rows.append({
            "extraction_id": extraction_id,
            "document_name": place["document_name"] if place else None,
            "kind": target["kind"] if target else None,
            "target": target["target"] if target else named,
            "target_name": target["target_name"] if target else named,
            "header": value["header"] if value else None,
            "value_index": value["value_index"] if value else None,
            "column": value["column"] if value else None,
            "value_id": entry["value_id"], "value": old, "expected": entry["value"],
            "confidence": confidence, "present": isinstance(old, str),
        })
    return pd.DataFrame(rows, columns=[c for c in GRADE_COLUMNS if c != "correct"])


def as_graded(data: Any, truth: Any, cells: pd.DataFrame | None, normalize: Normalize
            ) -> pd.DataFrame:
    """``data`` itself when it is already a `grade` frame, else graded."""
    if isinstance(data, pd.DataFrame) and "correct" in data.columns and truth is None:
        return data
    if truth is None:
        raise TypeError("give the ground truth (or a frame from grade)")
    return grade(data, truth, cells=cells, normalize=normalize)


def summary_groups(graded: pd.DataFrame, by: By) -> list[tuple[Any, pd.DataFrame]]:
    """Each target's rows, then every row together as `ALL`."""
    keys = known_keys(graded, by, "this summary")
    out = [(k if len(keys) > 1 else k[0], g)
           for k, g in graded.groupby(keys, observed=True, sort=True)]
    out.append((ALL if len(keys) == 1 else (ALL,) * len(keys), graded))
    return out


def summary_index(labels: list[Any], by: By) -> pd.Index:
    keys = group_keys(by)
    if len(keys) == 1:
        return pd.Index(labels, name=keys[0], dtype=frames.STRING)
    return pd.MultiIndex.from_tuples(labels, names=keys)


ACCURACY_COLUMNS: tuple[str, ...] = ("n", "n_correct", "accuracy", "n_missed", "n_spurious",
                                     "n_wrong")


def accuracy(data: Any, truth: Any = None, *, cells: pd.DataFrame | None = None,
             normalize: Normalize = DEFAULT_NORMALIZE, by: By = "target") -> pd.DataFrame:
    """Per target and overall (`ALL`): share of values equal to the truth after `normalize`.

    ``n_missed``: expected a value, got none or a blank; ``n_spurious``: expected blank,
    got a value; ``n_wrong``: both present and different. ``data`` may be a `grade`
    frame (then leave ``truth`` out), or a `frames.Dataset` (graded as `grade` grades
    one).
    """
    graded = as_graded(data, truth, cells, normalize)
    graded = graded.loc[graded["correct"].notna()]
    labels, rows = [], []
    blank_value = graded["value"].astype(object).fillna("").map(lambda s: not str(s).strip())
    blank_expected = graded["expected"].astype(object).fillna("").map(
        lambda s: not str(s).strip())
    for label, group in summary_groups(graded, by):
        idx = group.index
        correct = group["correct"].astype(bool)
        labels.append(label)
        rows.append({
            "n": len(group), "n_correct": int(correct.sum()),
            "accuracy": float(correct.mean()) if len(group) else math.nan,
            "n_missed": int((~correct & blank_value[idx] & ~blank_expected[idx]).sum()),
            "n_spurious": int((~correct & ~blank_value[idx] & blank_expected[idx]).sum()),
            "n_wrong": int((~correct & ~blank_value[idx] & ~blank_expected[idx]).sum()),
        })
    return pd.DataFrame(rows, index=summary_index(labels, by), columns=list(ACCURACY_COLUMNS))
