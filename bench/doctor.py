"""The configuration doctor, measured on defects planted in configurations that work.

Usage: ``make bench-doctor`` (part of ``make bench``) or ``.venv/bin/python
bench/doctor.py [--root DIR] [--sets ...]``.

The engine runs in-process over the real sets with truth (``realsets``; read from
``--root``, never copied) with each set's configuration, then again with one defect
planted at a time (the engine reads rules and descriptions when it chooses values, so
every planting is extracted again, as a user would have). Defects, chosen by rule from
each configuration and the set's truth, never by hand per document:

- ``date format``: a date rule loses the format that reads most of the printed dates;
- ``strict regex``: a regex group that rejects a fifth or more of the right values;
- ``length``: a length group whose maximum is below most right values;
- ``wrong target``: a date or amount group put on a target of another kind;
- ``description``: the target renamed "Field <n>" and described as "See the document."
  (its name and description no longer say what it is);
- ``description only``: the name kept, the description "See the document.";
- ``search area``: the target reads only the bottom tenth of page 1;
- ``swapped``: two targets of one kind exchange their descriptions.

Measured, with n:

1. the planted defect among the doctor's top 3 findings for its target (goal: >= 80%
   of the plantings that changed anything): a finding on the planted rule group for
   the rule defects; for the others a finding that blames the description (the search
   area) and counts more values than any such finding on the working configuration;
2. suggestions: the best mined group per target of the working configurations, on
   the held-back documents (goal: <= 2% of right values failed, >= 30% of wrong values
   caught), per set and pooled;
3. what-if: the planted batch with the working tree put back (`Doctor.what_if`) beside
   the service's validation (`wire.validate_value`) of the working configuration's own
   extraction, document by document (goal: equal pass rates; n >= 50 documents), also
   for the documents where both extractions read the same value.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import realsets  # noqa: E402

from servicetools import audit  # noqa: E402
from servicetools.analysis.audit.detectors import group_passes  # noqa: E402
from servicetools.analysis.audit.suggestions import DATE_CANDIDATES  # noqa: E402
from servicetools.wire.values import parse_amount, parse_date  # noqa: E402

SETS = (*realsets.SETS, *realsets.OTHER_SETS)
# The configuration each set is planted in (cases of another are left out).
MAIN = {"sroie-dev": "receipts", "invoices-dev": "invoices", "real": "invoices",
        "adforms-dev": "adforms", "zugferd-dev": "zugferd", "contracts-dev": "contracts"}
STRICT = ("[0-9]{1,12}", "[A-Z0-9]{1,10}", "[A-Z][a-z]+(?: [A-Z][a-z]+)*", "[A-Za-z ]{1,15}",
          "[A-Z]{2}")
TOP = 3


@dataclasses.dataclass
class Planting:
    set: str
    defect: str
    target: str  # as named in the planted configuration
    configuration: dict[str, Any]
    group: str | None = None  # the planted rule group's name
    partner: str | None = None  # the other target of a swap
    renamed: dict[str, str] = dataclasses.field(default_factory=dict)  # new -> truth name
    cause: str = "description"  # what a finding must blame, for a planting of no rule


def rows_of(set_name: str, configuration: dict[str, Any], root: Path, cache: Path | None,
            renamed: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per truth value of the set's cases: the doctor's grade-like rows."""
    reader = realsets.reader_version()
    back = renamed or {}
    forward = {v: k for k, v in back.items()}
    rows = []
    for case in realsets.cases(set_name, root):
        if case.configuration != MAIN[set_name]:
            continue
        mapped = dataclasses.replace(case, truth={forward.get(k, k): v
                                                  for k, v in case.truth.items()})
        found, _ = realsets.run_case(mapped, configuration, cache, reader)
        for o in found:
            rows.append({"document": case.name, "target": o.target, "value": o.got,
                         "expected": o.truth, "correct": o.right,
                         "confidence": o.confidence})
    frame = pd.DataFrame(rows)
    frame["correct"] = frame["correct"].astype("boolean")
    return frame


def _target(configuration: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in configuration["extraction_targets"] if t.get("name") == name)


def _truths(rows: pd.DataFrame, target: str) -> list[str]:
    values = rows.loc[rows["target"] == target, "expected"].astype(str)
    return [v for v in values if v.strip()]


def _rejects(values: list[str], group: dict[str, Any]) -> float:
    return float((~group_passes(np.array(values, dtype=object), group)).mean()) if values else 0


def _kind(values: list[str]) -> str:
    if sum(parse_date(v, DATE_CANDIDATES) is not None for v in values) > 0.6 * len(values):
        return "date"
    if sum(parse_amount(v) is not None for v in values) > 0.6 * len(values):
        return "amount"
    return "text"


def plantings(set_name: str, configuration: dict[str, Any], rows: pd.DataFrame
              ) -> Iterator[Planting]:
    """The defects planted in one set's configuration, by the rules of the docstring."""
    names = [t["name"] for t in configuration["extraction_targets"]
             if t.get("type") == "field" and _truths(rows, t["name"])]
    kinds = {n: _kind(_truths(rows, n)) for n in names}
    for name in names:
        truths = _truths(rows, name)
        groups = (_target(configuration, name).get("validation_tree") or {}).get(
            "rule_groups") or []
        # A date rule without the format that reads most printed dates.
        for position, group in enumerate(groups):
            rule = group["rules"][0]
            if rule.get("type") == "date" and len(rule["formats"]) > 1:
                counts = {f: sum(parse_date(v, [f]) is not None for v in truths)
                          for f in rule["formats"]}
                drop = max(counts, key=lambda f: counts[f])
                if counts[drop]:
                    planted = copy.deepcopy(configuration)
                    tree = _target(planted, name)["validation_tree"]
                    tree["rule_groups"][position]["rules"][0]["formats"].remove(drop)
                    yield Planting(set_name, "date format", name, planted, group["name"])
        # An over-strict regex, and a length limit below most right values.
        for pattern in STRICT:
            group = {"name": "format", "rules": [{"type": "regex", "pattern": pattern}]}
            if 0.2 <= _rejects(truths, group) < 1:
                yield _added(set_name, "strict regex", configuration, name, group)
                break
        if kinds[name] == "text":
            lengths = sorted(len(v.strip()) for v in truths)
            limit = max(1, lengths[len(lengths) // 3])
            group = {"name": "length", "rules": [{"type": "length", "max": limit}]}
            if _rejects(truths, group) >= 0.2:
                yield _added(set_name, "length", configuration, name, group)
    # A date or amount rule on a target of another kind.
    for source_kind in ("date", "amount"):
        source = next((n for n in names if kinds[n] == source_kind), None)
        victim = next((n for n in names if kinds[n] not in (source_kind,)), None)
        if source is None or victim is None:
            continue
        groups = _target(configuration, source).get("validation_tree", {}).get("rule_groups", [])
        group = next((g for g in groups if g["rules"][0].get("type") == source_kind), None)
        if group is not None and _rejects(_truths(rows, victim), group) >= 0.5:
            yield _added(set_name, "wrong target", configuration, victim,
                         {**copy.deepcopy(group), "name": f"{group['name']} ({source})"})
    # Descriptions: a target that no longer says what it is; two that swap.
    for i, name in enumerate(names):
        planted = copy.deepcopy(configuration)
        target = _target(planted, name)
        new = f"Field {i + 1}"
        target["name"], target["description"] = new, "See the document."
        target.pop("example", None)
        yield Planting(set_name, "description", new, planted, renamed={new: name})
    for name in names:
        # The name kept, the description no longer saying what the value is.
        planted = copy.deepcopy(configuration)
        target = _target(planted, name)
        target["description"] = "See the document."
        target.pop("example", None)
        yield Planting(set_name, "description only", name, planted)
        # A search area that leaves out most of the page.
        planted = copy.deepcopy(configuration)
        planted.setdefault("search_areas", {})["planted"] = {"page": 1,
                                                             "box": [0.0, 0.9, 1.0, 1.0]}
        target = _target(planted, name)
        target["search_area"], target["search_area_type"] = "planted", "box"
        yield Planting(set_name, "search area", name, planted, cause="search area")
    for kind in ("date", "amount", "text"):
        same = [n for n in names if kinds[n] == kind]
        for a, b in zip(same[::2], same[1::2], strict=False):
            planted = copy.deepcopy(configuration)
            ta, tb = _target(planted, a), _target(planted, b)
            ta["description"], tb["description"] = tb.get("description"), ta.get("description")
            yield Planting(set_name, "swapped", a, planted, partner=b)


def _added(set_name: str, defect: str, configuration: dict[str, Any], name: str,
           group: dict[str, Any]) -> Planting:
    planted = copy.deepcopy(configuration)
    target = _target(planted, name)
    tree = target.get("validation_tree") or {"name": name, "rule_groups": []}
    tree.setdefault("rule_groups", []).append(group)
    target["validation_tree"] = tree
    return Planting(set_name, defect, name, planted, group["name"])


def found_in_top(doc: audit.Doctor, planting: Planting, healthy: audit.Doctor) -> bool:
    """Whether the planted defect is among the doctor's top findings for its target: the
    planted rule group named; for a description, a finding on the description that
    counts more values than any the working configuration's doctor had for the target
    (a hard target has such findings without any defect)."""
    targets = [planting.target] + ([planting.partner] if planting.partner else [])
    top = doc.findings.loc[doc.findings["target"].isin(targets)
                           & (doc.findings["rank"] <= TOP)]
    if planting.group is not None:
        return bool(((top["cause"] == "rule") & (top["group"] == planting.group)).any())
    before = healthy.findings.loc[
        healthy.findings["target"].isin([planting.renamed.get(t, t) for t in targets])
        & (healthy.findings["cause"] == planting.cause), "affected"]
    said = top.loc[top["cause"] == planting.cause, "affected"]
    return bool(len(said) and said.max() > (before.max() if len(before) else 0))


def changed(base: pd.DataFrame, planted: pd.DataFrame, planting: Planting) -> bool:
    """Whether the planting made any difference to what the doctor can see."""
    if planting.group is not None:
        return True  # the planted group rejects right values by construction
    targets = [planting.target, planting.partner]
    names = [planting.renamed.get(t, t) for t in targets if t]
    before = base.loc[base["target"].isin(names), "correct"].sum()
    after = planted.loc[planted["target"].isin([t for t in targets if t]), "correct"].sum()
    return bool(after < before)


def what_if_agreement(doc: audit.Doctor, planting: Planting, base: pd.DataFrame,
                      tree: Any) -> dict[str, Any]:
    """Documents whose pass/fail the what-if (working tree put back on the planted
    batch's values, through the doctor's own rule evaluation) gives as the service's
    validation (`wire.validate_value`, as the pipeline checks each value) gives it on the
    working configuration's extraction; split by whether both extractions read the same
    value (the engine also consults rules when it chooses among candidates)."""
    from servicetools.wire import validate_value

    mine = doc.values.loc[doc.values["target"] == planting.target]
    theirs = base.loc[base["target"] == planting.target]
    group_list = (tree or {}).get("rule_groups") or []

    def passed(values: pd.Series) -> np.ndarray:
        array = values.astype(object).where(values.notna(), "").to_numpy(dtype=object)
        out = np.ones(len(array), dtype=bool)
        for group in group_list:
            out &= group_passes(array, group)
        return out

    def served(text: Any) -> bool:
        lines = str(text if isinstance(text, str) else "").split("\n")
        return all(validate_value(line, tree)[0] for line in lines)

    what_if = dict(zip(mine["document"], passed(mine["value"]), strict=False))
    read = dict(zip(mine["document"], mine["value"].astype(str), strict=False))
    real = {d: served(v) for d, v in zip(theirs["document"], theirs["value"], strict=False)}
    before = dict(zip(theirs["document"], theirs["value"].astype(str), strict=False))
    shared = sorted(set(what_if) & set(real))
    same = [d for d in shared if read[d] == before[d]]
    return {"agree": sum(what_if[d] == real[d] for d in shared), "n": len(shared),
            "agree_same": sum(what_if[d] == real[d] for d in same), "n_same": len(same),
            "what_if": doc.what_if(planting.target, tree).pass_rate_after,
            "real": float(np.mean([real[d] for d in shared])) if shared else 0.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=realsets.SHARED)
    parser.add_argument("--cache", type=Path,
                        default=Path.home() / ".cache" / "servicetools-bench")
    parser.add_argument("--sets", nargs="+", default=list(SETS))
    parser.add_argument("--verbose", action="store_true", help="print every planting")
    args = parser.parse_args(argv)
    sets = [s for s in args.sets if (args.root / s).exists()]
    if not sets:
        print(f"no real set under {args.root}: nothing to measure", file=sys.stderr)
        return 0
    from tqdm import tqdm

    known = realsets.configurations()
    results, suggestions, agreements = [], [], []
    for set_name in sets:
        configuration = known[MAIN[set_name]]
        base = rows_of(set_name, configuration, args.root, args.cache)
        healthy = audit.doctor(base, configuration=configuration)
        best = healthy.suggestions.loc[healthy.suggestions["best"]].assign(set=set_name)
        suggestions.append(best)
        planted_list = list(plantings(set_name, configuration, base))
        for planting in tqdm(planted_list, desc=f"plantings in {set_name}", file=sys.stderr):
            rows = rows_of(set_name, planting.configuration, args.root, args.cache,
                           planting.renamed)
            doc = audit.doctor(rows, configuration=planting.configuration)
            effective = changed(base, rows, planting)
            hit = found_in_top(doc, planting, healthy) if effective else False
            results.append({"set": set_name, "defect": planting.defect,
                            "target": planting.renamed.get(planting.target, planting.target),
                            "effective": effective, "found": hit})
            if args.verbose:
                top = doc.findings.loc[doc.findings["target"] == planting.target].head(TOP)
                print(f"{set_name} {planting.defect} {planting.target} ({planting.group}): "
                      f"effective={effective} found={hit}: "
                      + "; ".join(f"{f} [{g}]" for f, g in zip(top["finding"], top["group"],
                                                               strict=True)))
            if planting.group is not None:
                tree = _target(configuration, planting.target).get("validation_tree")
                agreements.append({"set": set_name, "defect": planting.defect,
                                   "target": planting.target,
                                   **what_if_agreement(doc, planting, base, tree)})
    table = pd.DataFrame(results)
    print(findings_report(table))
    print(suggestions_report(pd.concat(suggestions, ignore_index=True)))
    print(what_if_report(pd.DataFrame(agreements)))
    return 0


def findings_report(table: pd.DataFrame) -> str:
    lines = [f"\n1. The planted defect among the doctor's top {TOP} findings for its target "
             "(plantings that changed anything)"]
    effective = table.loc[table["effective"]]
    for (defect), part in effective.groupby("defect", sort=False):
        lines.append(f"   {defect:<14} {part['found'].mean():6.1%} of {len(part):3d}")
    for set_name, part in effective.groupby("set", sort=False):
        lines.append(f"   {set_name:<14} {part['found'].mean():6.1%} of {len(part):3d}")
    total = effective["found"].mean() if len(effective) else float("nan")
    lines.append(f"   all            {total:6.1%} of {len(effective):3d} plantings over "
                 f"{effective['set'].nunique()} sets (goal >= 80%, >= 30 over >= 4 sets); "
                 f"{int((~table['effective']).sum())} more changed nothing")
    return "\n".join(lines)


def suggestions_report(best: pd.DataFrame) -> str:
    lines = ["\n2. The best mined rule group per target, on held-back documents"]
    for set_name, part in [*best.groupby("set", sort=False), ("pooled", best)]:
        right, alarms = part["n_right_held"].sum(), part["false_alarms"].sum()
        wrong, caught = part["n_wrong_held"].sum(), part["catches"].sum()
        lines.append(f"   {set_name:<14} {len(part):2d} targets: fails {alarms}/{right} right "
                     f"({alarms / max(right, 1):.1%}), catches {caught}/{wrong} wrong "
                     f"({caught / max(wrong, 1):.1%})")
    lines.append("   (goal: <= 2% of right values failed, >= 30% of wrong values caught)")
    return "\n".join(lines)


def what_if_report(agreements: pd.DataFrame) -> str:
    if agreements.empty:
        return "\n3. What-if: no rule planting"
    lines = ["\n3. What-if (working tree on the planted batch) beside the working extraction"]
    agree, n = int(agreements["agree"].sum()), int(agreements["n"].sum())
    gap = (agreements["what_if"] - agreements["real"]).abs()
    lines.append(f"   documents with the same pass/fail: {agree}/{n} ({agree / max(n, 1):.1%}) "
                 f"over {len(agreements)} plantings")
    same, n_same = int(agreements["agree_same"].sum()), int(agreements["n_same"].sum())
    lines.append(f"   of which the engine read the same value both times: {same}/{n_same} "
                 f"({same / max(n_same, 1):.1%}); another value under the planted rule: "
                 f"{agree - same}/{n - n_same}")
    lines.append(f"   pass rate, what-if minus real: median {gap.median():.3f}, max "
                 f"{gap.max():.3f}; equal in {(gap < 1e-9).mean():.0%} of plantings")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
