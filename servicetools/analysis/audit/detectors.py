"""Validation rules judged as detectors of wrong values: false alarms and catches.

A rule group (D10: the value passes when any of its rules passes) is a detector: it
should fail wrong values (a *catch*) and pass right ones (a *false alarm* when it fails
one). Each group of each target's validation tree is run on the values again, through
the wire's rule language (`servicetools.wire.rules`, what the service validates with),
so a changed tree is judged on a saved batch without extracting anything again.

Blank values are judged by ``not_empty`` alone: every other rule fails a blank value
(D10), which says the value is missing, not that the rule can tell right from wrong.

>>> import pandas as pd
>>> rows = pd.DataFrame({"target": ["Date"] * 3, "value": ["2024-01-02", "02.01.2024", "x"],
...                      "kind": ["right", "right", "wrong"]})
>>> tree = {"name": "d", "rule_groups": [{"name": "iso", "rules": [
...     {"type": "date", "formats": ["%Y-%m-%d"]}]}]}
>>> table = detectors(rows, {"Date": tree})
>>> [str(x) for x in table.loc[0, ["group", "false_alarms", "n_right", "catches", "n_wrong",
...                                  "verdict"]]]
['iso', '1', '2', '1', '1', 'useful']
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...wire.rules import rule_passes

__all__ = ["DETECTOR_COLUMNS", "VERDICTS", "describe_rule", "detectors", "group_passes",
           "is_empty_group", "pass_rates"]

#: The columns of `detectors`' frame, one row per rule group of each target's tree.
DETECTOR_COLUMNS: tuple[str, ...] = (
    "target", "group", "position", "rules", "n_values", "fails", "fail_rate", "n_right",
    "false_alarms", "false_alarm_rate", "n_wrong", "catches", "catch_rate", "verdict",
    "false_alarm_examples", "catch_examples")
#: What a group is as a detector, from its counts:
VERDICTS: tuple[str, ...] = (
    "false alarms only",  # fails right values and no wrong one
    "more false alarms",  # fails a larger share of right values than of wrong ones
    "useful",  # catches a larger share of wrong values than it fails right ones
    "never fails",
    "always fails",
    "no labels",  # nothing is known right or wrong (no truth): fail rate only
)
_EXAMPLES = 3


def describe_rule(rule: Mapping[str, Any]) -> str:
    """A rule as a person reads it: ``date %d.%m.%Y or %Y-%m-%d``, ``length <= 12``."""
    kind = rule.get("type")
    if kind == "regex":
        return f"regex {rule.get('pattern')}"
    if kind == "date":
        formats = rule.get("formats") or []
        return "date " + " or ".join(str(f) for f in formats)
    if kind in ("number", "amount", "length"):
        bounds = [f"{'>=' if k == 'min' else '<='} {rule[k]}" for k in ("min", "max")
                  if k in rule]
        return " ".join([str(kind), *bounds])
    if kind == "one_of":
        return "one of " + ", ".join(str(v) for v in rule.get("values") or [])
    if kind == "not_empty":
        return "not empty"
    return json.dumps(dict(rule), sort_keys=True)


def is_empty_group(group: Mapping[str, Any]) -> bool:
    """Whether the group is a bare "not empty" (it judges blank values only)."""
    rules = group.get("rules") or []
    return any(isinstance(r, Mapping) and r.get("type") == "not_empty" for r in rules)


def group_passes(values: np.ndarray, group: Mapping[str, Any]) -> np.ndarray:
    """Whether each value passes the group (any of its rules); blank values too."""
    rules = [r for r in group.get("rules") or [] if isinstance(r, Mapping)]
    if not rules:
        return np.ones(len(values), dtype=bool)
    cache: dict[str, bool] = {}
    out = np.empty(len(values), dtype=bool)
    for i, value in enumerate(values):
        text = value if isinstance(value, str) else ""
        if text not in cache:
            cache[text] = any(rule_passes(text, r) for r in rules)
        out[i] = cache[text]
    return out


def pass_rates(rows: pd.DataFrame, trees: Mapping[str, Any]) -> pd.Series:
    """Per target, the share of ``rows`` (``target``, ``value``) that pass its tree:
    what the service's ``validation_passed`` would say of these values."""
    out = {}
    for target, part in rows.groupby("target", sort=False, observed=True):
        tree = trees.get(str(target))
        values = part["value"].astype(object).to_numpy()
        passed = np.ones(len(values), dtype=bool)
        for group in (tree or {}).get("rule_groups") or []:
            passed &= group_passes(values, group)
        out[str(target)] = float(passed.mean()) if len(values) else np.nan
    return pd.Series(out, name="pass_rate", dtype=float)


def _examples(values: np.ndarray, mask: np.ndarray) -> list[str]:
    return [str(v) for v in pd.unique(values[mask])[:_EXAMPLES]]


def _verdict(n_values: int, fails: int, n_right: int, false_alarms: int, n_wrong: int,
             catches: int) -> str:
    if n_values and fails == 0:
        return "never fails"
    if n_values and fails == n_values and n_right:
        return "always fails"
    if not n_right and not n_wrong:
        return "no labels"
    if false_alarms and not catches:
        return "false alarms only"
    alarm_rate = false_alarms / n_right if n_right else 0.0
    catch_rate = catches / n_wrong if n_wrong else 0.0
    return "more false alarms" if alarm_rate >= catch_rate else "useful"


def detectors(rows: pd.DataFrame, trees: Mapping[str, Any]) -> pd.DataFrame:
    """Each rule group of each target's tree as a detector, columns `DETECTOR_COLUMNS`.

    ``rows``: ``target``, ``value`` and ``kind`` (`error_kinds.kinds`: ``right``, an
    error kind, or ``unlabelled``); ``trees``: validation tree by target. A right value
    the group fails is a false alarm, a wrong one (any error kind) a catch.
    """
    out: list[dict[str, Any]] = []
    for target, part in rows.groupby("target", sort=False, observed=True):
        tree = trees.get(str(target))
        groups = (tree or {}).get("rule_groups") or []
        values = part["value"].astype(object).to_numpy()
        kind = part["kind"].astype(object).to_numpy()
        filled = np.array([isinstance(v, str) and v.strip() != "" for v in values])
        for position, group in enumerate(groups):
            if not isinstance(group, Mapping):
                continue
            judged = np.ones(len(values), dtype=bool) if is_empty_group(group) else filled
            failed = ~group_passes(values, group) & judged
            right = (kind == "right") & judged
            wrong = np.isin(kind, ["missed", "spurious", "format_only", "other_target",
                                   "wrong"]) & judged
            counts = {"n_values": int(judged.sum()), "fails": int(failed.sum()),
                      "n_right": int(right.sum()), "false_alarms": int((failed & right).sum()),
                      "n_wrong": int(wrong.sum()), "catches": int((failed & wrong).sum())}
            out.append({
                "target": str(target), "group": str(group.get("name") or f"#{position}"),
                "position": position,
                "rules": " | ".join(describe_rule(r) for r in group.get("rules") or []
                                    if isinstance(r, Mapping)),
                **counts,
                "fail_rate": counts["fails"] / counts["n_values"] if counts["n_values"]
                else np.nan,
                "false_alarm_rate": counts["false_alarms"] / counts["n_right"]
                if counts["n_right"] else np.nan,
                "catch_rate": counts["catches"] / counts["n_wrong"] if counts["n_wrong"]
                else np.nan,
                "verdict": _verdict(**counts),
                "false_alarm_examples": _examples(values, failed & right),
                "catch_examples": _examples(values, failed & wrong),
            })
    return pd.DataFrame(out, columns=list(DETECTOR_COLUMNS))
