"""What kind of error each graded value is: the doctor's first question about a target.

A value that is not right is one of (Stickler's split, plus two that point at a cause):

- ``missed``: the truth has a value and none was read;
- ``spurious``: a value was read where the truth is empty;
- ``format_only``: equal to the truth once normalised (dates, amounts, case, spaces),
  not as compared: the value is there, its form is not;
- ``other_target``: equal (normalised) to the truth of another target of the same
  document: the engine read the wrong one of two labelled values;
- ``wrong``: any other value.

>>> import pandas as pd
>>> rows = pd.DataFrame({"document": ["a"] * 4, "target": ["Date", "Due", "Total", "No"],
...                      "value": ["2024-03-01", "01.03.2024", "", "7"],
...                      "expected": ["01.03.2024", "2024-04-01", "9.00", ""],
...                      "correct": [False, False, False, False]})
>>> kinds(rows)["kind"].tolist()
['format_only', 'other_target', 'missed', 'spurious']
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .normalisation import normalize_series

__all__ = ["ERROR_KINDS", "KINDS", "kinds"]

#: The kinds of a value that is not right, most telling first.
ERROR_KINDS: tuple[str, ...] = ("missed", "spurious", "format_only", "other_target", "wrong")
#: Every kind `kinds` gives: ``right``, the error kinds, and ``unlabelled`` (no truth).
KINDS: tuple[str, ...] = ("right", *ERROR_KINDS, "unlabelled")


def _blank(values: pd.Series) -> np.ndarray:
    return (values.astype(object).where(values.notna(), "").astype(str).str.strip() == ""
            ).to_numpy(dtype=bool)


def kinds(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (``document``, ``target``, ``value``, ``expected``, ``correct``) with
    ``kind`` (one of `KINDS`) and ``other`` (the target whose truth an ``other_target``
    value equals)."""
    out = rows.copy()
    value_blank, expected_blank = _blank(out["value"]), _blank(out["expected"])
    labelled = out["correct"].notna().to_numpy(dtype=bool)
    correct = out["correct"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    value_n = normalize_series(out["value"].astype(object), "all").astype(object)
    expected_n = normalize_series(out["expected"].astype(object), "all").astype(object)
    same = (value_n.to_numpy() == expected_n.to_numpy()) & ~value_blank
    other = _other_targets(out, value_n, expected_n, expected_blank)
    kind = np.select(
        [~labelled, correct, ~expected_blank & value_blank, expected_blank & ~value_blank,
         same, pd.notna(other)],
        ["unlabelled", "right", "missed", "spurious", "format_only", "other_target"],
        default="wrong")
    out["kind"] = pd.Categorical(kind, categories=list(KINDS))
    out["other"] = pd.array(other, dtype="string")
    return out


def _other_targets(rows: pd.DataFrame, value_n: pd.Series, expected_n: pd.Series,
                   expected_blank: np.ndarray) -> np.ndarray:
    """For each row, another target of its document whose truth equals its value."""
    truths: dict[tuple[Any, str], str] = {}
    documents = rows["document"].astype(object).to_numpy()
    targets = rows["target"].astype(object).astype(str).to_numpy()
    for doc, target, expected, blank in zip(documents, targets, expected_n.to_numpy(),
                                            expected_blank, strict=True):
        if not blank:
            truths.setdefault((doc, str(expected)), target)
    found = np.full(len(rows), None, dtype=object)
    for i, (doc, target, value) in enumerate(zip(documents, targets, value_n.to_numpy(),
                                                 strict=True)):
        if isinstance(value, str) and value.strip():
            owner = truths.get((doc, value))
            if owner is not None and owner != target:
                found[i] = owner
    return found
