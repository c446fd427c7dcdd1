"""`doctor`: what is wrong with a configuration, what to change, and what it would do.

From a saved batch (or its frames) and, better, its truth or a corrections ledger, and
the configuration it was extracted with:

- ``errors``: per target, its values by kind (`error_kinds`): right, missed, spurious,
  format only, another target's value, wrong, with examples;
- ``detectors``: each rule group of each validation tree as a detector of wrong values
  (`detectors`): false alarms on right values and catches of wrong ones, with n;
- ``suggestions``: rule groups mined from right values, measured on documents they
  were not mined from (`suggestions`);
- ``findings``: per target, the likely causes, most values affected first: a rule that
  rejects right values (and, when it passes another target's values, whose rule it
  looks like), a description that reads another target's value (or two targets whose
  descriptions look swapped), values not found although the rules accept the truth (the
  name and description do not say what to look for), values not found by a target that
  reads only a box of the page (its search area), values right but for their form;
- `Doctor.what_if`: a target's tree replaced (or a suggestion taken): pass rates,
  detectors and the review plan's numbers again from the same values, no service, no
  re-extraction (the engine also consults rules when it chooses among candidates, so a
  re-extraction may read other values; the bench measures how often);
- `Doctor.configuration_with` / `Doctor.write`: the configuration with the changes, as
  `servicetools config check` accepts it.

Without truth, what needs none: pass rates, rule groups that never or always fail, and
suggestions mined from values of high confidence, marked as such.

>>> import pandas as pd
>>> fields = pd.DataFrame({
...     "extraction_id": [f"e{i}" for i in range(12)],
...     "document_name": [f"d{i}.pdf" for i in range(12)], "target_name": "Date",
...     "value_id": [f"v{i}" for i in range(12)], "value_index": 0,
...     "value": [f"{i + 1:02d}.03.2024" for i in range(12)], "confidence": 0.9})
>>> truth = pd.DataFrame({"document": [f"d{i}.pdf" for i in range(12)],
...                       "target_name": "Date",
...                       "value": [f"{i + 1:02d}.03.2024" for i in range(12)]})
>>> configuration = {"name": "c", "extraction_targets": [{
...     "id": "t1", "type": "field", "name": "Date", "validation_tree": {
...         "name": "date", "rule_groups": [{"name": "iso date", "rules": [
...             {"type": "date", "formats": ["%Y-%m-%d"]}]}]}}]}
>>> dr = doctor(fields, truth, configuration=configuration)
>>> first = dr.findings.iloc[0]
>>> first["finding"], first["group"], int(first["affected"])
('rule rejects right values', 'iso date', 12)
>>> after = dr.what_if("Date", dr.suggested_tree("Date"))
>>> after.pass_rate_before, after.pass_rate_after
(0.0, 1.0)
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...wire.rules import check_tree
from ...wire.values import parse_amount, parse_date
from .detectors import detectors, group_passes, is_empty_group, pass_rates
from .error_kinds import ERROR_KINDS, kinds
from .grading import grade
from .normalisation import DEFAULT_NORMALIZE, Normalize
from .suggestions import DATE_CANDIDATES, suggest
from .work import work_frame

__all__ = ["Doctor", "ERROR_COLUMNS", "FINDINGS", "FINDING_COLUMNS", "WhatIf", "doctor",
           "load_configuration", "trees_of"]

#: The columns of `Doctor.errors`, one row per target.
ERROR_COLUMNS: tuple[str, ...] = (
    "n_values", "n_labelled", "right", *ERROR_KINDS, "accuracy", "pass_rate", "examples")
#: The columns of `Doctor.findings`, one row per finding, per target most affected first.
FINDING_COLUMNS: tuple[str, ...] = (
    "target", "rank", "finding", "cause", "group", "other", "affected", "n", "message",
    "suggestion")
#: What a finding says, and the part of the configuration it points at (its ``cause``).
FINDINGS: dict[str, str] = {
    "rule rejects right values": "rule",
    "rule of another target": "rule",
    "rule always fails": "rule",
    "rule never fails": "rule",
    "descriptions look swapped": "description",
    "reads another target's value": "description",
    "not found": "description",
    "wrong value": "description",
    "value where there is none": "description",
    "right but for its form": "format",
    "outside its search area?": "search area",
}
_EXAMPLES = 3


def load_configuration(configuration: Any) -> dict[str, Any]:
    """A configuration object from a dict or a path to its JSON file."""
    if isinstance(configuration, Mapping):
        return copy.deepcopy(dict(configuration))
    if isinstance(configuration, str | os.PathLike):
        path = Path(configuration)
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: cannot read the configuration: {exc}") from exc
        if not isinstance(loaded, dict) or not isinstance(
                loaded.get("extraction_targets"), list):
            raise ValueError(f"{path}: not a configuration (no extraction_targets)")
        return loaded
    raise TypeError(f"give the configuration as a dict or a JSON file's path, not "
                    f"{type(configuration).__name__}")


def trees_of(configuration: Mapping[str, Any]) -> dict[str, Any]:
    """Validation tree by target label: a field's name, a column's ``"<table> /
    <header>"`` (its extracted-value tree), as the audits label values."""
    trees: dict[str, Any] = {}
    for target in configuration.get("extraction_targets") or []:
        name = target.get("name") or target.get("id")
        if target.get("type") == "table":
            for header in target.get("header_schema") or []:
                label = f"{name} / {header.get('name') or header.get('id')}"
                trees[label] = header.get("extracted_value_validation_tree")
        else:
            trees[str(name)] = target.get("validation_tree")
    return trees


def _looks_like(values: list[str]) -> str:
    """What the truth's values look like, in a word."""
    if not values:
        return "nothing"
    dates = sum(parse_date(v, DATE_CANDIDATES) is not None for v in values)
    amounts = sum(parse_amount(v) is not None for v in values)
    if dates >= 0.6 * len(values):
        return "dates"
    if amounts >= 0.6 * len(values):
        return "amounts or numbers"
    codes = sum(any(c.isdigit() for c in v) and len(v.split()) == 1 for v in values)
    return "codes" if codes >= 0.6 * len(values) else "words"


@dataclass
class WhatIf:
    """A target's figures before and after its validation tree is replaced."""

    target: str
    tree: Any
    pass_rate_before: float
    pass_rate_after: float
    detectors: pd.DataFrame
    review: pd.DataFrame  # before/after: flagged, errors caught by a 10%/20% review, ...

    def _repr_html_(self) -> str:
        head = (f"<p><b>{self.target}</b>: pass rate {self.pass_rate_before:.1%} &rarr; "
                f"{self.pass_rate_after:.1%}</p>")
        return head + self.detectors.to_html() + self.review.to_html()


@dataclass
class Doctor:
    """What `doctor` found; see the module's docstring for each part."""

    values: pd.DataFrame
    trees: dict[str, Any]
    configuration: dict[str, Any] | None
    labelled: bool
    errors: pd.DataFrame
    detectors: pd.DataFrame
    suggestions: pd.DataFrame
    findings: pd.DataFrame
    changes: dict[str, Any] = field(default_factory=dict)

    def suggested(self, target: str) -> dict[str, Any] | None:
        """The mined rule group for ``target`` that catches most wrong values among those
        that keep to the false-alarm limit (None when none does)."""
        mined = self.suggestions.loc[(self.suggestions["target"] == target)
                                     & self.suggestions["meets"]
                                     & (self.suggestions["kind"] != "combined")]
        mined = mined.sort_values("catch_rate", ascending=False, kind="stable")
        return copy.deepcopy(mined["group"].iloc[0]) if len(mined) else None

    def suggested_tree(self, target: str) -> dict[str, Any] | None:
        """A validation tree of the best suggestion's groups for ``target`` (``combined``
        when all of them together catch most), or None."""
        best = self.suggestions.loc[(self.suggestions["target"] == target)
                                    & self.suggestions["best"]]
        if not len(best):
            return None
        return {"name": f"{target} (mined)",
                "rule_groups": copy.deepcopy(list(best["groups"].iloc[0]))}

    def what_if(self, target: str, tree: Mapping[str, Any] | None) -> WhatIf:
        """``target``'s pass rate, detectors and review numbers with ``tree`` in place of
        its validation tree (None: no rules), on the same values."""
        self._check(target, tree)
        rows = self.values.loc[self.values["target"].astype(str) == target]
        trees = {**self.trees, target: tree}
        before = float(pass_rates(rows, self.trees).get(target, np.nan))
        after = float(pass_rates(rows, trees).get(target, np.nan))
        return WhatIf(target=target, tree=tree, pass_rate_before=before,
                      pass_rate_after=after, detectors=detectors(rows, {target: tree}),
                      review=_review_numbers(rows, self.trees, trees, self.labelled))

    def change(self, target: str, tree: Mapping[str, Any] | None) -> None:
        """Keep ``tree`` as ``target``'s new validation tree (see `configuration_with`)."""
        self._check(target, tree)
        self.changes[target] = copy.deepcopy(tree)

    def _check(self, target: str, tree: Mapping[str, Any] | None) -> None:
        """A clear error for a target the batch lacks or a tree that is not valid."""
        known = set(self.values["target"].astype(str))
        if target not in known:
            raise ValueError(f"no values of target {target!r}; the batch has: "
                             + ", ".join(sorted(known)))
        problems = check_tree(tree) if tree is not None else []
        if problems:
            raise ValueError(f"the tree for {target!r} is not valid: " + "; ".join(problems))

    def configuration_with(self, changes: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The configuration with ``changes`` (target label -> tree; default: those kept
        by `change`) in place of its trees."""
        if self.configuration is None:
            raise ValueError("the doctor was given no configuration to change")
        changed = copy.deepcopy(self.configuration)
        wanted = dict(self.changes if changes is None else changes)
        for target in changed.get("extraction_targets") or []:
            name = str(target.get("name") or target.get("id"))
            if target.get("type") == "table":
                for header in target.get("header_schema") or []:
                    label = f"{name} / {header.get('name') or header.get('id')}"
                    if label in wanted:
                        header["extracted_value_validation_tree"] = wanted.pop(label)
            elif name in wanted:
                target["validation_tree"] = wanted.pop(name)
        if wanted:
            raise ValueError(f"the configuration has no target {', '.join(sorted(wanted))}")
        return changed

    def write(self, path: str | os.PathLike[str],
              changes: Mapping[str, Any] | None = None) -> Path:
        """Write `configuration_with` ``changes`` as JSON to ``path``."""
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(self.configuration_with(changes), indent=1,
                                  ensure_ascii=False) + "\n", encoding="utf-8")
        return out

    def _repr_html_(self) -> str:
        return self.findings.drop(columns=["suggestion"]).to_html()


def _review_numbers(rows: pd.DataFrame, before: Mapping[str, Any], after: Mapping[str, Any],
                    labelled: bool) -> pd.DataFrame:
    """Values flagged by the rules, and errors a review of the riskiest 10% and 20%
    catches (by `review.plan` without a reference: confidence, with a failed rule or an
    empty value counted as at least an even chance of an error), under each tree."""
    from ..review import plan

    out = {}
    for name, trees in (("before", before), ("after", after)):
        work = _work_rows(rows, trees)
        figures: dict[str, float] = {"flagged": float((~work["passed"]).sum())}
        for share in (0.1, 0.2):
            planned = plan(work, budget=share, audit=0)
            if labelled:
                wrong = planned["value_id"].map(dict(zip(work["value_id"], work["_wrong"],
                                                         strict=True)))
                figures[f"errors caught reviewing {share:.0%}"] = float(
                    wrong[planned["review"]].sum())
        if labelled:
            figures["errors"] = float(work["_wrong"].sum())
        out[name] = figures
    return pd.DataFrame(out)


def _work_rows(rows: pd.DataFrame, trees: Mapping[str, Any]) -> pd.DataFrame:
    """``rows`` as the work frame `review.plan` reads, validated by ``trees``."""
    values = rows["value"].astype(object).where(rows["value"].notna(), "").to_numpy()
    passed = np.ones(len(rows), dtype=bool)
    targets = rows["target"].astype(str).to_numpy()
    for target in pd.unique(targets):
        mine = targets == target
        for group in (trees.get(target) or {}).get("rule_groups") or []:
            passed[mine] &= group_passes(values[mine], group)
    filled = np.array([isinstance(v, str) and v.strip() != "" for v in values])
    return pd.DataFrame({
        "kind": "field", "target": targets,
        "extraction_id": rows["document"].astype(str).to_numpy(),
        "value_id": [f"w{i}" for i in range(len(rows))], "value": values,
        "confidence": pd.to_numeric(rows["confidence"], errors="coerce").to_numpy(float),
        "passed": pd.array(passed, dtype="boolean"), "filled": filled,
        "messages": [()] * len(rows),
        "_wrong": np.isin(rows["kind"].astype(object).to_numpy(), list(ERROR_KINDS)),
    })


# -- the rows every part reads ------------------------------------------------------------
def _value_rows(data: Any, truth: Any, cells: pd.DataFrame | None,
                normalize: Normalize) -> pd.DataFrame:
    """One row per value (and per truth value never read): ``document``, ``target``,
    ``value``, ``expected``, ``correct``, ``confidence``."""
    columns = ["document", "target", "value", "expected", "correct", "confidence"]
    if isinstance(data, pd.DataFrame) and {"correct", "expected"} <= set(data.columns):
        rows = data.copy()
        if "document" not in rows.columns:
            rows["document"] = rows["document_name"]
        return rows[columns].reset_index(drop=True)
    work = work_frame(data, cells)
    rest = pd.DataFrame({
        "document": work["document_name"].astype(object).to_numpy(),
        "target": work["target"].astype(object).to_numpy(),
        "value": work["value"].astype(object).to_numpy(),
        "expected": None, "correct": pd.array([pd.NA] * len(work), dtype="boolean"),
        "confidence": pd.to_numeric(work["confidence"], errors="coerce").to_numpy(float),
        "_value_id": work["value_id"].to_numpy(dtype=object)})
    if truth is None:
        return rest[columns]
    graded = grade(work, truth, normalize=normalize)
    graded_rows = pd.DataFrame({
        "document": graded["document_name"].astype(object).where(
            graded["document_name"].notna(), graded["document"].astype(object)).to_numpy(),
        "target": graded["target"].astype(object).to_numpy(),
        "value": graded["value"].astype(object).to_numpy(),
        "expected": graded["expected"].astype(object).to_numpy(),
        "correct": graded["correct"].array,
        "confidence": graded["confidence"].to_numpy(float)})
    seen = set(graded["value_id"].dropna())
    unlabelled = rest.loc[~rest["_value_id"].isin(seen), columns]
    return pd.concat([graded_rows, unlabelled], ignore_index=True)


# -- errors and findings ------------------------------------------------------------------
def _errors(rows: pd.DataFrame, trees: Mapping[str, Any], judged: bool = True
            ) -> pd.DataFrame:
    """Errors by kind per target; the pass rate under the configuration's trees (NaN
    when no configuration was given: `judged` False, its trees unknown)."""
    rates = pass_rates(rows, trees) if judged else pd.Series(dtype=float)
    out = []
    for target, part in rows.groupby("target", sort=False, observed=True):
        counts = part["kind"].astype(object).value_counts()
        n_labelled = int(len(part) - counts.get("unlabelled", 0))
        examples = {}
        for kind in ERROR_KINDS:
            mine = part.loc[part["kind"] == kind].head(_EXAMPLES)
            if len(mine):
                examples[kind] = [f"{_show(v)} (truth {_show(e)})" for v, e in
                                  zip(mine["value"], mine["expected"], strict=True)]
        out.append({"target": str(target), "n_values": len(part), "n_labelled": n_labelled,
                    "right": int(counts.get("right", 0)),
                    **{k: int(counts.get(k, 0)) for k in ERROR_KINDS},
                    "accuracy": counts.get("right", 0) / n_labelled if n_labelled else np.nan,
                    "pass_rate": float(rates.get(str(target), np.nan)),
                    "examples": examples})
    return pd.DataFrame(out, columns=["target", *ERROR_COLUMNS]).set_index("target")


def _show(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) and value.strip() else "nothing"


def _finding(target: str, finding: str, affected: int, n: int, message: str, *,
             group: str | None = None, other: str | None = None,
             suggestion: Any = None) -> dict[str, Any]:
    return {"target": target, "finding": finding, "cause": FINDINGS[finding], "group": group,
            "other": other, "affected": int(affected), "n": int(n), "message": message,
            "suggestion": suggestion}


def _rule_findings(target: str, part: pd.DataFrame, rows: pd.DataFrame,
                   trees: Mapping[str, Any], found: pd.DataFrame, suggestions: pd.DataFrame,
                   labelled: bool) -> list[dict[str, Any]]:
    """Rule groups that reject the truth (or, without truth, confident values)."""
    out = []
    tree = trees.get(target) or {}
    mined = suggestions.loc[suggestions["target"] == target]
    for _, row in found.loc[found["target"] == target].iterrows():
        group = tree["rule_groups"][row["position"]]
        if labelled:
            truths = part["expected"].astype(object).where(part["expected"].notna(), "")
            filled = truths.astype(str).str.strip() != ""
            judged = truths[filled | is_empty_group(group)].to_numpy(dtype=object)
            rejected = ~group_passes(judged, group)
            affected, n = int(rejected.sum()), len(judged)
            examples = [str(v) for v in pd.unique(judged[rejected])[:_EXAMPLES]]
        else:
            affected, n = int(row["fails"]), int(row["n_values"])
            values = part["value"].astype(object).where(part["value"].notna(), "")
            values = values[(values.astype(str).str.strip() != "")
                            | is_empty_group(group)].to_numpy(dtype=object)
            examples = [str(v) for v in pd.unique(values[~group_passes(values, group)])
                        [:_EXAMPLES]]
        if row["verdict"] == "never fails" and not labelled:
            out.append(_finding(target, "rule never fails", 0, n,
                                f"group '{row['group']}' ({row['rules']}) passed all {n} "
                                "values: it catches nothing here", group=row["group"]))
            continue
        if not affected:
            continue
        kinds_of_group = {r.get("type") for r in group.get("rules") or []
                          if isinstance(r, Mapping)}
        fix = _fix_for(kinds_of_group, mined)
        owner = _owner(group, target, rows, trees)
        what = "truth values" if labelled else "values"
        message = (f"group '{row['group']}' ({row['rules']}) rejects {affected} of {n} "
                   f"{what}, e.g. {', '.join(repr(e) for e in examples)}")
        if labelled and row["n_wrong"]:
            message += (f"; it catches {row['catches']} of {row['n_wrong']} wrong values "
                        f"read")
        if owner is not None:
            out.append(_finding(target, "rule of another target", affected, n,
                                message + f"; it accepts the values of '{owner}': it looks "
                                "like that target's rule", group=row["group"], other=owner,
                                suggestion=fix))
        elif not labelled and affected == n:
            out.append(_finding(target, "rule always fails", affected, n, message,
                                group=row["group"], suggestion=fix))
        else:
            out.append(_finding(target, "rule rejects right values", affected, n, message,
                                group=row["group"], suggestion=fix))
    return out


def _fix_for(kinds_of_group: set[Any], mined: pd.DataFrame) -> Any:
    """A mined group of the same kind as a faulty group (else the target's best)."""
    wanted = {"date": "date", "regex": "shape", "length": "length", "amount": "amount",
              "number": "amount", "one_of": "enumeration"}
    for kind in kinds_of_group:
        same = mined.loc[(mined["kind"] == wanted.get(kind)) & mined["meets"]]
        if len(same):
            return copy.deepcopy(same["group"].iloc[0])
    # A group that checks the value is not replaced by one that only asks for a value.
    single = mined.loc[mined["meets"] & ~mined["kind"].isin(
        ["combined"] if "not_empty" in kinds_of_group else ["combined", "required"])]
    best = single.sort_values("catch_rate", ascending=False, kind="stable")
    return copy.deepcopy(best["group"].iloc[0]) if len(best) else None


def _owner(group: Mapping[str, Any], target: str, rows: pd.DataFrame,
           trees: Mapping[str, Any]) -> str | None:
    """Another target most of whose values the group accepts, where it rejects most of
    this target's: the target the rule was written for."""
    def accepted(name: str) -> float:
        mine = rows.loc[(rows["target"].astype(str) == name)]
        base = mine["expected"] if mine["expected"].notna().any() else mine["value"]
        values = base.astype(object).where(base.notna(), "").astype(str)
        values = values[values.str.strip() != ""].to_numpy(dtype=object)
        return float(group_passes(values, group).mean()) if len(values) >= 5 else np.nan

    own = accepted(target)
    if not own < 0.2:
        return None
    scores = {name: accepted(name) for name in trees if name != target}
    scores = {k: v for k, v in scores.items() if v >= 0.8}
    return max(scores, key=lambda k: scores[k]) if scores else None


def _value_findings(target: str, part: pd.DataFrame, rows: pd.DataFrame,
                    trees: Mapping[str, Any], description: str | None,
                    suggestions: pd.DataFrame, area: str | None = None
                    ) -> list[dict[str, Any]]:
    """Findings from the kinds of error (with truth only)."""
    out = []
    n = int((part["kind"] != "unlabelled").sum())
    counts = part["kind"].astype(object).value_counts()
    # Another target's value: which one, and whether it reads this one's back.
    others = part.loc[part["kind"] == "other_target", "other"].astype(object).value_counts()
    for other, count in others.items():
        back = rows.loc[(rows["target"].astype(str) == str(other))
                        & (rows["kind"] == "other_target")
                        & (rows["other"].astype(object) == target)]
        if len(back):
            out.append(_finding(target, "descriptions look swapped", count, n,
                                f"{count} of {n} values are the truth of '{other}', and "
                                f"{len(back)} of '{other}' are this target's: their "
                                "descriptions (or names) look swapped", other=str(other)))
        else:
            out.append(_finding(target, "reads another target's value", count, n,
                                f"{count} of {n} values are the truth of '{other}': the "
                                "description does not tell the two apart", other=str(other)))
    # Not found or wrong although the rules accept the truth: what to look for.
    tree = trees.get(target) or {}
    expected = part["expected"].astype(object).where(part["expected"].notna(), "").astype(str)
    accepted = np.ones(len(part), dtype=bool)
    for group in tree.get("rule_groups") or []:
        accepted &= group_passes(expected.to_numpy(dtype=object), group)
    truths = [v for v in expected if v.strip()]
    looks = _looks_like(truths)
    said = f"; its description: {description!r}" if description else "; it has no description"
    for kind, finding in (("missed", "not found"), ("wrong", "wrong value")):
        mine = (part["kind"] == kind).to_numpy() & accepted
        if mine.any():
            shown = [f"{_show(v)} (truth {_show(e)})" for v, e in zip(
                part.loc[mine, "value"].head(_EXAMPLES), expected[mine].head(_EXAMPLES),
                strict=True)]
            out.append(_finding(
                target, finding, int(mine.sum()), n,
                f"{int(mine.sum())} of {n} values {'not found' if kind == 'missed' else 'wrong'}"
                f" although the rules accept the truth (e.g. {', '.join(shown)}): the truth is "
                f"{looks}; the name and description may not say what to look for{said}"))
    if counts.get("missed", 0) and area is not None:
        # The frames hold no positions: whether the truth lies outside the area cannot be
        # seen, only that the target reads a part of the page and misses values.
        out.append(_finding(
            target, "outside its search area?", counts["missed"], n,
            f"{counts['missed']} of {n} values not found, and the target reads only {area}: "
            "a value printed outside it is never read; try the whole page (search_area "
            "'all') on a few of the documents it missed"))
    if counts.get("spurious", 0):
        mined = suggestions.loc[(suggestions["target"] == target) & suggestions["meets"]
                                & (suggestions["kind"] != "combined")].sort_values(
            "catch_rate", ascending=False, kind="stable")
        out.append(_finding(
            target, "value where there is none", counts["spurious"], n,
            f"{counts['spurious']} of {n} values read where the document has none"
            + (f"; the mined rule '{mined['rules'].iloc[0]}' would reject part of them"
               if len(mined) else ""),
            suggestion=copy.deepcopy(mined["group"].iloc[0]) if len(mined) else None))
    if counts.get("format_only", 0):
        mine = part.loc[part["kind"] == "format_only"].head(_EXAMPLES)
        shown = [f"{_show(v)} for {_show(e)}" for v, e in zip(mine["value"], mine["expected"],
                                                              strict=True)]
        out.append(_finding(target, "right but for its form", counts["format_only"], n,
                            f"{counts['format_only']} of {n} values equal the truth once "
                            f"normalised ({', '.join(shown)}): compare normalised, or ask "
                            "for the printed form in the description"))
    return out


def _areas(configuration: Mapping[str, Any] | None) -> dict[str, str]:
    """Each target that reads a box of a page, and that box, as a person reads it."""
    areas = (configuration or {}).get("search_areas") or {}
    out: dict[str, str] = {}
    for target in (configuration or {}).get("extraction_targets") or []:
        if target.get("search_area_type") != "box":
            continue
        name, key = str(target.get("name") or target.get("id")), target.get("search_area")
        area = areas.get(key) if isinstance(areas, Mapping) else None
        if isinstance(area, Mapping):
            box = ", ".join(f"{x:g}" for x in area.get("box") or [])
            out[name] = f"search area '{key}' (page {area.get('page', '?')}, box [{box}])"
        else:
            out[name] = f"search area '{key}'"
    return out


def _descriptions(configuration: Mapping[str, Any] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for target in (configuration or {}).get("extraction_targets") or []:
        name = str(target.get("name") or target.get("id"))
        if target.get("description"):
            out[name] = str(target["description"])
    return out


def _findings(rows: pd.DataFrame, trees: Mapping[str, Any], found: pd.DataFrame,
              suggestions: pd.DataFrame, labelled: bool,
              configuration: Mapping[str, Any] | None) -> pd.DataFrame:
    descriptions, areas = _descriptions(configuration), _areas(configuration)
    out: list[dict[str, Any]] = []
    for target, part in rows.groupby("target", sort=False, observed=True):
        name = str(target)
        mine = _rule_findings(name, part, rows, trees, found, suggestions, labelled)
        if labelled:
            mine += _value_findings(name, part, rows, trees, descriptions.get(name),
                                    suggestions, areas.get(name))
        mine.sort(key=lambda f: -f["affected"])
        for rank, finding in enumerate(mine, start=1):
            out.append({**finding, "rank": rank})
    return pd.DataFrame(out, columns=list(FINDING_COLUMNS))


def doctor(data: Any, truth: Any = None, *, configuration: Any = None,
           cells: pd.DataFrame | None = None, normalize: Normalize = DEFAULT_NORMALIZE,
           confident: float = 0.9) -> Doctor:
    """What is wrong with a configuration, from a batch's values: see the module.

    ``data``: frames, a `Batch`, a saved batch's path (anything `work_frame` takes), or
    a `grade` frame (its ``correct`` decides what is right). ``truth``: truth files, a
    table of expected values or a corrections ledger (see `truth`); None for what needs
    none. ``configuration``: the configuration (a dict or its JSON file), whose trees
    are judged; without it only the errors are reported. ``confident``: without truth,
    the confidence from which values are taken as right to mine rules.
    """
    configuration = None if configuration is None else load_configuration(configuration)
    trees = trees_of(configuration) if configuration is not None else {}
    rows = _value_rows(data, truth, cells, normalize)
    rows = kinds(rows.reset_index(drop=True))
    labelled = bool((rows["kind"].astype(object) != "unlabelled").any())
    found = detectors(rows, trees)
    suggestions = suggest(rows, confident=confident)
    return Doctor(values=rows, trees=trees, configuration=configuration, labelled=labelled,
                  errors=_errors(rows, trees, configuration is not None), detectors=found,
                  suggestions=suggestions,
                  findings=_findings(rows, trees, found, suggestions, labelled,
                                     configuration))
