"""Confidence that means what it says: raw scores mapped to the share of values that are right.

The engine's raw score of a value multiplies what speaks for it (label match, placement,
shape, validation, OCR certainty, rivals). Its scale differs by kind of field: a date
found by shape alone at 0.4 is right far more often than a name found at 0.4. So each
kind, and within it words read by OCR apart from words of a text layer, has its own
monotone map from raw score to probability, fitted by isotonic
regression on real documents with ground truth (receipts, invoices in six languages,
and the bundled sample) and shipped as ``calibration.json`` beside this module.

``make train`` fits it again from the development sets (bench/train.py); the bench
reports the figures cross-validated (fitted on k-1 folds, scored on the held one).

Table cells have a model of their own, ``cells``: a logistic model over how each cell
was read (by a finder's table, candidates.py, or by the engine's own header-band reader,
tables.py), what its row, column and table look like, and whether the other reader
agrees (groups.py), fitted on the table sets (ICDAR 2013, camelot's tests, real/'s
table documents) read as text and as scans.
"""

from __future__ import annotations

import bisect
import json
import math
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["CELL_UNFITTED", "KINDS", "UNGROUNDED_CEILING", "calibrated", "cell_confidence",
           "features", "grounded", "load_map"]

#: The kinds a map exists for; any other kind uses the "all" map.
KINDS = ("address", "amount", "code", "date", "name", "number", "text")
_FILE = "calibration.json"
# Never certain, never impossible: a fitted 0 or 1 only says the sample was small.
_FLOOR, _CEILING = 0.02, 0.98
# A value no label or title grounds (a letterhead taken for the issuer, a date by its
# shape alone, a value read from a sentence) is never given 0.9 or more: on the dev sets
# such values were right as often as labelled ones, but off them a heading read as the
# issuer came back at 0.94-0.97 (issue 29), and analysts auto-accept at 0.9.
UNGROUNDED_CEILING = 0.88
# A party's name under a label of its role alone, not of the user's words ("Buyer" for a
# target named "Advertiser"), is grounded no better: on ad orders the buyer is the
# agency's, and every such value of the dev sets (4 on tuning halves, 5 on check halves,
# over three sets) was wrong.
_GROUNDS = ("labelled", "titled")
# Evidence that keeps a grounded value under 0.9 all the same: a party by its role's
# label alone (above), a subtotal, tax and total that do not add up (one of the
# three at least is wrong, and nothing says which), and a value under a label naming
# what the target's own words say it is not ("Net Total" for a gross amount described
# as "not the smaller net amount"): taken where nothing else is labelled, it was the net
# on one of the two such values of adforms-dev's tuning half. And words that go on a
# colon-less label's own phrase (fields._runs_on): under the rename bench's names, all 9
# such values of the tuning halves were the rest of a longer label ("Types" of "Account
# Types" for a target named "Account", at 0.98); the bundled names meet none. And an
# amount under its role's label said of something the target's words do not name
# ("Total Charges 275.00" for a "Balance Due", 0.95 where the balance was $85.00), its
# words between label and amount: over every real set and the bundled sample, 3 of such
# 4 values were right ("Total Gross Regular Price if paying by credit card: $42,230.00"
# was not the gross), all 4 at 0.9 or more. And an amount no number can be read from
# ("1.800.36": OCR ran "1,88" and "0,36" together under a VAT summary's "Steuer", 0.93
# on a drawn receipt scanned); no value of the real sets or the bundled sample is one.
_DOUBTS = ("avoided", "other_words", "party_by_role", "run_on", "sums_not", "unread")
#: Evidence of a cell that is no input of the ``cells`` model.
CELL_UNFITTED = ("raw",)


@cache
def load_map() -> dict[str, Any]:
    """The shipped map: {"kinds": {kind: {"x": [...], "y": [...]}}, "fitted_on": ...}."""
    path = resources.files(__package__).joinpath(_FILE)
    if not path.is_file():
        return {"kinds": {}}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def grounded(evidence: dict[str, float]) -> bool:
    """Whether a label or a title grounds the value (`_GROUNDS`)."""
    return any(evidence.get(ground) for ground in _GROUNDS)


def features(raw: float, evidence: dict[str, float]) -> dict[str, float]:
    """The logistic model's inputs: the raw score's log-odds and how the value was found,
    and for words read by OCR each piece of evidence again as ``name*ocr``.

    Evidence weighs differently on OCR words: a value under its label, or a letterhead
    in large type, is as likely found but less likely read letter for letter. With
    these inputs the 5-fold Brier score fell on every real set (SROIE 0.128 -> 0.127,
    invoices-dev 0.045 -> 0.040, real/ 0.066 -> 0.060).
    """
    clipped = min(1 - 1e-3, max(1e-3, raw))
    inputs = {"logit_raw": math.log(clipped / (1 - clipped)), **evidence}
    if evidence.get("ocr"):
        inputs.update({f"{name}*ocr": value for name, value in evidence.items()
                       if name != "ocr" and value})
    return inputs


def calibrated(kind: str, raw: float, table: dict[str, Any] | None = None,
               evidence: dict[str, float] | None = None) -> float:
    """The probability that a value of this kind with this raw score is right.

    With `evidence` (how the value was found: labelled, by a translated label, below
    its label, with rivals, the issuer's name, by shape alone; its kind and whether
    OCR read it) and a map holding a ``logistic`` model, that model decides.
    Otherwise `kind` is a field kind, optionally with how its words were read:
    "date:ocr", "name:text", and the most specific step map present applies.
    """
    table = table or load_map()
    model = table.get("logistic")
    if evidence is not None and model:
        weights = model["coef"]
        score = model["intercept"] + sum(
            weights.get(name, 0.0) * value for name, value in features(raw, evidence).items())
        value = 1 / (1 + math.exp(-max(-30.0, min(30.0, score))))
        if not grounded(evidence) or any(evidence.get(doubt) for doubt in _DOUBTS):
            value = min(value, UNGROUNDED_CEILING)
        return round(min(_CEILING, max(_FLOOR, value)), 4)
    kinds = table.get("kinds", {})
    # "date:ocr" falls back to "date", then to the pooled map.
    knots = kinds.get(kind) or kinds.get(kind.split(":")[0]) or kinds.get("all")
    if not knots or not knots["x"]:
        return raw
    xs, ys = knots["x"], knots["y"]
    if raw <= xs[0]:
        value = ys[0]
    elif raw >= xs[-1]:
        value = ys[-1]
    else:
        right = bisect.bisect_right(xs, raw)
        x0, x1, y0, y1 = xs[right - 1], xs[right], ys[right - 1], ys[right]
        value = y0 if x1 == x0 else y0 + (y1 - y0) * (raw - x0) / (x1 - x0)
    return round(min(_CEILING, max(_FLOOR, float(value))), 4)


def cell_confidence(evidence: dict[str, float], raw: float,
                    table: dict[str, Any] | None = None) -> float:
    """The probability that a found table's cell is right, from how it was read.

    The ``cells`` model of the map (a logistic model over the cell's evidence, fitted
    on the table sets by ``make train``) decides; without one, `raw`. The evidence's
    ``raw`` (its reader's score) is kept to compare with, no input. The table sets have
    no column rules to learn from: a cell its column's rules refuse (``invalid``) keeps
    at most its reader's score, which counts the refusal.
    """
    model = (table or load_map()).get("cells")
    if not model:
        return round(raw, 4)
    score = model["intercept"] + sum(
        model["coef"].get(name, 0.0) * value for name, value in evidence.items()
        if name not in CELL_UNFITTED)
    value = 1 / (1 + math.exp(-max(-30.0, min(30.0, score))))
    if evidence.get("invalid"):
        value = min(value, raw)
    return round(min(_CEILING, max(_FLOOR, value)), 4)
