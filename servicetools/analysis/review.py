"""`plan`: which values to review, so a review budget catches the most errors, and a
random audit of the rest that keeps auto-accept honest.

Ordering by confidence alone ignores what a failed validation rule or an empty value
says. The plan gives each value its probability of being wrong: from an `ErrorModel`
fitted on a reference batch with truth or a ledger (confidence, validation and
emptiness together, see `servicetools.audit.estimate`), else from the confidence with
a failed rule or an empty value counted as at least an even chance of an error. A
target's own offset in that model counts here only as far as many labels support it
(`ErrorModel.shrunk`): an offset that is off reorders all of a target's values. Times
an optional weight per target (a wrong total costs more than a wrong phone number),
that is the error a review of the value is expected to catch; the plan reviews the
values with the most, up to the budget.

The values it does not review are accepted unread. A share of them (``audit``, 2% by
default) is drawn at random and marked: reviewed like the others, their ledger rows
say ``audit`` (see `servicetools.ledger`), and they alone estimate without bias how
many errors auto-accept lets through (Amazon A2I's random audit of auto-accepted
items). `ReviewQueue(..., order="plan", plan=...)` steps through the planned values'
documents in plan order and marks the audit's rows in its ledger.

>>> import pandas as pd
>>> fields = pd.DataFrame({"target_name": ["Total", "Total", "Date", "Date"],
...                        "extraction_id": ["e1", "e2", "e1", "e2"],
...                        "value_id": ["v1", "v2", "v3", "v4"],
...                        "value": ["1.00", "2.00", "", "2024-01-02"],
...                        "confidence": [0.95, 0.6, 0.9, 0.8],
...                        "validation_passed": [True, True, False, True]})
>>> plan(fields, budget=2, audit=0)[["value_id", "p_wrong", "review"]]
  value_id  p_wrong  review
0       v3     0.50    True
1       v2     0.40    True
2       v4     0.20   False
3       v1     0.05   False
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .audit.arguments import check_rate
from .audit.estimation import ErrorModel, labelled
from .audit.grading import ALL
from .audit.work import work_frame

__all__ = ["PLAN_COLUMNS", "REACH_COLUMNS", "p_wrong", "plan", "summary", "to_reach"]

#: The columns of `plan`'s frame, one row per value, in plan order.
PLAN_COLUMNS: tuple[str, ...] = (
    "extraction_id", "target", "value_id", "value", "confidence", "passed", "filled",
    "p_wrong", "weight", "expected_errors", "review", "audit", "rank")
#: The columns of `to_reach`'s frame, one row per target and one for all (`ALL`).
REACH_COLUMNS: tuple[str, ...] = (
    "n_values", "expected_error", "n_review", "review_share", "expected_error_after")
# Without a reference: a failed rule or an empty value is at least an even chance of
# an error, whatever the confidence says.
_FLAGGED_FLOOR = 0.5
# The plan trusts a target's offset from the reference (its confidence off from the
# pool's) only as far as many labels show it: ranking values across targets suffers more
# from an offset that is off than one target's estimate does (ErrorModel's own ridge is
# 1.0). Chosen on the tuning halves of the real sets, with the reference another set's
# and the same set's other documents: 30 caught the most errors in both (bench/
# estimate.py, part 3). A target with fewer labels than `estimate` needs to call its
# estimate reliable (30) ranks by the pool's level: with the other sets as reference,
# such offsets (from 5-23 labels of another set's receipts or invoices) ranked fewer
# errors first than confidence alone on 4 of 12 set-and-budget cells, pooled on 0 (by
# 0.01 expected errors over tie orders on 1), at the cost of 1.1 of 1.6 errors gained
# on the tuning halves with the same set's other documents in the reference.
_PLAN_RIDGE = 30.0


def _error_model(reference: Any) -> ErrorModel | None:
    if reference is None or isinstance(reference, ErrorModel):
        return reference
    if isinstance(reference, tuple) and len(reference) == 2:
        reference = labelled(*reference)
    return ErrorModel.fit(reference)


def p_wrong(work: pd.DataFrame, reference: Any = None) -> np.ndarray:
    """Each work row's probability of being wrong: from the reference's `ErrorModel`
    when there is one, else from confidence with flagged values floored at 0.5."""
    model = _error_model(reference)
    if model is not None:
        return 1 - model.shrunk(_PLAN_RIDGE).pooled_below().p_right(work)
    confidence = pd.to_numeric(work["confidence"], errors="coerce").to_numpy(dtype=float)
    wrong = np.where(np.isfinite(confidence), 1 - confidence, _FLAGGED_FLOOR)
    failed = (work["passed"].astype("boolean").fillna(True) == False).to_numpy(  # noqa: E712
        dtype=bool)
    empty = ~work["filled"].astype(bool).to_numpy()
    return np.where(failed | empty, np.maximum(wrong, _FLAGGED_FLOOR), wrong)


def plan(data: Any, cells: pd.DataFrame | None = None, *, budget: int | float,
         audit: float = 0.02, reference: Any = None,
         weights: Mapping[str, float] | None = None, seed: int = 0) -> pd.DataFrame:
    """The batch's values in review order, columns `PLAN_COLUMNS`.

    ``budget``: how many values to review (an int), or a share of all values (a float
    in (0, 1]). ``audit``: the share of the values left unreviewed to draw at random as
    the audit sample (0 for none; at least one value when the share is positive).
    ``reference``: labelled values of another batch (`servicetools.audit.labelled`), a
    ``(data, truth)`` pair, or a fitted `ErrorModel`; without one, see `p_wrong`.
    ``weights``: the cost of an error per target (default 1). Rows: the planned reviews
    by expected errors caught, highest first (``review``), then the audit draws
    (``audit``), then the values accepted unread; ``rank`` counts from 1 over the first
    two (NA for the rest).
    """
    work = work_frame(data, cells)
    n = len(work)
    if (isinstance(budget, bool) or not isinstance(budget, int | float) or budget < 0
            or (isinstance(budget, float) and budget > 1 and not budget.is_integer())):
        # 1.5 was read as one value: neither a count nor a share, so refused.
        raise ValueError(f"budget must be a number of values or a share in (0, 1], "
                         f"not {budget!r}")
    count = int(round(budget * n)) if isinstance(budget, float) and budget <= 1 else int(budget)
    if not 0 <= audit < 1:
        raise ValueError(f"audit must be a share in [0, 1), not {audit!r}")
    out = pd.DataFrame({
        "extraction_id": work["extraction_id"].astype(object).to_numpy(),
        "target": work["target"].astype(object).to_numpy(),
        "value_id": work["value_id"].to_numpy(),
        "value": work["value"].astype(object).to_numpy(),
        "confidence": pd.to_numeric(work["confidence"], errors="coerce").to_numpy(float),
        "passed": work["passed"].array,
        "filled": work["filled"].to_numpy(dtype=bool),
    })
    out["p_wrong"] = np.round(p_wrong(work, reference), 6) if n else np.array([], float)
    known = dict(weights or {})
    unknown = sorted(set(known) - set(out["target"].astype(str)))
    if unknown:
        raise ValueError(f"weights name targets the batch lacks: {', '.join(unknown)}")
    odd = {t: w for t, w in known.items() if isinstance(w, bool) or not isinstance(
        w, int | float) or not math.isfinite(w) or w < 0}
    if odd:  # a negative or NaN weight sent a target's values out of order silently
        raise ValueError(f"weights are costs of an error, numbers 0 or more: "
                         f"{', '.join(f'{t}={w!r}' for t, w in odd.items())}")
    out["weight"] = out["target"].astype(str).map(known).fillna(1.0).astype(float)
    out["expected_errors"] = out["p_wrong"] * out["weight"]
    # Highest expected errors first; ties in batch order (a stable sort).
    out = out.iloc[np.argsort(-out["expected_errors"].to_numpy(), kind="stable")]
    out = out.reset_index(drop=True)
    out["review"] = np.arange(n) < count
    out["audit"] = False
    rest = np.flatnonzero(~out["review"].to_numpy())
    draws = int(np.ceil(audit * len(rest))) if audit > 0 and len(rest) else 0
    if draws:
        chosen = np.random.default_rng(seed).choice(rest, size=draws, replace=False)
        out.loc[chosen, "audit"] = True
    planned = out["review"] | out["audit"]
    out = pd.concat([out.loc[out["review"]], out.loc[out["audit"]],
                     out.loc[~planned]], ignore_index=True)
    ranks = pd.array([*range(1, int(planned.sum()) + 1)] + [None] * int((~planned).sum()),
                     dtype="Int64")
    out["rank"] = ranks
    out["p_wrong"] = out["p_wrong"].round(6)
    return out[list(PLAN_COLUMNS)]


def summary(planned: pd.DataFrame) -> pd.DataFrame:
    """Per target of a `plan`: values, reviews, audit draws, errors the reviews are
    expected to catch and errors expected to remain in what is accepted unread (by the
    same probabilities: the audit's ledger rows measure the latter without them)."""
    accepted = ~(planned["review"] | planned["audit"])
    frame = planned.assign(
        caught=planned["p_wrong"].where(planned["review"], 0.0),
        left=planned["p_wrong"].where(accepted, 0.0))
    grouped = frame.groupby("target", sort=False, observed=True)
    return pd.DataFrame({
        "n_values": grouped.size(),
        "n_review": grouped["review"].sum().astype(int),
        "n_audit": grouped["audit"].sum().astype(int),
        "expected_caught": grouped["caught"].sum(),
        "expected_left": grouped["left"].sum(),
    })


def _needed(p: np.ndarray, error_rate: float) -> tuple[int, float]:
    """The fewest of the riskiest values to review so that the mean ``p`` of the rest is
    at most ``error_rate``, and that mean (NaN when nothing is left)."""
    ordered = np.sort(p)[::-1]
    n = len(ordered)
    left = np.concatenate([np.cumsum(ordered[::-1])[::-1], [0.0]])  # sum of p[k:]
    # The mean of the rest only falls as the riskiest go, so the first k that meets the
    # rate is the answer; k = n (review everything) always does.
    k = int(np.argmax(left <= error_rate * (n - np.arange(n + 1)) + 1e-12))
    return k, (float(left[k] / (n - k)) if k < n else math.nan)


def to_reach(planned: pd.DataFrame, error_rate: float) -> pd.DataFrame:
    """How many values to review so that the values accepted unread are expected to be
    wrong at most ``error_rate`` of the time, per target of a `plan` and for all its
    values together (row `ALL`, the plan's targets competing for one budget), columns
    `REACH_COLUMNS`: ``expected_error`` with no review, ``n_review`` (the riskiest by
    ``p_wrong`` first), its ``review_share`` of the values, and ``expected_error_after``
    among those left (NaN when every value is reviewed). As good as ``p_wrong``: from a
    reference's `ErrorModel`, calibrated; from confidence alone, as honest as it is.

    >>> planned = pd.DataFrame({"target": ["Total"] * 4, "p_wrong": [0.5, 0.02, 0.01, 0.3]})
    >>> reach = to_reach(planned, 0.05)
    >>> int(reach.loc["Total", "n_review"]), float(reach.loc["Total", "expected_error_after"])
    (2, 0.015)
    """
    check_rate("error_rate", error_rate, "rate")
    rows = []
    groups = [(str(t), g) for t, g in planned.groupby("target", sort=False, observed=True)]
    for name, group in [*groups, (ALL, planned)]:
        p = group["p_wrong"].to_numpy(dtype=float)
        k, after = _needed(p, error_rate)
        rows.append({"target": name, "n_values": len(p),
                     "expected_error": float(p.mean()) if len(p) else math.nan,
                     "n_review": k, "review_share": k / len(p) if len(p) else math.nan,
                     "expected_error_after": after})
    return pd.DataFrame(rows, columns=["target", *REACH_COLUMNS]).set_index("target")
