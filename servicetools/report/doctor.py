"""The configuration doctor for saved batches: each configuration's checkup, its page and
the configuration with the suggestions taken.

    servicetools doctor runs/invoices.jsonl --truth data/truth --configurations my-configs

`build` groups the batches by the configuration they were extracted with (its name and
id, as `Batch.configuration` says), finds that configuration's file in a folder (a
``*.json`` whose ``id`` or ``name`` is the batch's; the bundled configurations by
default), runs `audit.doctor` on each, with the truth when given, and writes
``OUT/index.html`` (`doctor_page`) and ``OUT/configurations/<name>.json``: the
configuration with suggestions taken (`take`), checked as ``servicetools config check``
checks it.

What is taken: for each target with a rule group that rejects right values (or, without
truth, fails every value), the doctor's suggestion for that group in its place, when a
mined group keeps to the false-alarm limit on the held-back documents. With
``take_suggestions``, also the best suggestion of every other target, added to its tree.
Without a suggestion the tree is left as it is, and the page says why.
"""

from __future__ import annotations

import copy
import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis import audit, frames
from ..analysis.audit.doctor import Doctor
from ..bundled import CONFIGURATIONS
from ..client import Batch
from .inputs import batches_of, truth_source

__all__ = ["CONFIDENT", "Checkup", "DoctorReport", "REJECTING", "build", "configurations_in",
           "take"]

#: The findings whose rule group is replaced by the doctor's suggestion: rules that turn
#: right values away (without truth: that fail every value).
REJECTING = ("rule rejects right values", "rule of another target", "rule always fails")
#: The confidence from which, without truth, values are taken as right to mine rules.
CONFIDENT = 0.9


@dataclass
class Checkup:
    """The doctor of one configuration, and what its written file changes."""

    label: str
    source: Path  # the configuration's file
    batches: list[str]
    extractions: int
    doctor: Doctor
    changes: dict[str, Any]  # target label -> its new validation tree
    taken: pd.DataFrame  # one row per target considered: what changed, or why not
    written: Path | None = None

    @property
    def configuration(self) -> dict[str, Any]:
        assert self.doctor.configuration is not None
        return self.doctor.configuration


@dataclass
class DoctorReport:
    """What `build` computed and where it wrote it (``out_dir``, ``files``)."""

    checkups: list[Checkup]
    out_dir: Path
    has_truth: bool
    take_suggestions: bool
    title: str = "servicetools configuration doctor"
    seconds: float = 0.0
    files: list[Path] = field(default_factory=list)

    @property
    def summary(self) -> str:
        from .doctor_page import summary

        return summary(self)


def configurations_in(folder: str | os.PathLike[str]) -> list[tuple[Path, dict[str, Any]]]:
    """``(path, configuration)`` of each ``*.json`` in ``folder`` that is a
    configuration (JSON that is not one, a classifier say, is passed over). A file that
    cannot be read as JSON is an error, as it is to the service given that folder."""
    path = Path(folder)
    if not path.is_dir():
        raise ValueError(f"{path}: no such folder of configurations")
    found = []
    for file in sorted(path.glob("*.json")):
        try:
            loaded = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{file}: cannot read the configuration: {exc}") from exc
        if isinstance(loaded, dict) and isinstance(loaded.get("extraction_targets"), list):
            found.append((file, loaded))
    return found


def _problems(configuration: Any) -> list[str]:
    """What ``servicetools config check`` says of a configuration object (the wire's
    schema alone when the service extra, which holds the full check, is missing)."""
    try:
        from ..service.core.configs import check_configuration
    except ImportError:
        from ..wire import errors

        return errors(configuration, "configuration")
    return check_configuration(configuration)


def _find(wanted: Mapping[str, Any], found: list[tuple[Path, dict[str, Any]]],
          folder: Path) -> tuple[Path, dict[str, Any]]:
    """The configuration a batch names, by id first (two configurations may share a
    name across folders, never an id in one), then by name."""
    name, id_ = wanted.get("name"), wanted.get("id")
    matches = [(p, c) for p, c in found if id_ and c.get("id") == id_]
    matches = matches or [(p, c) for p, c in found if name and c.get("name") == name]
    said = f"{name!r}" + (f" (id {id_!r})" if id_ else "")
    if not matches:
        known = ", ".join(sorted(repr(str(c.get("name") or c.get("id"))) for _, c in found))
        raise ValueError(f"no configuration {said} in {folder}: give --configurations the "
                         "folder of the configuration the batch was extracted with"
                         + (f" (this one has {known})" if known else " (it has none)"))
    if len(matches) > 1:
        raise ValueError(f"configuration {said} is in {len(matches)} files: "
                         + ", ".join(str(p) for p, _ in matches))
    path, configuration = matches[0]
    problems = _problems(configuration)
    if problems:
        raise ValueError(f"{path}: not a valid configuration: " + "; ".join(problems[:5]))
    return path, copy.deepcopy(configuration)


def _same_rules(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return json.dumps(a.get("rules"), sort_keys=True) == json.dumps(b.get("rules"),
                                                                    sort_keys=True)


def _group_at(tree: Mapping[str, Any], name: str) -> int | None:
    """The position of the group a finding names (`detectors` names a nameless group by
    its position, ``#2``)."""
    for i, group in enumerate(tree.get("rule_groups") or []):
        if str(group.get("name") or f"#{i}") == name:
            return i
    return None


def take(dr: Doctor, *, every: bool = False) -> tuple[dict[str, Any], pd.DataFrame]:
    """The new trees (target label -> tree) with the doctor's suggestions taken, and a
    frame of what was taken where, or why nothing was.

    Each group of a `REJECTING` finding is replaced by the finding's suggestion; with
    ``every``, each other target's best suggestion is added to its tree too.
    """
    changes: dict[str, Any] = {}
    notes: list[dict[str, Any]] = []

    def note(target: str, action: str, group: Any, rules: str, why: str) -> None:
        notes.append({"target": target, "action": action, "group": group,
                      "suggestion": rules, "why": why})

    rejecting = dr.findings.loc[dr.findings["finding"].isin(REJECTING)]
    for finding in rejecting.itertuples(index=False):
        target = str(finding.target)
        if not isinstance(finding.suggestion, Mapping):
            note(target, "left", finding.group, "",
                 f"{finding.finding}, but no mined rule keeps to the false-alarm limit on "
                 "the held-back documents: change it by hand (see the suggestions)")
            continue
        suggestion, refused = _for_a_file(finding.suggestion)
        if refused:
            note(target, "left", finding.group, _rules(suggestion),
                 f"{finding.finding}, but the mined rule is not valid in a configuration "
                 f"file ({refused})")
            continue
        tree = changes.get(target) or copy.deepcopy(dr.trees.get(target))
        position = _group_at(tree or {}, str(finding.group))
        if tree is None or position is None:
            continue
        groups = tree["rule_groups"]
        if any(_same_rules(g, suggestion) for g in groups):
            del groups[position]  # the suggestion is there already (another finding's)
        else:
            groups[position] = copy.deepcopy(suggestion)
        changes[target] = tree
        note(target, "replaced", finding.group, _rules(suggestion), str(finding.finding))
    if every:
        for target in dict.fromkeys(dr.suggestions["target"].astype(str)):
            best = dr.suggested(target)
            if best is None or target in changes:
                continue
            best, refused = _for_a_file(best)
            if refused:
                note(target, "left", None, _rules(best), "the best suggestion is not valid "
                     f"in a configuration file ({refused})")
                continue
            tree = copy.deepcopy(dr.trees.get(target)) or {"name": target.lower(),
                                                           "rule_groups": []}
            if any(_same_rules(g, best) for g in tree.get("rule_groups") or []):
                continue
            tree.setdefault("rule_groups", []).append(best)
            changes[target] = tree
            note(target, "added", None, _rules(best), "the best suggestion (--take-suggestions)")
    taken = pd.DataFrame(notes, columns=["target", "action", "group", "suggestion", "why"])
    # What each changed tree does to the same values (no re-extraction: see `what_if`).
    rates = {t: dr.what_if(t, tree) for t, tree in changes.items()}
    taken["pass_rate_before"] = [float(rates[t].pass_rate_before) if t in rates
                                 else float("nan") for t in taken["target"]]
    taken["pass_rate_after"] = [float(rates[t].pass_rate_after) if t in rates
                                else float("nan") for t in taken["target"]]
    return changes, taken


def _for_a_file(group: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """A mined group as a configuration file takes it, and what the file's schema still
    refuses in it ("" when nothing). The rule language's checker (`check_tree`) accepts
    bounds on an ``amount`` rule that the configuration schema refuses
    (docs/configurations.md): any are dropped, which can only pass more values, never
    raise a false alarm the figures did not count."""
    from ..wire import errors

    out = copy.deepcopy(dict(group))
    for rule in out.get("rules") or []:
        if isinstance(rule, dict) and rule.get("type") == "amount":
            rule.pop("min", None)
            rule.pop("max", None)
    problems = errors({"name": "mined", "rule_groups": [out]}, "validation_tree")
    return out, "; ".join(problems)


def _rules(group: Mapping[str, Any]) -> str:
    from ..analysis.audit.detectors import describe_rule

    return " | ".join(describe_rule(r) for r in group.get("rules") or []
                      if isinstance(r, Mapping))


def _file_name(label: str) -> str:
    """A configuration's name as a file name: ``my invoices/2`` -> ``my-invoices-2.json``."""
    return (re.sub(r"[^\w.-]+", "-", label).strip("-.") or "configuration") + ".json"


def build(batches: Any, out_dir: str | os.PathLike[str] = "doctor", *, truth: Any = None,
          configurations: str | os.PathLike[str] | None = None,
          take_suggestions: bool = False, confident: float = CONFIDENT,
          title: str | None = None, write: bool = True) -> DoctorReport:
    """Run the doctor on each configuration of ``batches`` and write the page and the
    changed configurations into ``out_dir``.

    ``batches``: a `Batch`, a saved batch file, or a list (or ``{label: batch}``) of
    them. ``truth``: anything `audit.truth` reads (a folder of truth files, a CSV/JSON
    table, a corrections ledger or its ``.parquet`` file), or None. ``configurations``:
    the folder of the configurations the batches were extracted with (default: the
    bundled ones). ``take_suggestions``: take every target's best suggestion, not only
    those that replace a rule rejecting right values. ``write=False`` computes without
    writing.
    """
    start = time.perf_counter()
    folder = Path(configurations) if configurations is not None else CONFIGURATIONS
    found = configurations_in(folder)
    loaded = batches_of(batches)
    groups: dict[tuple[Any, Any], list[tuple[str, Batch]]] = {}
    for label, batch in loaded.items():
        key = (batch.configuration.get("id"), batch.configuration.get("name"))
        if not any(key):
            raise ValueError(f"{label}: the batch does not say which configuration it was "
                             "extracted with")
        groups.setdefault(key, []).append((label, batch))
    expected = None
    if truth is not None:
        source = truth_source(truth)
        expected = source if isinstance(source, pd.DataFrame) else audit.truth(source)
    # Every configuration is found before any is doctored: a missing one fails at once.
    located = {key: _find({"id": key[0], "name": key[1]}, found, folder) for key in groups}
    checkups = []
    for key, members in groups.items():
        path, configuration = located[key]
        results = [b for _, b in members]
        fields, cells = frames.fields(results), frames.cells(results)
        dr = audit.doctor(fields, expected, configuration=configuration, cells=cells,
                          confident=confident)
        changes, taken = take(dr, every=take_suggestions)
        label = str(configuration.get("name") or configuration.get("id"))
        extractions = {str(x) for frame in (fields, cells)
                       for x in frame["extraction_id"].astype(object).dropna()}
        checkups.append(Checkup(label=label, source=path, batches=[n for n, _ in members],
                                extractions=len(extractions), doctor=dr, changes=changes,
                                taken=taken))
    report = DoctorReport(checkups=checkups, out_dir=Path(out_dir),
                          has_truth=expected is not None, take_suggestions=take_suggestions,
                          title=title or DoctorReport.title)
    if write:
        _write(report)
    report.seconds = time.perf_counter() - start
    return report


def _write(report: DoctorReport) -> None:
    from .doctor_page import html_page

    out = report.out_dir / "configurations"
    out.mkdir(parents=True, exist_ok=True)
    for checkup in report.checkups:
        path = checkup.doctor.write(out / _file_name(checkup.label), checkup.changes)
        problems = _problems(json.loads(path.read_text(encoding="utf-8")))
        if problems:  # the doctor's trees are checked one by one; this is the whole file
            raise ValueError(f"{path}: the changed configuration does not pass the check: "
                             + "; ".join(problems[:5]))
        checkup.written = path
        report.files.append(path)
    page = report.out_dir / "index.html"
    page.write_text(html_page(report), encoding="utf-8")
    report.files.append(page)
