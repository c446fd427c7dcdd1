"""Validation rules mined from right values, each measured where it was not mined.

For a target, the documents are split in two by a hash of their file name: rules are mined
from the right values of one part and judged on the other (so a rule that merely lists
what it saw shows its false alarms). Each suggestion is a D10 rule group:

- ``date``: the strptime formats that read the printed dates (greedy: the format that
  reads most of the dates not yet read, until all are), with the shapes of dates no
  format reads (month names in other languages: "29 maart 2014", "7. Mai 2014") as a
  regex beside it;
- ``shape``: a regex of the values' shapes (runs of digits and letters with their
  lengths, punctuation as printed), when a few shapes cover the values;
- ``length``: the range of lengths, widened a little;
- ``amount``: an amount;
- ``enumeration``: one of a few values, each seen more than once;
- ``required``: not empty, when no right value is blank (the target is always there);
- ``combined``: every group above that keeps to the false-alarm limit, together.

Without truth, rules are mined from the values read with high confidence and judged
on the other part's confident values (false alarms only; catches need truth), and
marked so.

>>> import pandas as pd
>>> rows = pd.DataFrame({"document": [f"d{i}" for i in range(40)], "target": "No",
...                      "value": [f"INV-{1000 + 7 * i}" for i in range(40)],
...                      "kind": "right", "confidence": 0.9})
>>> found = suggest(rows)
>>> found.loc[found["kind"] == "shape", "rules"].item()
'regex [A-Z]{2,5}-\\\\d{3,5}'
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...wire.values import parse_amount, parse_date
from .detectors import describe_rule, group_passes

__all__ = ["DATE_CANDIDATES", "SUGGESTION_COLUMNS", "halves", "mine", "suggest"]

#: The columns of `suggest`'s frame, one row per mined rule group.
SUGGESTION_COLUMNS: tuple[str, ...] = (
    "target", "kind", "rules", "group", "groups", "mined_from", "n_mined", "n_right_held",
    "false_alarms", "false_alarm_rate", "n_wrong_held", "catches", "catch_rate", "meets",
    "best")
#: Printed date formats tried on right values, the commonest first (ties go to the
#: earlier: day first before month first, as most of the world writes).
DATE_CANDIDATES: tuple[str, ...] = tuple(
    [f"%d{s}%m{s}%Y" for s in "./-"] + [f"%m{s}%d{s}%Y" for s in "/.-"]
    + ["%Y-%m-%d", "%Y/%m/%d", "%Y.%m.%d"]
    + [f"%d{s}%m{s}%y" for s in "./-"] + [f"%m{s}%d{s}%y" for s in "/.-"]
    + ["%d %b %Y", "%d %B %Y", "%d-%b-%Y", "%d-%b-%y", "%d %b %y", "%b %d, %Y", "%B %d, %Y",
       "%b %d %Y", "%B %d %Y", "%d. %B %Y", "%d. %b %Y", "%d %b, %Y", "%d %B, %Y",
       "%A, %B %d, %Y", "%B %Y", "%d/%b/%Y"])
#: The false-alarm rate on held-back right values a suggestion must keep to.
MAX_FALSE_ALARMS = 0.02
_MIN_VALUES = 5  # mined values below which a target gets no suggestion
_MAX_SHAPES = 8  # shapes a regex may list before the values count as free text
_SHAPE_COVER = 0.95  # of the mined values the listed shapes must cover
_MAX_CHOICES = 8  # distinct values an enumeration may hold
_SPECIAL = set(".^$*+?{}[]\\|()")  # what a literal needs escaped (re.escape does more)
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
_TOKEN = re.compile(r"\d+|[^\W\d_]+|\s+|.", re.UNICODE)


def _digest(document: Any) -> str:
    # The file name, not its folder: the same documents split alike wherever they were
    # read from (a batch names them by the path they were given).
    name = str(document).replace("\\", "/").rsplit("/", 1)[-1]
    return hashlib.sha256(name.encode()).hexdigest()


def halves(documents: Sequence[Any]) -> dict[Any, str]:
    """``"mine"`` or ``"held"`` for each document: ordered by the SHA-256 of its file
    name, the first half (rounded up) is mined and the rest held back, so a small batch
    splits evenly and the same documents split the same way every time."""
    ordered = sorted(dict.fromkeys(documents), key=lambda d: (_digest(d), str(d)))
    cut = (len(ordered) + 1) // 2
    return {d: "mine" if i < cut else "held" for i, d in enumerate(ordered)}


# -- miners: values -> one rule group (or None) ------------------------------------------
def _date_group(values: Sequence[str]) -> dict[str, Any] | None:
    readable = {f: {i for i, v in enumerate(values) if parse_date(v, [f]) is not None}
                for f in DATE_CANDIDATES}
    read_any = set().union(*readable.values())
    if len(read_any) < 0.5 * len(values):
        # Printed in a language strptime does not read ("29 maart 2014"): their shape,
        # where nearly all of them carry a year.
        dated = sum(_YEAR.search(v) is not None for v in values)
        shape = _shape_pattern(values) if dated >= 0.9 * len(values) else None
        return None if shape is None else {
            "name": "date format (mined)", "rules": [{"type": "regex", "pattern": shape}]}
    chosen: list[str] = []
    left = set(read_any)
    while left:
        best = max(DATE_CANDIDATES, key=lambda f: len(readable[f] & left))
        if not readable[best] & left:
            break
        chosen.append(best)
        left -= readable[best]
    rules: list[dict[str, Any]] = [{"type": "date", "formats": chosen}]
    unread = [v for i, v in enumerate(values) if i not in read_any]
    if unread:
        shape = _shape_pattern(unread, cover=1.0)
        if shape is not None:
            rules.append({"type": "regex", "pattern": shape})
    return {"name": "date format (mined)", "rules": rules}


def _runs(value: str) -> list[tuple[str, str]]:
    """A value as runs: ("d", digits), ("a", letters), (" ", spaces), ("p", one char)."""
    out = []
    for token in _TOKEN.findall(value):
        if token.isdigit():
            out.append(("d", token))
        elif token.isspace():
            out.append((" ", token))
        elif token.isalpha():
            out.append(("a", token))
        else:
            out.append(("p", token))
    return out


def _shape_pattern(values: Sequence[str], cover: float = _SHAPE_COVER) -> str | None:
    """A regex listing the values' shapes, or None when they are too many to list."""
    shapes: dict[tuple[tuple[str, str], ...], list[list[str]]] = {}
    for value in values:
        runs = _runs(value.strip())
        key = tuple((c, t if c == "p" else "") for c, t in runs)
        shapes.setdefault(key, []).append([t for _, t in runs])
    ranked = sorted(shapes.items(), key=lambda kv: -len(kv[1]))[:_MAX_SHAPES]
    if sum(len(v) for _, v in ranked) < cover * len(values):
        return None
    patterns = []
    for key, seen in ranked:
        parts = []
        for i, (cls, literal) in enumerate(key):
            tokens = [runs[i] for runs in seen]
            lo, hi = min(map(len, tokens)), max(map(len, tokens))
            if cls == "d":
                parts.append(rf"\d{{{max(1, lo - 1)},{hi + 1}}}")
            elif cls == "a":
                upper = all(t.isascii() and t.isupper() for t in tokens)
                letters = "[A-Z]" if upper else r"[^\W\d_]"
                parts.append(f"{letters}{{{max(1, lo - 1)},{hi + 2}}}")
            elif cls == " ":
                parts.append(r"\s+")
            else:
                parts.append("\\" + literal if literal in _SPECIAL else literal)
        patterns.append("".join(parts))
    return patterns[0] if len(patterns) == 1 else "(?:" + "|".join(patterns) + ")"


def _shape_group(values: Sequence[str]) -> dict[str, Any] | None:
    pattern = _shape_pattern(values)
    if pattern is None:
        return None
    return {"name": "shape (mined)", "rules": [{"type": "regex", "pattern": pattern}]}


def _length_group(values: Sequence[str]) -> dict[str, Any] | None:
    lengths = [len(v.strip()) for v in values]
    lo, hi = max(1, math.floor(min(lengths) * 0.8)), math.ceil(max(lengths) * 1.25)
    return {"name": "length (mined)", "rules": [{"type": "length", "min": lo, "max": hi}]}


def _amount_group(values: Sequence[str]) -> dict[str, Any] | None:
    # D10's amount rule takes no bounds (a number rule does, but refuses currency signs).
    amounts = [parse_amount(v) for v in values]
    if sum(a is not None for a in amounts) < 0.95 * len(values):
        return None
    return {"name": "amount (mined)", "rules": [{"type": "amount"}]}


def _enumeration_group(values: Sequence[str]) -> dict[str, Any] | None:
    counts = Counter(v.strip().casefold() for v in values)
    if len(counts) > _MAX_CHOICES or len(values) < 10 or min(counts.values()) < 2:
        return None
    firsts: dict[str, str] = {}
    for v in values:
        firsts.setdefault(v.strip().casefold(), v.strip())
    return {"name": "one of (mined)", "rules": [
        {"type": "one_of", "values": sorted(firsts.values()), "case_sensitive": False}]}


_MINERS: dict[str, Callable[[Sequence[str]], dict[str, Any] | None]] = {
    "date": _date_group, "amount": _amount_group, "enumeration": _enumeration_group,
    "shape": _shape_group, "length": _length_group,
}


def mine(values: Sequence[str], *, blanks: int = 0) -> dict[str, dict[str, Any]]:
    """The rule groups each miner makes of ``values`` (right values), by kind; with no
    ``blanks`` among the right values (the target is always there), ``required`` too."""
    filled = [v for v in values if isinstance(v, str) and v.strip()]
    if len(filled) < _MIN_VALUES:
        return {}
    found = {}
    for kind, miner in _MINERS.items():
        group = miner(filled)
        if group is not None:
            found[kind] = group
    # Last: among rules that catch as much, one that checks the value comes first.
    if not blanks and len(filled) == len(values):
        found["required"] = {"name": "required (mined)", "rules": [{"type": "not_empty"}]}
    return found


# -- measured on the held-back part -------------------------------------------------------
def _measure(passes: np.ndarray, good: np.ndarray, bad: np.ndarray, held: np.ndarray,
             labelled: bool) -> dict[str, Any]:
    n_right, n_wrong = int((good & held).sum()), int((bad & held).sum())
    alarms, catches = int((~passes & good & held).sum()), int((~passes & bad & held).sum())
    rate = alarms / n_right if n_right else np.nan
    return {"n_right_held": n_right, "false_alarms": alarms, "false_alarm_rate": rate,
            "n_wrong_held": n_wrong if labelled else 0, "catches": catches if labelled else 0,
            "catch_rate": catches / n_wrong if labelled and n_wrong else np.nan,
            "meets": bool(n_right and rate <= MAX_FALSE_ALARMS)}


def suggest(rows: pd.DataFrame, *, confident: float = 0.9) -> pd.DataFrame:
    """Rule groups mined per target, columns `SUGGESTION_COLUMNS`.

    ``rows``: ``document``, ``target``, ``value``, ``kind`` (`error_kinds.kinds`) and
    ``confidence``. With truth (some ``kind`` is not ``unlabelled``), mined from right
    values and judged, as the service would validate, on every held-back value: a right
    one failed is a false alarm (a blank right value fails every rule but ``required``'s
    absence: D10 has no rule that accepts a blank), a wrong one failed (missed ones too)
    a catch. Without truth, mined from values of at least ``confident`` confidence and
    judged on the held-back ones. ``meets``: at most 2% false alarms. ``groups`` holds
    the row's groups; a ``combined`` row holds every group of the target that meets it,
    judged together. ``best`` marks, per target, the row that catches most among those
    that meet it (without truth: the first that meets it).
    """
    out: list[dict[str, Any]] = []
    labelled = bool((rows["kind"].astype(object) != "unlabelled").any()) if len(rows) else False
    for target, part in rows.groupby("target", sort=False, observed=True):
        values = part["value"].astype(object).where(part["value"].notna(), "").astype(str)
        filled = (values.str.strip() != "").to_numpy()
        kind = part["kind"].astype(object).to_numpy()
        if labelled:
            good = kind == "right"
            source = "right values"
        else:
            confidence = pd.to_numeric(part["confidence"], errors="coerce").to_numpy(float)
            good = (np.nan_to_num(confidence, nan=0.0) >= confident) & filled
            source = f"values of confidence >= {confident:g} (no truth)"
        bad = np.isin(kind, ["missed", "spurious", "format_only", "other_target", "wrong"])
        split = halves(list(part["document"]))
        held = (part["document"].map(split) == "held").to_numpy()
        array = values.to_numpy(dtype=object)
        blanks = int((good & ~held & ~filled).sum()) if labelled else 1
        mined = mine(list(array[good & ~held]), blanks=blanks)
        passing: list[tuple[dict[str, Any], np.ndarray]] = []
        for mined_kind, group in mined.items():
            passes = group_passes(array, group)
            figures = _measure(passes, good, bad, held, labelled)
            if figures["meets"]:
                passing.append((group, passes))
            out.append({"target": str(target), "kind": mined_kind,
                        "rules": " | ".join(describe_rule(r) for r in group["rules"]),
                        "group": group, "groups": [group], "mined_from": source,
                        "n_mined": int((good & ~held).sum()), **figures, "best": False})
        if len(passing) > 1:
            together = np.logical_and.reduce([p for _, p in passing])
            out.append({"target": str(target), "kind": "combined",
                        "rules": " & ".join(f"({describe_rule(r)})" for g, _ in passing
                                            for r in g["rules"][:1]),
                        "group": None, "groups": [g for g, _ in passing],
                        "mined_from": source, "n_mined": int((good & ~held).sum()),
                        **_measure(together, good, bad, held, labelled), "best": False})
    table = pd.DataFrame(out, columns=list(SUGGESTION_COLUMNS))
    for _, part in table.groupby("target", sort=False):
        meeting = part.loc[part["meets"]]
        if meeting.empty:
            continue
        best = (meeting["catch_rate"].fillna(-1).idxmax() if labelled
                else meeting.index[0])
        table.loc[best, "best"] = True
    return table
