"""Summaries of extracted data, no truth needed: `scorecard`, `failures`, `documents`."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from .. import frames
from .arguments import check_rate
from .ground_truth import latest_entries
from .pushdown import is_dataset
from .work import By, categorical_names, empty_summary, group_keys, work_frame

__all__ = [
    "DOCUMENT_COLUMNS",
    "FAILURE_COLUMNS",
    "SCORECARD_COLUMNS",
    "corrected_ids",
    "documents",
    "failures",
    "scorecard",
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
    ``by="configuration_name"``). ``share_below`` is the share
    of values (with a confidence) under ``threshold``; ``pass_rate`` the share passing
    validation. ``correction_rate`` is the share of values whose ``value_id`` the
    ``corrections`` ledger changed (NaN without a ledger). ``targets`` (`frames.targets`)
    adds extractions in which a target has no value at all to the denominators.

    A `frames.Dataset` (with ``cells=None``) is aggregated by DuckDB, same result.
    """
    if is_dataset(fields):
        from . import summaries_sql  # it imports this module: imported when first needed

        return summaries_sql.scorecard(fields, cells, threshold=threshold,
                                       corrections=corrections, targets=targets, by=by)
    check_rate("threshold", threshold)
    work = work_frame(fields, cells)
    keys = group_keys(by)
    if work.empty:
        return empty_summary(SCORECARD_COLUMNS, by)
    g = work.groupby(keys, observed=True, sort=True)
    conf = g["confidence"]
    quantiles = conf.quantile([0.1, 0.5, 0.9]).unstack()
    index = g.size().index  # every part below aligns to it (some parts may be empty)
    out = pd.DataFrame(index=index, data={
        "kind": g["kind"].first(),
        "target_name": g["target_name"].first(),
        "header": g["header"].first(),
        "n_documents": _documents_per_group(work, keys, targets),
        "n_values": g.size(),
        "fill_rate": _fill_rates(work, keys, targets),
        "confidence_n": conf.count(),
        "confidence_mean": conf.mean(),
        "confidence_min": conf.min(),
        "confidence_p10": quantiles[0.1] if len(quantiles) else np.nan,
        "confidence_p50": quantiles[0.5] if len(quantiles) else np.nan,
        "confidence_p90": quantiles[0.9] if len(quantiles) else np.nan,
        "share_below": (work["confidence"] < threshold).groupby(
            [work[k] for k in keys], observed=True).sum() / conf.count().replace(0, np.nan),
        "pass_rate": g["passed"].mean().astype(float),
        "n_failed": (work["passed"] == False).fillna(False).groupby(  # noqa: E712
            [work[k] for k in keys], observed=True).sum().astype(np.int64),
        "top_condition": _top_conditions(work, keys),
        "correction_rate": _correction_rates(work, keys, corrections),
    })
    out["n_documents"] = out["n_documents"].fillna(0).astype(np.int64)
    out["confidence_n"] = out["confidence_n"].astype(np.int64)
    for name in ("kind", "target_name", "header", "top_condition"):
        out[name] = categorical_names(out[name].to_numpy(dtype=object))
    return out[list(SCORECARD_COLUMNS)]


def _extractions_per_configuration(work: pd.DataFrame, targets: pd.DataFrame | None
                                   ) -> pd.Series:
    pairs = work[["configuration_id", "extraction_id"]]
    if targets is not None and len(targets):
        pairs = pd.concat([pairs, pd.DataFrame({
            "configuration_id": targets["configuration_id"].astype(object).to_numpy(),
            "extraction_id": targets["extraction_id"].astype(object).to_numpy()})])
    pairs = pairs.astype(object).fillna("").drop_duplicates()
    return pairs.groupby("configuration_id").size()


def _documents_per_group(work: pd.DataFrame, keys: list[str], targets: pd.DataFrame | None
                         ) -> pd.Series:
    per_config = _extractions_per_configuration(work, targets)
    configs = work[keys].copy()
    # A column of its own: by="configuration_id" keeps its key (NA too) apart.
    configs["_configuration"] = work["configuration_id"].astype(object).fillna("")
    configs = configs.drop_duplicates()
    configs["n"] = configs["_configuration"].map(per_config).fillna(0)
    return configs.groupby(keys, observed=True)["n"].sum()


def _fill_rates(work: pd.DataFrame, keys: list[str], targets: pd.DataFrame | None
                ) -> pd.Series:
    is_field = work["kind"] == "field"
    cells = work.loc[~is_field].groupby(keys, observed=True)["filled"].mean()
    fields = work.loc[is_field]
    groups = fields.groupby(keys, observed=True).size().index
    found = fields.loc[fields["filled"]].drop_duplicates(keys + ["extraction_id"]).groupby(
        keys, observed=True).size().reindex(groups, fill_value=0)
    documents = _documents_per_group(work, keys, targets).reindex(groups)
    rates = found / documents.replace(0, np.nan)
    if not len(cells):
        return rates
    both = pd.concat([rates, cells])
    # A group of fields and cells (by="configuration_name") has no one fill rate: NaN.
    return both.loc[~both.index.duplicated(keep=False)]


def _top_conditions(work: pd.DataFrame, keys: list[str]) -> pd.Series:
    failed = work.loc[work["condition"].notna(), keys + ["condition"]]
    if failed.empty:
        return pd.Series(dtype=object)
    counts = failed.groupby(keys + ["condition"], observed=True).size().rename("n")
    counts = counts.reset_index().sort_values("n", ascending=False, kind="stable")
    return counts.drop_duplicates(keys).set_index(keys)["condition"]


def corrected_ids(corrections: pd.DataFrame) -> set[Any]:
    """The ``value_id`` of each value the ledger changed (its latest entry's new value
    is not the old one); `scorecard`'s ``correction_rate`` counts them."""
    ledger = latest_entries(corrections)
    changed = ledger["old_value"].astype(object).fillna("") != ledger["new_value"].astype(
        object).fillna("")
    return set(ledger.loc[changed, "value_id"].dropna())


def _correction_rates(work: pd.DataFrame, keys: list[str], corrections: pd.DataFrame | None
                      ) -> pd.Series:
    if corrections is None:
        return pd.Series(np.nan, index=work.groupby(keys, observed=True).size().index)
    corrected = work["value_id"].isin(corrected_ids(corrections))
    return corrected.groupby([work[k] for k in keys], observed=True).mean()


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
    if is_dataset(fields):
        from . import summaries_sql

        return summaries_sql.failures(fields, cells, examples=examples, by=by)
    work = work_frame(fields, cells)
    keys = group_keys(by)
    index_names = keys + ["condition"]
    if work.empty:
        out = empty_summary(FAILURE_COLUMNS, index_names)
        return out
    totals = work.groupby(keys, observed=True).size()
    failed = work.loc[(work["passed"] == False).fillna(False)]  # noqa: E712
    failed = failed.loc[failed["messages"].map(
        lambda m: isinstance(m, tuple | list | np.ndarray) and len(m) > 0)]
    records: list[dict[str, Any]] = []
    for row in failed.itertuples(index=False):
        value = row.value if isinstance(row.value, str) else None
        for message in dict.fromkeys(row.messages):  # a message twice is one condition
            if isinstance(message, str):
                rec = {k: getattr(row, k) for k in keys}
                rec.update(kind=row.kind, condition=frames.condition(message, value),
                           value=value, extraction_id=row.extraction_id,
                           document_name=row.document_name)
                records.append(rec)
    if not records:
        return empty_summary(FAILURE_COLUMNS, index_names)
    exploded = pd.DataFrame(records)
    for k in keys:
        if isinstance(work[k].dtype, pd.CategoricalDtype):
            exploded[k] = pd.Categorical(exploded[k], categories=work[k].cat.categories)
    rows = []
    for group_key, group in exploded.groupby(index_names, observed=True, sort=True):
        key_tuple = group_key if isinstance(group_key, tuple) else (group_key,)
        target_key = key_tuple[:-1] if len(keys) > 1 else key_tuple[0]
        # A missing value (NaN in the frame of records) is no example.
        common = Counter(v for v in group["value"] if isinstance(v, str)).most_common(examples)
        docs = list(dict.fromkeys(d for d in group["document_name"] if isinstance(d, str)))
        rows.append({**dict(zip(index_names, key_tuple, strict=True)),
                     "kind": group["kind"].iloc[0], "n": len(group),
                     "share": len(group) / totals.loc[target_key],
                     "n_documents": group["extraction_id"].nunique(),
                     "examples": tuple(v for v, _ in common),
                     "documents": tuple(docs[:examples])})
    if not rows:  # failures, but none with every key (by="header": fields have none)
        return empty_summary(FAILURE_COLUMNS, index_names)
    out = pd.DataFrame(rows)
    order = {k: i for i, k in enumerate(totals.index)}
    out["_order"] = [order.get(tuple(r[k] for k in keys) if len(keys) > 1 else r[keys[0]], 0)
                     for _, r in out.iterrows()]
    out = out.sort_values(["_order", "n"], ascending=[True, False], kind="stable")
    # drop=False: by=("kind", ...) keeps its kind column too
    out = out.drop(columns="_order").set_index(index_names, drop=False)
    out["n"] = out["n"].astype(np.int64)
    out["n_documents"] = out["n_documents"].astype(np.int64)
    return out[list(FAILURE_COLUMNS)]


DOCUMENT_COLUMNS: tuple[str, ...] = (
    "document_name", "configuration_name", "n_values", "n_filled", "fill_rate",
    "confidence_mean", "confidence_min", "n_failed", "failure_rate", "failed_targets")


def documents(fields: Any, cells: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per extraction (index ``extraction_id``): how full, how confident, what failed.

    ``fill_rate`` and ``failure_rate`` are over the extraction's values and cells;
    ``failed_targets`` names the targets with a failed value, in configuration order.

    A `frames.Dataset` (with ``cells=None``) is aggregated by DuckDB, same result.
    """
    if is_dataset(fields):
        from . import summaries_sql

        return summaries_sql.documents(fields, cells)
    work = work_frame(fields, cells)
    if work.empty:
        return empty_summary(DOCUMENT_COLUMNS, "extraction_id")
    # The extraction as a plain key (never written back: work may be the caller's frame).
    key = pd.Series(work["extraction_id"].astype(object).fillna("?").to_numpy(),
                    index=work.index, name="extraction_id")
    g = work.groupby(key, sort=False)
    failed = (work["passed"] == False).fillna(False)  # noqa: E712
    order = {t: i for i, t in enumerate(work["target"].cat.categories)}
    failed_targets = work.loc[failed, "target"].groupby(key[failed], sort=False).agg(
        lambda s: tuple(sorted(set(s), key=order.__getitem__)))
    out = pd.DataFrame({
        "document_name": g["document_name"].first(),
        "configuration_name": g["configuration_name"].first(),
        "n_values": g.size(),
        "n_filled": g["filled"].sum(),
        "confidence_mean": g["confidence"].mean(),
        "confidence_min": g["confidence"].min(),
        "n_failed": failed.groupby(key, sort=False).sum(),
    })
    for name in ("document_name", "configuration_name"):
        out[name] = categorical_names(out[name].to_numpy(dtype=object))
    out["fill_rate"] = out["n_filled"] / out["n_values"]
    out["failure_rate"] = out["n_failed"] / out["n_values"]
    empty: tuple[str, ...] = ()
    out["failed_targets"] = [failed_targets.get(i, empty) for i in out.index]
    for name in ("n_values", "n_filled", "n_failed"):
        out[name] = out[name].astype(np.int64)
    return out[list(DOCUMENT_COLUMNS)]
