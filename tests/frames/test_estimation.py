"""Accuracy estimated without truth (`audit.estimate`) and the review plan
(`review.plan`), on batches drawn so that their truth is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from servicetools import audit, review
from servicetools.analysis.audit import ErrorModel

TARGETS = ("Total", "Date", "Vendor")


def drawn(n: int, seed: int, shift: float = 0.0, honest: float = 0.05
          ) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame]:
    """A batch's fields, which of its values are right, and a ledger that says so: a
    value is right with probability (confidence - honest - shift); a wrong value fails
    validation four times in ten."""
    rng = np.random.default_rng(seed)
    confidence = np.clip(rng.beta(5, 1.2, n), 0.01, 0.99)
    right = rng.random(n) < np.clip(confidence - honest - shift, 0, 1)
    passed = np.where(right, rng.random(n) < 0.97, rng.random(n) < 0.6)
    value = np.where(right, "ok", "bad")
    target = np.array(TARGETS)[np.arange(n) % len(TARGETS)]
    ids = [f"v{seed}-{i}" for i in range(n)]
    fields = pd.DataFrame({"extraction_id": [f"e{seed}-{i // 3}" for i in range(n)],
                           "target_name": target, "value_id": ids, "value": value,
                           "confidence": confidence, "validation_passed": passed})
    ledger = pd.DataFrame({"extraction_id": fields["extraction_id"], "target_id": target,
                           "target_name": target, "value_id": ids, "old_value": value,
                           "new_value": "ok", "old_confidence": confidence})
    return fields, right, ledger


@pytest.fixture(scope="module")
def reference() -> pd.DataFrame:
    fields, _, ledger = drawn(900, seed=1)
    return audit.labelled(fields, ledger)


def test_labelled_values_carry_their_verdict(reference: pd.DataFrame) -> None:
    assert len(reference) == 900 and reference["correct"].dtype == "boolean"
    assert {"target", "confidence", "passed", "filled"} <= set(reference.columns)


def test_the_confidence_only_estimate_is_close_and_its_interval_covers(
        reference: pd.DataFrame) -> None:
    fields, right, _ = drawn(1200, seed=2)
    estimated = audit.estimate(fields, reference=reference)
    assert list(estimated.columns) == list(audit.ESTIMATE_COLUMNS)
    assert list(estimated.index) == [*TARGETS, audit.ALL]
    measured = pd.Series(right).groupby(fields["target_name"].to_numpy()).mean()
    measured[audit.ALL] = right.mean()
    for target, row in estimated.iterrows():
        assert abs(row["estimate"] - measured[target]) < 0.05, target
        assert row["low"] <= measured[target] <= row["high"], target
        assert row["method"] == "confidence" and row["reliable"] and row["n"] > 0


def test_a_shifted_batch_or_a_small_reference_is_marked_unreliable(
        reference: pd.DataFrame) -> None:
    shifted, _, _ = drawn(900, seed=3, shift=0.0)
    shifted["confidence"] = shifted["confidence"] * 0.6  # the engine changed its mind
    notes = audit.estimate(shifted, reference=reference)
    assert not notes["reliable"].any() and notes["note"].str.contains("shifted").all()
    small = audit.estimate(drawn(300, seed=4)[0], reference=reference.head(45))
    assert not small.loc["Total", "reliable"] and "fewer than 30" in small.loc["Total", "note"]


def test_an_audit_sample_corrects_a_miscalibrated_model(reference: pd.DataFrame) -> None:
    # This batch is worse than its confidence says, and worse than the reference.
    fields, right, ledger = drawn(3000, seed=5, honest=0.25)
    measured = right.mean()
    alone = audit.estimate(fields, reference=reference)
    assert alone.loc[audit.ALL, "estimate"] - measured > 0.1  # the model alone is fooled
    covered, ratios = 0, []
    for draw in range(40):
        sample = ledger.sample(90, random_state=draw)
        row = audit.estimate(fields, reference=reference, sample=sample).loc[audit.ALL]
        assert row["method"] == "prediction-powered" and row["n_sample"] == 90
        covered += row["low"] <= measured <= row["high"]
        ratios.append((row["high"] - row["low"]) / (row["sample_high"] - row["sample_low"]))
    assert covered >= 32  # a 90% interval: about 36 of 40
    assert float(np.mean(ratios)) < 1.0  # narrower than the sample's own interval


def test_an_error_model_needs_labels() -> None:
    with pytest.raises(ValueError, match="no labelled values"):
        ErrorModel.fit(pd.DataFrame({"target": ["Total"], "confidence": [0.9],
                                     "passed": [True], "filled": [True],
                                     "correct": pd.array([None], dtype="boolean")}))


def test_the_plan_reviews_the_riskiest_and_draws_an_audit_from_the_rest(
        reference: pd.DataFrame) -> None:
    fields, right, _ = drawn(1500, seed=6)
    planned = review.plan(fields, budget=0.1, audit=0.02, reference=reference, seed=1)
    assert list(planned.columns) == list(review.PLAN_COLUMNS)
    assert planned["review"].sum() == 150
    assert planned["audit"].sum() == int(np.ceil(0.02 * 1350))
    assert not (planned["review"] & planned["audit"]).any()
    assert planned["rank"].notna().sum() == planned["review"].sum() + planned["audit"].sum()
    # Errors caught by reviewing 10%: more than by confidence alone, far more than random.
    wrong = pd.Series(~right, index=fields["value_id"])
    caught = wrong[planned.loc[planned["review"], "value_id"]].sum()
    by_confidence = wrong[fields.nsmallest(150, "confidence")["value_id"]].sum()
    assert caught >= by_confidence and caught >= 2 * wrong.mean() * 150
    summary = review.summary(planned)
    assert summary["n_review"].sum() == 150 and (summary["expected_caught"] > 0).all()


def test_weights_move_a_target_up_and_bad_arguments_are_refused() -> None:
    fields, _, _ = drawn(300, seed=7)
    heavy = review.plan(fields, budget=50, audit=0, weights={"Vendor": 10.0})
    assert (heavy.loc[heavy["review"], "target"] == "Vendor").all()
    with pytest.raises(ValueError, match="budget"):
        review.plan(fields, budget=-1)
    with pytest.raises(ValueError, match="audit"):
        review.plan(fields, budget=5, audit=1.5)
    with pytest.raises(ValueError, match="lacks: Phone"):
        review.plan(fields, budget=5, weights={"Phone": 2.0})
    # 1.5 is neither a count nor a share (it was read as one value); a negative or NaN
    # weight sent a target's values out of order without a word.
    with pytest.raises(ValueError, match="not 1.5"):
        review.plan(fields, budget=1.5)
    assert review.plan(fields, budget=2.0, audit=0)["review"].sum() == 2
    for weight in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="numbers 0 or more: Vendor="):
            review.plan(fields, budget=5, weights={"Vendor": weight})


def test_to_reach_reviews_the_fewest_values_that_bring_the_rest_within_the_rate(
        reference: pd.DataFrame) -> None:
    fields, _, _ = drawn(900, seed=8)
    planned = review.plan(fields, budget=0, audit=0, reference=reference)
    reach = review.to_reach(planned, 0.1)
    assert list(reach.columns) == list(review.REACH_COLUMNS)
    assert list(reach.index) == [*pd.unique(planned["target"]), audit.ALL]
    for target, row in reach.iterrows():
        p = planned["p_wrong"] if target == audit.ALL else planned.loc[
            planned["target"] == target, "p_wrong"]
        p = np.sort(p.to_numpy())[::-1]
        k = int(row["n_review"])
        assert row["expected_error"] == pytest.approx(p.mean())
        assert row["review_share"] == pytest.approx(k / len(p))
        if k < len(p):
            assert p[k:].mean() <= 0.1 + 1e-9
            assert row["expected_error_after"] == pytest.approx(p[k:].mean())
        else:  # every value reviewed: none is left to be wrong
            assert np.isnan(row["expected_error_after"])
        assert k == 0 or p[k - 1:].mean() > 0.1  # one fewer would not do
    assert 0 < reach.loc[audit.ALL, "n_review"] < len(planned)
    everything = review.to_reach(planned, 0.0)  # no error tolerated: review every risk
    assert (everything["expected_error_after"].fillna(0) == 0).all()
    with pytest.raises(ValueError, match="error_rate"):
        review.to_reach(planned, 2)


def test_the_ledger_gives_its_audit_rows_as_the_sample() -> None:
    from servicetools import Ledger

    ledger = Ledger()
    for i, drawn_at_random in enumerate([False, True, None, True]):
        ledger.append(extraction_id="e1", target_id="t", value_id=f"v{i}", old_value="1",
                      new_value="1", audit=drawn_at_random)
    assert ledger.audit_sample["value_id"].tolist() == ["v1", "v3"]
    assert list(ledger.audit_sample.columns) == list(ledger.frame.columns)


def test_a_prediction_powered_interval_stays_within_0_and_1() -> None:
    from servicetools.analysis.audit.estimation import prediction_powered

    # The model says 0.99 everywhere, the sample is all right: the corrected mean passes 1.
    value, low, high = prediction_powered(np.full(100, 0.99), np.array([0.9, 0.95]),
                                          np.array([1.0, 1.0]), z=1.645)
    assert value == 1.0 and 0 <= low <= value <= high <= 1


def test_a_plan_ledger_counts_reviews_as_they_are_and_the_audit_for_the_rest(
        reference: pd.DataFrame) -> None:
    covered, proper, misread = [], [], []
    # Three batches, several audit draws of each one's plan: a single draw's error is
    # noise either way, and a 90% interval misses about one draw in ten.
    for batch in (8, 18, 28):
        fields, right, ledger = drawn(2000, seed=batch, honest=0.2)
        for seed in range(6):
            planned = review.plan(fields, budget=0.1, audit=0.1, reference=reference,
                                  seed=seed)
            rows = ledger.set_index("value_id").loc[
                planned.loc[planned["review"] | planned["audit"], "value_id"]].reset_index()
            rows["audit"] = rows["value_id"].isin(planned.loc[planned["audit"], "value_id"])
            row = audit.estimate(fields, reference=reference, sample=rows).loc[audit.ALL]
            # The reviews were chosen for their risk: taken as a sample they mislead.
            biased = audit.estimate(fields, reference=reference,
                                    sample=rows.drop(columns="audit")).loc[audit.ALL]
            assert (row["method"] == "prediction-powered"
                    and row["n_sample"] == rows["audit"].sum())
            assert biased["estimate"] > row["estimate"]
            proper.append(row["estimate"] - right.mean())
            misread.append(biased["estimate"] - right.mean())
            covered.append(row["low"] <= right.mean() <= row["high"])
    assert abs(np.mean(misread)) > 2 * abs(np.mean(proper))
    assert sum(covered) >= 15  # of 18


def test_an_audit_without_errors_keeps_an_interval_and_a_small_one_is_not_trusted(
        reference: pd.DataFrame) -> None:
    fields, right, ledger = drawn(900, seed=9, honest=-1.0)  # every value right
    assert right.all()
    row = audit.estimate(fields, reference=reference,
                         sample=ledger.head(60)).loc["Total"]
    assert row["method"] == "prediction-powered" and row["high"] - row["low"] > 0.01
    few = audit.estimate(fields, reference=reference, sample=ledger.head(9)).loc["Total"]
    assert few["method"] == "confidence" and "fewer than 10" in few["note"]


def _labelled_values(target: str, start: int, confidence: np.ndarray,
                     correct: np.ndarray) -> pd.DataFrame:
    """Field values of one target, all passing validation, with whether each is right."""
    ids = range(start, start + len(confidence))
    return pd.DataFrame({
        "target_name": target, "extraction_id": [f"e{i}" for i in ids],
        "value_id": [f"{target}{i}" for i in ids], "value": "x", "confidence": confidence,
        "validation_passed": True, "correct": correct})


def _rated_values(rng: np.random.Generator, target: str, n: int, rate: float,
                  confidence: tuple[float, float], start: int = 0) -> pd.DataFrame:
    """Labelled values right at `rate` whatever their confidence, drawn around
    `confidence` (mean, standard deviation)."""
    drawn = np.clip(rng.normal(*confidence, n), 0.5, 0.99)
    return _labelled_values(target, start, drawn, rng.random(n) < rate)


def _shifted_values(rng: np.random.Generator, target: str, n: int, shift: float,
                    start: int = 0) -> pd.DataFrame:
    """Labelled values whose confidence is off by `shift` in log-odds."""
    confidence = np.clip(rng.beta(6, 1.2, n), 0.05, 0.99)
    p = 1 / (1 + np.exp(-(np.log(confidence / (1 - confidence)) + shift)))
    return _labelled_values(target, start, confidence, rng.random(n) < p)


def _as_reference(labelled: pd.DataFrame) -> pd.DataFrame:
    """Labelled values as a reference of graded values (`audit.estimate`'s reference)."""
    return pd.DataFrame({
        "target": labelled["target_name"], "value_id": labelled["value_id"],
        "confidence": labelled["confidence"], "passed": pd.array([True] * len(labelled)),
        "filled": True, "correct": pd.array(labelled["correct"], dtype="boolean")})


def test_a_target_with_its_own_labels_in_the_reference_is_not_pulled_to_the_pool() -> None:
    # Two targets of the same confidence: Total right 90% of the time, Date far less. Forty
    # labels of Date are evidence enough: its estimate follows them, not the pooled model
    # (a ridge worth five labels, not thirty to fifty).
    rng = np.random.default_rng(0)

    def values(target: str, n: int, rate: float, start: int = 0) -> pd.DataFrame:
        return _rated_values(rng, target, n, rate, (0.9, 0.03), start)

    labelled = pd.concat([values("Total", 300, 0.9), values("Date", 40, 0.6)],
                         ignore_index=True)
    reference = _as_reference(labelled)
    own = labelled.loc[labelled["target_name"] == "Date", "correct"].mean()
    batch = values("Date", 200, 0.6, start=1000).drop(columns="correct")
    row = audit.estimate(batch, reference=reference).loc["Date"]
    assert abs(row["estimate"] - own) < 0.03 and row["reliable"]


def test_a_target_the_reference_lacks_gets_the_spread_of_targets_calibration() -> None:
    # Six targets whose confidence is off by -1.5 to +1.5 in log-odds; a seventh, which
    # the reference lacks, is off by -1.2: the pooled model cannot know, so its interval
    # must be as wide as targets' calibration differs, not the binomial noise alone.
    rng = np.random.default_rng(0)

    def values(target: str, n: int, shift: float, start: int = 0) -> pd.DataFrame:
        return _shifted_values(rng, target, n, shift, start)

    labelled = pd.concat([values(t, 80, s) for t, s in zip(
        "ABCDEF", (-1.5, -0.75, 0.0, 0.0, 0.75, 1.5), strict=True)], ignore_index=True)
    reference = _as_reference(labelled)
    model = ErrorModel.fit(reference)
    assert 0.3 < model.spread < 4
    # A target with its own 80 labels is settled: little of the spread is left to it.
    assert model.offset_variance("A") < 0.05 * model.spread
    assert model.offset_variance("New") == model.spread
    batch = values("New", 400, -1.2, start=1000)
    row = audit.estimate(batch.drop(columns="correct"), reference=reference).loc["New"]
    assert row["low"] <= batch["correct"].mean() <= row["high"] and not row["reliable"]


def test_an_all_right_target_of_the_reference_does_not_run_to_certainty() -> None:
    # A reference right 96% of the time, one of whose targets has no error in 24 labels:
    # no error in 24 is not certainty, and the estimate keeps a chance of one.
    rng = np.random.default_rng(0)

    def values(target: str, n: int, rate: float, start: int = 0) -> pd.DataFrame:
        return _rated_values(rng, target, n, rate, (0.95, 0.02), start)

    labelled = pd.concat([values("Total", 200, 0.96), values("Date", 24, 1.0)],
                         ignore_index=True)
    reference = _as_reference(labelled)
    batch = values("Date", 40, 1.0, start=1000).drop(columns="correct")
    row = audit.estimate(batch, reference=reference).loc["Date"]
    assert row["estimate"] < 0.99 and row["high"] - row["low"] > 0.02


def test_a_shrunk_model_holds_each_offset_where_a_refit_under_that_ridge_puts_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # review.plan ranks with offsets under a stronger ridge than the estimate's; shrinking
    # a fitted model must give what fitting under that ridge gives, a target with few
    # labels moving most of the way back to the pool and one with many barely.
    from servicetools.analysis.audit import estimation

    rng = np.random.default_rng(0)
    reference = _as_reference(pd.concat(
        [_shifted_values(rng, "Few", 12, -1.5), _shifted_values(rng, "Many", 400, -1.0),
         _shifted_values(rng, "Pool", 400, 0.5)], ignore_index=True))
    model = ErrorModel.fit(reference)
    shrunk = model.shrunk(30.0)
    monkeypatch.setattr(estimation, "_TARGET_RIDGE", 30.0)
    refit = ErrorModel.fit(reference)
    assert shrunk.intercept == pytest.approx(refit.intercept, abs=0.1)
    for target in ("Few", "Many", "Pool"):
        assert shrunk.targets[target] == pytest.approx(refit.targets[target], abs=0.1)
    assert abs(shrunk.targets["Few"]) < 0.5 * abs(model.targets["Few"])
    assert shrunk.targets["Many"] == pytest.approx(model.targets["Many"], rel=0.25)
    assert model.shrunk(model.ridge) is model


def test_an_audit_that_misses_the_rare_confident_errors_still_covers() -> None:
    from servicetools.analysis.audit.estimation import prediction_powered

    # The model doubts values that are right (0.9) and is sure of two that are wrong:
    # most audits of 30 miss both, and their residuals alone show almost no spread.
    p = np.array([0.01] * 5 + [0.9] * 50 + [0.99] * 65)
    y = np.ones(120)
    y[[0, 1, 2, 3, 4, 5, 55]] = 0
    rng = np.random.default_rng(0)
    covered = 0
    for _ in range(1000):
        drawn = rng.choice(120, 30, replace=False)
        _, low, high = prediction_powered(p, p[drawn], y[drawn], z=1.645)
        covered += low <= y.mean() <= high
    assert covered >= 850  # a 90% interval; the sample's variance alone covers 70%


def _narrow_reference() -> pd.DataFrame:
    """Labelled values whose confidence lies in a narrow band (0.9, sd 0.02): Total right
    95% of the time, Date 40% (60 labels), Vendor 40% but with only 12 labels."""
    rng = np.random.default_rng(3)
    return pd.concat([
        _rated_values(rng, "Total", 300, 0.95, (0.9, 0.02)),
        _rated_values(rng, "Date", 60, 0.4, (0.9, 0.02), start=1000),
        _rated_values(rng, "Vendor", 12, 0.4, (0.9, 0.02), start=2000)], ignore_index=True)


def test_an_error_model_fits_a_reference_whose_confidence_lies_in_a_narrow_band() -> None:
    # Confidence nearly constant makes the intercept and its slope nearly collinear: a
    # full Newton step overshot and the fit ran off (intercept 2e11, every p_wrong 0).
    labelled = _narrow_reference()
    model = ErrorModel.fit(_as_reference(labelled))
    assert abs(model.intercept) < 10 and abs(model.coef["logit_confidence"]) < 10
    batch = _labelled_values("Date", 5000, np.full(200, 0.9), np.zeros(200, bool))
    row = audit.estimate(batch.drop(columns="correct"),
                         reference=_as_reference(labelled)).loc["Date"]
    own = labelled.loc[labelled["target_name"] == "Date", "correct"].mean()
    assert abs(row["estimate"] - own) < 0.1


def test_the_plan_ranks_by_an_offset_only_where_the_reference_has_labels_enough() -> None:
    # Date's 60 labels are evidence that its values are wrong more often than their
    # confidence says: its value goes first. Vendor's 12 are fewer than the 30
    # `estimate` needs to call a target's estimate reliable: its value is ranked at the
    # pool's level, as a target the reference lacks would be.
    reference = ErrorModel.fit(_as_reference(_narrow_reference()))
    assert reference.n["Vendor"] == 12 and reference.targets["Vendor"] < -0.3
    batch = pd.concat([
        _labelled_values("Total", 5000, np.array([0.86, 0.80]), np.array([True, True])),
        _labelled_values("Date", 6000, np.array([0.86]), np.array([True])),
        _labelled_values("Vendor", 7000, np.array([0.86]), np.array([True])),
        _labelled_values("Phone", 8000, np.array([0.86]), np.array([True]))],
        ignore_index=True).drop(columns="correct")
    planned = review.plan(batch, budget=4, audit=0, reference=reference)
    assert planned["value_id"].iloc[0] == "Date6000"
    p = planned.set_index("value_id")["p_wrong"]
    assert p["Vendor7000"] == pytest.approx(p["Phone8000"], abs=1e-6)
    assert p["Total5000"] < p["Vendor7000"] < p["Date6000"]
