"""The few-labels bench (bench/estimate.py), checked without the real sets: its four
sections on a table of values drawn so that their truth is known."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import estimate  # noqa: E402


def _table(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for name in ("one-dev", "two-dev", "three-dev"):
        for i in range(150):
            confidence = float(np.clip(rng.beta(5, 1.3), 0.01, 0.99))
            right = bool(rng.random() < confidence)
            target = ("Total", "Date")[i % 2]
            rows.append({"set": name, "extraction_id": f"{name}/d{i // 2}",
                         "document_name": f"{name}/d{i // 2}", "target_name": f"c / {target}",
                         "value_id": f"{name}/{i}", "value": "ok" if right else "no",
                         "confidence": confidence,
                         "validation_passed": bool(right or rng.random() < 0.5),
                         "correct": right})
    return pd.DataFrame(rows)


def test_the_sections_measure_what_they_say() -> None:
    table = _table()
    text, medians = estimate.estimates(table)
    assert set(medians) == {"one-dev", "two-dev", "three-dev"}
    assert all(0 <= m < 0.15 for m in medians.values()) and "sampling noise" in text
    inside = re.fullmatch(r"measured accuracy inside the estimate's 90% interval: "
                          r"(\d+) of 6 targets \(\d+%\)", text.splitlines()[-1])
    assert inside and int(inside[1]) >= 4  # the drawn values are calibrated
    audited = estimate.audits(table, runs=50, seed=1)
    assert "covered" in audited and "one-dev / c / Total" in audited
    # Beside the model's intervals, those of a perfect calibration of the confidence.
    best = audited.splitlines()[-1]
    assert best.startswith("what confidence can give at best") and "width ratio" in best
    planned = estimate.plans(table, seed=1)
    assert planned.splitlines()[-1].endswith("none")  # the plan beats random on drawn data
    assert "100.0% of 2 targets" in estimate.repeat(table, table.copy())


def test_the_noise_floor_shrinks_with_n() -> None:
    assert estimate._noise(10, 0.8) > estimate._noise(1000, 0.8) > 0
