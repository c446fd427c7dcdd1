"""`estimate`: a batch's accuracy per target without its truth, with honest intervals.

The people who audit confidence rarely have truth for this week's batch. Two things
still say how many of its values are right:

- **a reference batch with truth** (a dev set, last month's batch and its corrections
  ledger): an `ErrorModel` fitted there gives each value of this batch its probability
  of being right, from its confidence, whether it failed validation and whether it is
  empty (confidence alone misses what a failed rule says). The mean over a target's
  values is its estimated accuracy (NannyML's confidence-based performance estimation,
  with validation and emptiness as inputs beside the score). The interval holds the
  model's own uncertainty (refitted on resamples of the reference), the batch's
  binomial noise, and how far targets' calibration differs one from another (estimated
  on the reference's targets) for the part of this target's that its own labels there
  leave open: all of it for a target the reference lacks. It is marked unreliable
  when the reference has few labelled values of the target, or when this batch's
  confidence or pass rate lies outside the reference's (a two-sample test): then the
  model is extrapolating.
- **a random audit sample of this batch**, labelled in the review queue (its ledger
  rows) or given as truth: the prediction-powered estimate (Angelopoulos et al.,
  Science 2023) adds the sample's mean error of the model to the model's mean over
  all values. It is unbiased however wrong the model is, and narrower than the sample
  alone wherever the model explains part of the variance.

>>> import pandas as pd
>>> ref = pd.DataFrame({"target": ["Total"] * 6, "confidence": [.95, .9, .92, .3, .2, .97],
...                     "passed": [True] * 6, "filled": [True] * 6,
...                     "correct": [True, True, True, False, False, True]})
>>> model = ErrorModel.fit(ref)
>>> bool(model.p_right(ref)[0] > model.p_right(ref)[3])
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from .grading import ALL, grade
from .normalisation import DEFAULT_NORMALIZE, Normalize
from .significance import ks_2samp
from .work import work_frame

__all__ = ["ESTIMATE_COLUMNS", "ErrorModel", "estimate", "finite_population", "labelled",
           "normal_quantile", "prediction_powered", "wilson"]

#: The columns of `estimate`'s frame, one row per target and one for all (`ALL`).
ESTIMATE_COLUMNS: tuple[str, ...] = (
    "n", "estimate", "low", "high", "method", "n_reference", "n_sample", "sample_accuracy",
    "sample_low", "sample_high", "reliable", "note")

# The model's inputs; a target's own intercept is shrunk toward the pooled one (ridge),
# so a target with a handful of labels borrows from the others.
_FEATURES = ("logit_confidence", "failed", "empty", "no_confidence")
_RIDGE = 1.0  # on the slopes: some hundred labels, four inputs
# On each target's offset: a prior spread of one log-odds unit (a target's confidence may
# be off from the pool's by about a factor e in odds). 5.0 held a target with a few
# dozen labels of its own near the pooled model; a ridge scaled by the reference's
# a(1 - a) let an all-right target's offset run to certainty. Chosen on the tuning halves.
_TARGET_RIDGE = 1.0
# The between-target variance of offsets (log-odds) is kept within these bounds: a
# reference of few targets can estimate it at almost nothing.
_SPREAD_BOUNDS = (0.01, 4.0)
_MIN_REFERENCE = 30  # labelled values of a target below which the estimate says so
_MIN_AUDIT = 10  # audited values of a target below which the model alone speaks
_SHIFT_P = 0.01  # a shift test's p-value below which this batch is not the reference's
_BOOTSTRAP = 100
# Pseudo-values with the model's own residual variance added to an audit's residuals.
# Four, as Agresti and Coull's interval adds; measured by bench/estimate.py (ten targets,
# 1,000 audits of 30 each): coverage of the 90% interval 86.0% -> 91.2%, its worst
# target 56% -> 82%, width 0.75 -> 0.78 of the sample's own interval.
_PRIOR_VALUES = 4


def _inputs(frame: pd.DataFrame) -> np.ndarray:
    """The model's inputs of work rows (columns ``confidence``, ``passed``, ``filled``)."""
    confidence = pd.to_numeric(frame["confidence"], errors="coerce").to_numpy(dtype=float)
    missing = ~np.isfinite(confidence)
    clipped = np.clip(np.where(missing, 0.5, confidence), 1e-3, 1 - 1e-3)
    passed = frame["passed"] if "passed" in frame.columns else pd.Series(True, frame.index)
    failed = (passed.astype("boolean").fillna(True) == False).to_numpy(dtype=float)  # noqa: E712
    filled = frame["filled"] if "filled" in frame.columns else pd.Series(True, frame.index)
    empty = (~filled.astype(bool)).to_numpy(dtype=float)
    return np.column_stack([np.log(clipped / (1 - clipped)), failed, empty,
                            missing.astype(float)])


def _offset(rows: pd.DataFrame) -> np.ndarray:
    """The log-odds of the stated confidence: the model starts from trusting it, and the
    reference's labels move it as far as they show it is off (with few labels, not far)."""
    return _inputs(rows)[:, 0]


def _fit_logistic(x: np.ndarray, y: np.ndarray, penalty: np.ndarray, offset: np.ndarray,
                  weights: np.ndarray | None = None) -> np.ndarray:
    """Ridge logistic regression with an offset, by Newton's method (x holds the
    intercept column, whose penalty is 0). A few inputs and some thousand rows: numpy is
    enough, and the client side stays free of scipy and scikit-learn."""
    return _newton(x, y, penalty, offset, weights)[0]


def _newton(x: np.ndarray, y: np.ndarray, penalty: np.ndarray, offset: np.ndarray,
            weights: np.ndarray | None = None, start: np.ndarray | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """`_fit_logistic`'s coefficients (Newton's method from ``start``, else zeros) and
    the Hessian of the penalised log-likelihood at them (its inverse: their posterior
    covariance)."""
    beta = np.zeros(x.shape[1]) if start is None else start.copy()
    w = np.ones(len(y)) if weights is None else weights

    def objective(b: np.ndarray) -> float:
        """The penalised log-likelihood (log(1 + e^z) by logaddexp: no overflow)."""
        z = offset + x @ b
        return float(np.sum(w * (y * z - np.logaddexp(0.0, z))) - 0.5 * penalty @ b ** 2)

    hessian = np.diag(penalty)
    current = objective(beta)
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(offset + x @ beta, -30, 30)))
        gradient = x.T @ (w * (y - p)) - penalty * beta
        hessian = (x * (w * p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hessian + 1e-9 * np.eye(len(beta)), gradient)
        # A full step can overshoot when the unpenalised intercept and a slope are
        # nearly collinear (a reference whose confidence lies in a narrow band): the
        # values' probabilities saturate and the next steps run off to 1e11. Halve the
        # step until the penalised likelihood does not fall.
        for _ in range(40):
            trial = objective(beta + step)
            if trial >= current - 1e-12 * abs(current):
                break
            step = step / 2
        beta = beta + step
        current = objective(beta)
        if np.max(np.abs(step)) < 1e-8:
            break
    p = 1 / (1 + np.exp(-np.clip(offset + x @ beta, -30, 30)))
    hessian = (x * (w * p * (1 - p))[:, None]).T @ x + np.diag(penalty)
    return beta, hessian


def _between_targets(x: np.ndarray, y: np.ndarray, offset: np.ndarray, targets: int
                     ) -> float:
    """How far targets' calibration differs one from another: the variance of their
    offsets (log-odds) as a normal random effect, by empirical Bayes (MacKay's update:
    the ridge on the offsets is the inverse of their mean square plus posterior
    variance, refitted until it settles). The last ``targets`` columns of ``x`` are
    the targets' indicators."""
    if targets < 2:
        return 1 / _TARGET_RIDGE  # one target says nothing of the spread: the prior's
    ridge, beta = _TARGET_RIDGE, None
    for _ in range(30):  # each refit starts from the last: a few Newton steps
        penalty = np.array([0.0] + [_RIDGE] * (x.shape[1] - 1 - targets) + [ridge] * targets)
        beta, hessian = _newton(x, y, penalty, offset, start=beta)
        posterior = np.diag(np.linalg.inv(hessian + 1e-9 * np.eye(len(beta))))
        spread = float(np.mean(beta[-targets:] ** 2 + posterior[-targets:]))
        spread = min(max(spread, _SPREAD_BOUNDS[0]), _SPREAD_BOUNDS[1])
        if abs(1 / spread - ridge) < 1e-2 * ridge:  # it only widens intervals
            break
        ridge = 1 / spread
    return spread


@dataclass(frozen=True)
class ErrorModel:
    """P(right) of a value from its confidence, validation and emptiness, fitted on
    labelled values (`fit`); `p_right` applies it to work rows of any batch."""

    coef: Mapping[str, float]
    intercept: float
    targets: Mapping[str, float] = field(default_factory=dict)  # each target's offset
    n: Mapping[str, int] = field(default_factory=dict)  # labelled values per target
    #: The between-target variance of the offsets (log-odds; 0 when not estimated).
    spread: float = 0.0
    #: Each target's labels' information on its offset: the sum of p(1 - p).
    information: Mapping[str, float] = field(default_factory=dict)
    #: The ridge the offsets were fitted with.
    ridge: float = 0.0

    @classmethod
    def fit(cls, labelled_rows: pd.DataFrame) -> ErrorModel:
        """Fit on rows with ``target``, ``confidence``, ``passed``, ``filled`` and a
        boolean ``correct`` (rows without one are left out): `labelled`'s frame."""
        rows = labelled_rows.loc[labelled_rows["correct"].notna()]
        if rows.empty:
            raise ValueError("the reference has no labelled values: give truth or a "
                             "ledger that covers some of its values")
        return cls._fit(rows, spread=True)

    @classmethod
    def _fit(cls, rows: pd.DataFrame, weights: np.ndarray | None = None,
             spread: bool = False) -> ErrorModel:
        targets = [str(t) for t in pd.unique(rows["target"].astype(object))]
        index = {t: i for i, t in enumerate(targets)}
        names = rows["target"].astype(object).astype(str).to_numpy()
        own = np.zeros((len(rows), len(targets)))
        own[np.arange(len(rows)), [index[t] for t in names]] = 1
        x = np.column_stack([np.ones(len(rows)), _inputs(rows), own])
        y = rows["correct"].astype(bool).to_numpy(dtype=float)
        ridge = _TARGET_RIDGE
        penalty = np.array([0.0] + [_RIDGE] * len(_FEATURES) + [ridge] * len(targets))
        beta = _fit_logistic(x, y, penalty, _offset(rows), weights)
        counts = pd.Series(names).value_counts()
        p = 1 / (1 + np.exp(-np.clip(_offset(rows) + x @ beta, -30, 30)))
        information = pd.Series(p * (1 - p)).groupby(names, sort=False).sum()
        return cls(coef=dict(zip(_FEATURES, map(float, beta[1:1 + len(_FEATURES)]),
                                 strict=True)),
                   intercept=float(beta[0]),
                   targets={t: float(b) for t, b in zip(targets, beta[1 + len(_FEATURES):],
                                                        strict=True)},
                   n={str(k): int(v) for k, v in counts.items()},
                   spread=(_between_targets(x, y, _offset(rows), len(targets))
                           if spread else 0.0),
                   information={str(k): float(v) for k, v in information.items()},
                   ridge=ridge)

    def offset_variance(self, target: str) -> float:
        """How uncertain a target's offset is beyond what refitting on resamples of the
        reference shows: the posterior variance of a random effect of variance `spread`
        given the target's own labels, less the sampling variance of its ridge fit (the
        part the resamples count). A target the reference lacks: all of `spread`."""
        if self.spread <= 0:
            return 0.0
        info = self.information.get(target, 0.0)
        if info <= 0:
            return self.spread
        return max(0.0, 1 / (info + 1 / self.spread) - info / (info + self.ridge) ** 2)

    def shrunk(self, ridge: float) -> ErrorModel:
        """The model with each target's offset as a ridge of `ridge` would have fitted
        it. One Newton step from the pooled model: each target's level (intercept plus
        offset) moves towards the pool's, the information-weighted mean level, keeping
        (I + own ridge) / (I + ridge) of its distance, I the target's information."""
        if ridge <= self.ridge or not self.targets:
            return self
        info = {t: self.information.get(t, 0.0) for t in self.targets}
        total = sum(info.values())
        pool = self.intercept + (sum(info[t] * b for t, b in self.targets.items()) / total
                                 if total > 0 else 0.0)
        targets = {t: (self.intercept + b - pool) * (info[t] + self.ridge) / (info[t] + ridge)
                   for t, b in self.targets.items()}
        return replace(self, intercept=pool, targets=targets, ridge=ridge)

    def pooled_below(self, minimum: int = _MIN_REFERENCE) -> ErrorModel:
        """The model with the offset of each target that has fewer than ``minimum``
        labelled values set to the pool's (0): the offsets `estimate` calls unreliable."""
        return replace(self, targets={t: (b if self.n.get(t, 0) >= minimum else 0.0)
                                      for t, b in self.targets.items()})

    def p_right(self, rows: pd.DataFrame) -> np.ndarray:
        """Each row's probability of being right (a target the reference lacks gets the
        pooled intercept)."""
        score = _offset(rows) + self.intercept + _inputs(rows) @ np.array(
            [self.coef[f] for f in _FEATURES])
        offsets = rows["target"].astype(object).astype(str).map(self.targets).fillna(0.0)
        return 1 / (1 + np.exp(-np.clip(score + offsets.to_numpy(dtype=float), -30, 30)))


def labelled(data: Any, truth: Any, *, cells: pd.DataFrame | None = None,
             normalize: Normalize = DEFAULT_NORMALIZE) -> pd.DataFrame:
    """The work rows of ``data`` (`work_frame`: target, confidence, passed, filled, ...)
    that ``truth`` (truth files, a table of expected values, or a corrections ledger: see
    `truth`) grades, with their ``correct`` column: what an `ErrorModel` is fitted on and
    what an audit sample is. ``normalize``: as `grade`'s."""
    work = work_frame(data, cells)
    graded = grade(work, truth, normalize=normalize)
    graded = graded.loc[graded["correct"].notna() & graded["value_id"].notna()]
    verdict = graded.drop_duplicates("value_id", keep="last").set_index("value_id")["correct"]
    rows = work.loc[work["value_id"].isin(verdict.index)].copy()
    rows["correct"] = pd.array(rows["value_id"].map(verdict).to_numpy(), dtype="boolean")
    return rows.reset_index(drop=True)


def normal_quantile(level: float) -> float:
    """The normal quantile of a two-sided interval at ``level`` (0.9 -> 1.645)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, not {level!r}")
    return NormalDist().inv_cdf(0.5 + level / 2)


def prediction_powered(p_all: np.ndarray, p_sample: np.ndarray, y_sample: np.ndarray,
                       z: float) -> tuple[float, float, float]:
    """The prediction-powered mean and its interval: the model's mean over all values,
    corrected by its mean error on the labelled sample (``y_sample``, 1 right, 0
    wrong), a simple random sample of those values (Angelopoulos et al. 2023, the mean's
    case).

    The estimand is the accuracy of these values, not of values like them: the model's
    mean over them is known exactly, and the sample's share of them shrinks the
    correction's variance (the finite-population correction).

    Errors are rare and an audit is small, so the sample's residuals often miss the few
    confident wrong values that make most of their spread, and a normal interval on
    the sample's variance alone then covers far less than it says (an adforms-dev date
    target: 56% of audits of 30 under a 90% interval). The variance is therefore
    shrunk toward the model's own, p(1 - p) on average over all values, with
    `_PRIOR_VALUES` pseudo-values, as Agresti and Coull add four to a proportion. An
    audit without a single error still has at least the variance of their proportion
    (two right and two wrong added), so it never shrinks to a point.
    """
    n, m = len(p_all), len(y_sample)
    residual = y_sample - p_sample
    value = float(p_all.mean()) + float(residual.mean())
    spread = float(((residual - residual.mean()) ** 2).sum())
    prior = float((p_all * (1 - p_all)).mean())
    variance = ((spread + _PRIOR_VALUES * prior) / (m - 1 + _PRIOR_VALUES) / m
                if m else 0.25)
    if m and y_sample.min() == y_sample.max():  # all right or all wrong: no spread seen
        adjusted = (float(y_sample.sum()) + 2) / (m + 4)
        variance = max(variance, adjusted * (1 - adjusted) / (m + 4))
    variance *= finite_population(n, m)
    half = z * math.sqrt(variance)

    def clip(x: float) -> float:  # the correction can carry the mean past 0 or 1
        return min(1.0, max(0.0, x))

    return (clip(value), clip(value - half), clip(value + half))


def finite_population(population: int, sample: int) -> float:
    """The factor a sample of ``sample`` values drawn without replacement from
    ``population`` values takes off the variance of their mean: (N - n) / (N - 1)."""
    return max(0.0, (population - sample) / (population - 1)) if population > 1 else 0.0


def wilson(successes: float, n: int, z: float, population: int | None = None
           ) -> tuple[float, float]:
    """The Wilson score interval of a proportion (the sample's own interval); with the
    ``population`` it was drawn from without replacement, narrowed by the
    finite-population correction."""
    if population is not None and n:
        z = z * math.sqrt(finite_population(population, n))
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _shifted(batch: pd.DataFrame, reference: pd.DataFrame) -> str:
    """Why this batch's values of a target lie outside the reference's, or ""."""
    mine = pd.to_numeric(batch["confidence"], errors="coerce").dropna()
    theirs = pd.to_numeric(reference["confidence"], errors="coerce").dropna()
    if len(mine) >= 5 and len(theirs) >= 5:
        _, p = ks_2samp(mine, theirs)
        if p < _SHIFT_P:
            return f"confidence shifted from the reference's (KS p={p:.3g})"
    a = batch["passed"].astype("boolean").dropna().astype(float)
    b = reference["passed"].astype("boolean").dropna().astype(float)
    if len(a) >= 5 and len(b) >= 5:
        pooled = (a.sum() + b.sum()) / (len(a) + len(b))
        spread = math.sqrt(pooled * (1 - pooled) * (1 / len(a) + 1 / len(b)))
        if spread > 0:
            z = abs(a.mean() - b.mean()) / spread
            p = math.erfc(z / math.sqrt(2))
            if p < _SHIFT_P:
                return (f"pass rate {a.mean():.0%} against the reference's {b.mean():.0%} "
                        f"(p={p:.3g})")
    return ""


def estimate(data: Any, cells: pd.DataFrame | None = None, *, reference: Any,
             sample: Any = None, level: float = 0.9, seed: int = 0,
             normalize: Normalize = DEFAULT_NORMALIZE) -> pd.DataFrame:
    """Estimated accuracy per target of a batch without its truth, columns
    `ESTIMATE_COLUMNS`, indexed by ``target`` with a last row `ALL`.

    ``reference``: labelled values of another batch, as `labelled` gives them (or an
    `ErrorModel` already fitted, or a ``(data, truth)`` pair to label). ``sample``: truth
    of a random audit sample of *this* batch (truth files, a table of expected values,
    or a corrections ledger). A ledger whose rows say ``audit`` (a `servicetools.review`
    plan's queue) is read as a plan made it: its audit rows are the random sample of the
    values accepted unread, its other rows values reviewed for their risk, whose verdicts
    count as they are (never as a sample: they would bias it). ``estimate`` and its
    ``low``/``high`` interval at ``level`` then come from the reviewed values as they are
    plus, for the rest, the model corrected by the audit (``method``
    ``"prediction-powered"``) where the target has at least 10 audited values, else
    from the model alone (``"confidence"``); ``sample_accuracy`` and its interval are
    the audit's alone (Wilson), for comparison.
    ``reliable`` is False, with the reason in ``note``, where the model alone speaks and
    the reference is small or this batch lies outside it. ``n`` counts the batch's values.
    ``normalize`` (as `grade`'s) compares the sample's values, and a ``(data, truth)``
    reference's, with their truth.
    """
    z = normal_quantile(level)
    work = work_frame(data, cells)
    reference_rows: pd.DataFrame | None
    if isinstance(reference, ErrorModel):
        model, reference_rows = reference, None
    else:
        if isinstance(reference, tuple) and len(reference) == 2:
            reference = labelled(*reference, normalize=normalize)
        reference_rows = reference.loc[reference["correct"].notna()]
        model = ErrorModel.fit(reference_rows)
    p = model.p_right(work) if len(work) else np.array([])
    drawn, reviewed = _sample_parts(work, sample, normalize)
    targets = [str(t) for t in pd.unique(work["target"].astype(object))]
    spread: list[np.ndarray] = []  # refitted models' P(right), made when first needed

    def draws(mask: np.ndarray) -> np.ndarray | None:
        if reference_rows is None:
            return None
        if not spread:
            spread.append(_model_spread(reference_rows, work, seed))
        return spread[0][:, mask]

    rows = []
    for name in [*targets, ALL]:
        mask = (np.ones(len(work), bool) if name == ALL
                else (work["target"].astype(object).astype(str) == name).to_numpy())
        rows.append(_row(name, work.loc[mask], p[mask], partial(draws, mask), model,
                         reference_rows, drawn, reviewed, z))
    out = pd.DataFrame(rows, columns=["target", *ESTIMATE_COLUMNS]).set_index("target")
    return out


def _calibration_variance(rows: pd.DataFrame, q: np.ndarray, model: ErrorModel) -> float:
    """The variance the targets' unknown calibration adds to the mean of ``q`` (each
    row's P(right)): a shift of a target's offset by d moves its rows' mean by about
    d times their mean q(1 - q); targets' offsets independent."""
    if model.spread <= 0 or not len(q):
        return 0.0
    slope = pd.Series(q * (1 - q) / len(q)).groupby(
        rows["target"].astype(object).astype(str).to_numpy(), sort=False).sum()
    return float(sum(s * s * model.offset_variance(t) for t, s in slope.items()))


def _model_spread(reference: pd.DataFrame, work: pd.DataFrame, seed: int) -> np.ndarray:
    """P(right) of the batch's values under models refitted on resamples of the reference
    (Poisson bootstrap weights): the model's own uncertainty, `_BOOTSTRAP` x values."""
    rng = np.random.default_rng(seed)
    draws = np.empty((_BOOTSTRAP, len(work)))
    for b in range(_BOOTSTRAP):
        weights = rng.poisson(1.0, len(reference)).astype(float)
        draws[b] = ErrorModel._fit(reference, weights).p_right(work) if len(work) else []
    return draws


def _sample_parts(work: pd.DataFrame, sample: Any, normalize: Normalize
                  ) -> tuple[pd.Series, pd.Series]:
    """The verdicts (by value id) of the random audit and of the values reviewed for
    their risk, from ``sample``."""
    empty = pd.Series(dtype=bool)
    if sample is None:
        return empty, empty
    frame = getattr(sample, "frame", sample)
    audited = labelled(work, sample, normalize=normalize)
    verdict = audited.set_index("value_id")["correct"].astype(bool) if len(
        audited) else empty
    marks = frame.get("audit") if isinstance(frame, pd.DataFrame) else None
    if marks is None or not marks.astype("boolean").fillna(False).any():
        return verdict, empty  # no plan's marks: all of it is the random sample
    drawn_ids = set(frame.loc[marks.astype("boolean").fillna(False).to_numpy(bool),
                              "value_id"].dropna().astype(str))
    in_audit = verdict.index.astype(str).isin(drawn_ids)
    return verdict[in_audit], verdict[~in_audit]


def _row(name: str, rows: pd.DataFrame, p: np.ndarray,
         refitted: Callable[[], np.ndarray | None], model: ErrorModel,
         reference: pd.DataFrame | None, drawn: pd.Series, reviewed: pd.Series,
         z: float) -> dict[str, Any]:
    n = len(rows)
    n_reference = (sum(model.n.values()) if name == ALL else model.n.get(name, 0))
    ids = rows["value_id"]
    # Reviewed for their risk: known as they are. The rest: estimated, with the audit.
    known = ids.isin(reviewed.index).to_numpy() if len(reviewed) else np.zeros(n, bool)
    rest = ~known
    sampled = (ids.isin(drawn.index).to_numpy() & rest) if len(drawn) else np.zeros(n, bool)
    y = drawn.reindex(ids[sampled]).to_numpy(dtype=float)
    right_known = float(reviewed.reindex(ids[known]).sum()) if known.any() else 0.0
    m, u = len(y), int(rest.sum())
    out: dict[str, Any] = {"target": name, "n": n, "n_reference": n_reference, "n_sample": m}
    out["sample_accuracy"] = float(y.mean()) if m else math.nan
    out["sample_low"], out["sample_high"] = wilson(float(y.sum()), m, z,
                                                   population=int((~known).sum()))
    if n == 0:
        return {**out, "estimate": math.nan, "low": math.nan, "high": math.nan,
                "method": "none", "reliable": False, "note": "no values"}

    def whole(share: float) -> float:  # the rest's accuracy, with the reviewed values
        return (right_known + u * share) / n

    if u == 0:
        value = right_known / n
        return {**out, "estimate": value, "low": value, "high": value,
                "method": "reviewed", "reliable": True, "note": ""}
    if m >= _MIN_AUDIT:
        value, low, high = prediction_powered(p[rest], p[sampled], y, z)
        return {**out, "estimate": whole(value), "low": whole(low), "high": whole(high),
                "method": "prediction-powered", "reliable": True, "note": ""}
    q = p[rest]
    predicted = float(q.mean())
    variance = float((q * (1 - q)).sum()) / (u * u)
    draws = refitted()
    if draws is not None and len(draws):
        variance += float(draws[:, rest].mean(axis=1).var(ddof=1))
    variance += _calibration_variance(rows.loc[rest], q, model)
    half = z * math.sqrt(variance)
    note = ""
    if n_reference < _MIN_REFERENCE:
        note = f"{n_reference} labelled values in the reference (fewer than {_MIN_REFERENCE})"
    elif reference is not None:
        mine = (reference if name == ALL
                else reference.loc[reference["target"].astype(object).astype(str) == name])
        note = _shifted(rows, mine)
    if 0 < m < _MIN_AUDIT:
        note = "; ".join(filter(None, [note, f"{m} audited values (fewer than {_MIN_AUDIT})"]))
    return {**out, "estimate": whole(predicted), "low": whole(max(0.0, predicted - half)),
            "high": whole(min(1.0, predicted + half)), "method": "confidence",
            "reliable": not note, "note": note}
