"""Confidence audits with few labels, measured on the engine's outputs for the real sets.

Usage: ``make bench-estimate`` (part of ``make bench``) or ``.venv/bin/python
bench/estimate.py [--root DIR] [--audits N] [--seed S]``.

The engine runs in-process over the real sets with truth (``realsets``: sroie-dev,
invoices-dev, real/, adforms-dev, zugferd-dev, contracts-dev; read from ``--root``, never
copied) with each set's configuration; every value gets its validation outcome by the
configuration's rules (the wire's rule language, as the service validates). Each set is
then treated as a batch without truth, the other sets as the reference with truth:

1. ``audit.estimate`` from confidence alone (an `ErrorModel` fitted on the other sets):
   estimated against measured accuracy per target, and the median absolute difference
   (goal: <= 3 points), beside what a perfect estimate would still differ by (the
   measured accuracy's own sampling noise on so few values) and how many targets'
   measured accuracy lies inside the estimate's 90% interval;
2. a random audit of 30 values per target, drawn ``--audits`` times (1,000): how often
   the 90% prediction-powered interval covers the measured accuracy (goal: 85-95%) and
   its mean width beside the audit sample's own interval (Wilson; goal <= 0.7x); both
   intervals are of the target's accuracy in this set, narrowed alike by the
   finite-population correction (the audit is drawn without replacement); beside it,
   the same audits with each target's confidence calibrated perfectly on its own truth
   (an oracle: the narrowest a model of confidence could make the interval);
3. ``review.plan`` with the model of the other sets: errors caught by reviewing 10% and
   20% of the set's values, beside ordering by confidence alone and beside random
   (goal: >= confidence-only on every set and >= 2x random);
4. two runs of the same documents: the share of targets for which ``audit.compare`` and
   ``audit.drift`` find no difference (goal: >= 95%).

Every figure prints with its n; the seed is fixed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import realsets  # noqa: E402

from servicetools import audit, review  # noqa: E402
from servicetools.analysis.audit.estimation import (  # noqa: E402
    ErrorModel,
    normal_quantile,
    prediction_powered,
    wilson,
)
from servicetools.wire.rules import validate_value  # noqa: E402

SETS = (*realsets.SETS, *realsets.OTHER_SETS)
AUDIT_SIZE = 30
LEVEL = 0.9


def values(root: Path, cache: Path | None) -> pd.DataFrame:
    """One row per scored value of every set: set, document, target (configuration /
    name), confidence, passed (by the configuration's rules), filled, correct."""
    from tqdm import tqdm

    configurations = realsets.configurations()
    reader = realsets.reader_version()
    every = [case for name in SETS if (root / name).exists()
             for case in realsets.cases(name, root)]
    rows: list[dict[str, Any]] = []
    for case in tqdm(every, desc="engine over the sets", file=sys.stderr):
        configuration = configurations[case.configuration]
        trees = {t.get("name"): t.get("validation_tree")
                 for t in configuration["extraction_targets"]}
        found, _ = realsets.run_case(case, configuration, cache, reader)
        for index, outcome in enumerate(found):
            rows.append({
                "set": case.set, "extraction_id": case.name, "document_name": case.name,
                "target_name": f"{case.configuration} / {outcome.target}",
                "value_id": f"{case.name}#{index}", "value": outcome.got,
                "confidence": outcome.confidence,
                "validation_passed": validate_value(outcome.got, trees.get(outcome.target))[0],
                "correct": bool(outcome.right)})
    return pd.DataFrame(rows)


def _work(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows as `labelled` gives them: target, confidence, passed, filled, correct."""
    return pd.DataFrame({
        "target": frame["target_name"].to_numpy(), "value_id": frame["value_id"].to_numpy(),
        "confidence": frame["confidence"].to_numpy(float),
        "passed": pd.array(frame["validation_passed"].to_numpy(), dtype="boolean"),
        "filled": (frame["value"].str.strip() != "").to_numpy(),
        "correct": pd.array(frame["correct"].to_numpy(), dtype="boolean")})


def estimates(table: pd.DataFrame) -> tuple[str, dict[str, float]]:
    """Confidence-only estimates, each set against the others as reference."""
    lines = [f"{'set / configuration / target':<50}{'n':>5}{'measured':>10}{'estimated':>11}"
             f"{'90% interval':>16}{'|diff|':>8}  reliable"]
    medians: dict[str, float] = {}
    diffs_all: list[float] = []
    floors: list[float] = []
    inside, counted = 0, 0
    for name in pd.unique(table["set"]):
        mine, others = table.loc[table["set"] == name], table.loc[table["set"] != name]
        reference = _work(others)
        fields = mine.drop(columns=["correct", "set"])
        estimated = audit.estimate(fields, reference=reference)
        measured = mine.groupby("target_name", sort=False)["correct"].mean()
        diffs = []
        for target, row in estimated.drop(index=audit.ALL).iterrows():
            diff = abs(row["estimate"] - measured[target])
            diffs.append(diff)
            inside += bool(row["low"] <= measured[target] <= row["high"])
            counted += 1
            lines.append(f"{name + ' / ' + str(target):<50}{row['n']:>5}"
                         f"{measured[target]:>10.1%}{row['estimate']:>11.1%}"
                         f"{f'{row.low:.1%}-{row.high:.1%}':>16}{100 * diff:>8.1f}  "
                         f"{'yes' if row['reliable'] else 'no: ' + row['note'][:40]}")
        medians[str(name)] = statistics.median(diffs)
        diffs_all += diffs
        floors += [_noise(len(group), float(group["correct"].mean()))
                   for _, group in mine.groupby("target_name", sort=False)]
    lines.append("median |estimated - measured| per set (points): " + ", ".join(
        f"{k} {100 * v:.1f}" for k, v in medians.items())
        + f"; all {len(diffs_all)} targets {100 * statistics.median(diffs_all):.1f} (goal <= 3)")
    lines.append("the same median for a perfect estimate, from the measured accuracy's own "
                 f"sampling noise on these n: {100 * statistics.median(floors):.1f} points")
    lines.append(f"measured accuracy inside the estimate's {LEVEL:.0%} interval: {inside} of "
                 f"{counted} targets ({inside / max(1, counted):.0%})")
    return "\n".join(lines), medians


def _noise(n: int, accuracy: float, runs: int = 2000) -> float:
    """The mean |measured - true| accuracy of n values each right with probability
    `accuracy`: what a perfect estimate still differs by on so few values."""
    draws = np.random.default_rng(0).binomial(n, accuracy, runs) / n
    return float(np.abs(draws - accuracy).mean())


def audits(table: pd.DataFrame, runs: int, seed: int) -> str:
    """Coverage and width of the prediction-powered interval with a random audit of
    AUDIT_SIZE values per target, over `runs` simulated audits."""
    rng = np.random.default_rng(seed)
    z = normal_quantile(LEVEL)
    lines = [f"{'set / configuration / target':<50}{'n':>5}{'measured':>10}{'covered':>9}"
             f"{'width PPI':>11}{'width sample':>14}{'ratio':>7}"]
    covered_all, ratios_all, count, worst = 0, [], 0, (2.0, "")
    oracle_covered, oracle_ratios = 0, []
    for name in pd.unique(table["set"]):
        mine, others = table.loc[table["set"] == name], table.loc[table["set"] != name]
        model = ErrorModel.fit(_work(others))
        for target, part in mine.groupby("target_name", sort=False):
            if len(part) < 2 * AUDIT_SIZE:
                continue  # an audit of 30 would be most of the target: nothing to estimate
            p = model.p_right(_work(part))
            y = part["correct"].to_numpy(float)
            measured = float(y.mean())
            best = _calibrated(part["confidence"].to_numpy(float), y)
            covered, widths, sample_widths, best_covered, best_widths = 0, [], [], 0, []
            for _ in range(runs):
                drawn = rng.choice(len(part), size=AUDIT_SIZE, replace=False)
                _, low, high = prediction_powered(best, best[drawn], y[drawn], z)
                best_covered += low <= measured <= high
                best_widths.append(high - low)
                _, low, high = prediction_powered(p, p[drawn], y[drawn], z)
                s_low, s_high = wilson(float(y[drawn].sum()), AUDIT_SIZE, z,
                                       population=len(part))
                covered += low <= measured <= high
                widths.append(high - low)
                sample_widths.append(s_high - s_low)
            ratio = float(np.mean(widths)) / float(np.mean(sample_widths))
            covered_all, count = covered_all + covered, count + runs
            ratios_all.append(ratio)
            worst = min(worst, (covered / runs, f"{name} / {target}"))
            oracle_covered += best_covered
            oracle_ratios.append(float(np.mean(best_widths)) / float(np.mean(sample_widths)))
            lines.append(f"{name + ' / ' + str(target):<50}{len(part):>5}"
                         f"{measured:>10.1%}{covered / runs:>9.1%}{np.mean(widths):>11.3f}"
                         f"{np.mean(sample_widths):>14.3f}{ratio:>7.2f}")
    lines.append(f"all targets with >= {2 * AUDIT_SIZE} values ({len(ratios_all)}): covered "
                 f"{covered_all / max(1, count):.1%} of {count} audits (goal 85-95%); mean "
                 f"width ratio {np.mean(ratios_all):.2f} (goal <= 0.7); the least covered "
                 f"target: {worst[1]}, {worst[0]:.1%}")
    lines.append("what confidence can give at best: the same audits with each target's "
                 "confidence perfectly calibrated on its own truth (isotonic; an oracle no "
                 f"reference gives): covered {oracle_covered / max(1, count):.1%}, mean width "
                 f"ratio {np.mean(oracle_ratios):.2f}")
    return "\n".join(lines)


def _calibrated(confidence: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Each value's probability of being right by the isotonic map of confidence fitted
    on these values' own truth: the best any calibration of the confidence does here."""
    from sklearn.isotonic import IsotonicRegression

    fitted = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    return np.asarray(fitted.fit_transform(confidence, right), dtype=float)


def plans(table: pd.DataFrame, seed: int) -> str:
    """Errors caught by reviewing 10% and 20% of each set's values."""
    lines = [f"{'set':<16}{'values':>7}{'errors':>7}   "
             + "   ".join(f"{'plan':>5}{'conf.':>6}{'random':>7}  @{share:.0%}"
                          for share in (0.1, 0.2))]
    failing = []
    for name in pd.unique(table["set"]):
        mine, others = table.loc[table["set"] == name], table.loc[table["set"] != name]
        model = ErrorModel.fit(_work(others))
        fields = mine.drop(columns=["correct", "set"])
        wrong = pd.Series(~mine["correct"].to_numpy(bool), index=mine["value_id"].to_numpy())
        cells = []
        for share in (0.1, 0.2):
            k = int(round(share * len(mine)))
            planned = review.plan(fields, budget=k, audit=0, reference=model, seed=seed)
            caught = int(wrong[planned.loc[planned["review"], "value_id"]].sum())
            by_confidence = int(wrong[mine.nsmallest(k, "confidence")["value_id"]].sum())
            random = float(wrong.mean()) * k
            cells.append(f"{caught:>5}{by_confidence:>6}{random:>7.1f}      ")
            if caught < by_confidence or caught < 2 * random:
                failing.append(f"{name} @{share:.0%}")
        lines.append(f"{name:<16}{len(mine):>7}{int(wrong.sum()):>7}   " + "   ".join(cells))
    lines.append("goal: plan >= confidence-only and >= 2x random on every set; below it: "
                 + (", ".join(failing) if failing else "none"))
    return "\n".join(lines)


def repeat(table: pd.DataFrame, again: pd.DataFrame) -> str:
    """compare and drift between two runs of the same documents."""
    first, second = table.drop(columns=["set"]), again.drop(columns=["set"])
    drifted = audit.drift(first, second)
    quiet_drift = ~drifted["significant"].fillna(False).astype(bool)
    compared = audit.compare(first, second)
    deltas = compared[["confidence_delta", "failure_rate_delta", "fill_rate_delta"]]
    same = (deltas.fillna(0).abs() < 1e-9).all(axis=1)
    n = len(drifted)
    return (f"two runs of the same {table['extraction_id'].nunique()} documents: drift finds "
            f"no difference for {quiet_drift.mean():.1%} of {n} targets, compare for "
            f"{same.mean():.1%} of {len(compared)} (goal >= 95%)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=realsets.SHARED)
    parser.add_argument("--cache", type=Path,
                        default=Path.home() / ".cache" / "servicetools-bench")
    parser.add_argument("--audits", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not any((args.root / name).exists() for name in SETS):
        print(f"no real set under {args.root}: nothing to measure", file=sys.stderr)
        return 0
    table = values(args.root, args.cache)
    print(f"{len(table)} values of {table['extraction_id'].nunique()} documents in "
          f"{table['set'].nunique()} sets; each set estimated with the others as reference")
    print("\n1. Confidence alone")
    text, _ = estimates(table)
    print(text)
    print(f"\n2. A random audit of {AUDIT_SIZE} values per target, {args.audits} times")
    print(audits(table, args.audits, args.seed))
    print("\n3. Errors caught by the review plan")
    print(plans(table, args.seed))
    print("\n4. Two runs of the same documents")
    print(repeat(table, values(args.root, args.cache)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
