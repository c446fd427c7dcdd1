"""The doctor's page and its terminal summary, from a computed `DoctorReport`.

Written as the report's page is (`markup`: its style and tables; `page`: its number
formats), for the person who owns the configuration: per configuration, what the written
file changes first, then the findings (per target, most values affected first), the
values by kind of error, the rule groups as detectors and the mined suggestions with
their held-back figures.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..analysis.audit.error_kinds import ERROR_KINDS
from .markup import esc, html_table, page_shell, plural, shorten, slug_of
from .page import count, pct

if TYPE_CHECKING:
    from .doctor import Checkup, DoctorReport

#: How the page names each error kind.
KIND_NAMES = {"missed": "missed", "spurious": "spurious", "format_only": "format only",
              "other_target": "another target's", "wrong": "wrong"}
#: Findings the terminal summary lists per configuration before "... and N more".
SUMMARY_FINDINGS = 8

_GLOSSARY = [
    ("error kinds", "of the values graded against the truth: missed (the truth has a value, "
     "none was read), spurious (a value where the truth has none), format only (equal to the "
     "truth once dates, amounts, case and spaces are normalised), another target's (the "
     "truth of another target of the same document), wrong (anything else). Values are "
     "compared with whitespace normalised only, so a value right but for its form counts "
     "as an error here (the report compares dates and amounts as values)"),
    ("rule group as a detector", "a group of a validation tree fails a value when none of "
     "its rules passes it; a false alarm is a right value it fails, a catch a wrong value "
     "it fails. Blank values are judged only by 'not empty'"),
    ("suggestion", "a rule group mined from the right values of about half the documents "
     "(split by a hash of their names) and measured on the other half, the held-back "
     "documents: it meets the limit when it fails at most 2% of their right values. "
     "Without truth it is mined from values read with high confidence, and its false "
     "alarms are counted on the held-back confident values"),
    ("pass rate before → after", "the share of the batch's values that pass the target's "
     "tree, with the old tree and the written one, on the same values: nothing is "
     "extracted again (the engine also consults rules when it chooses among candidates, "
     "so a new extraction may read some values differently: over 42 planted changes on "
     "real sets, documents read alike passed or failed alike in every case, and 99.6% of "
     "all documents did, `make bench-doctor`)"),
]


def _rate(n: Any, of: Any) -> str:
    """``"3 of 17"``, or ``"–"`` when nothing was counted."""
    return "–" if not of or pd.isna(of) else f"{count(n)} of {count(of)}"


def _changes(checkup: Checkup) -> str:
    taken = checkup.taken
    where = checkup.written.name if checkup.written is not None else "the configuration"
    if taken.empty:
        return (f'<p class="lede">No rule group rejects right values: '
                f"<code>configurations/{esc(where)}</code> is the configuration as it was.</p>")
    rows = []
    for r in taken.itertuples(index=False):
        action = {"replaced": f"group '{r.group}' replaced by",
                  "added": "added",
                  "left": f"group '{r.group}' left as it is"}[str(r.action)]
        moved = "–" if pd.isna(r.pass_rate_before) else (
            f"{pct(r.pass_rate_before)} → {pct(r.pass_rate_after)}")
        rows.append([(str(r.target), ""), (action, ""), (shorten(str(r.suggestion)), "note"),
                     (moved, "n"), (str(r.why), "note")])
    return (f"<h3>What <code>configurations/{esc(where)}</code> changes</h3>"
            + html_table(["target", "change", "mined rule", "pass rate before → after", "why"],
                     rows))


def _findings(checkup: Checkup) -> str:
    found = checkup.doctor.findings
    if found.empty:
        return "<h3>Findings</h3><p class=\"lede\">Nothing found.</p>"
    rows = [[(str(f.target), ""), (str(f.rank), "n"), (str(f.finding), ""),
             ("" if pd.isna(f.group) else str(f.group), ""), (_rate(f.affected, f.n), "n"),
             (str(f.message), "note")]
            for f in found.itertuples(index=False)]
    return "<h3>Findings</h3>" + html_table(
        ["target", "rank", "finding", "rule group", "values affected", "what it means"], rows)


def _errors(checkup: Checkup, labelled: bool) -> str:
    errors = checkup.doctor.errors
    header = ["target", "values", "validation pass rate"]
    if labelled:
        header += ["graded", "right", *KIND_NAMES.values(), "accuracy", "for example"]
    rows = []
    for target, r in errors.iterrows():
        row = [(str(target), ""), (count(r["n_values"]), "n"), (pct(r["pass_rate"]), "n")]
        if labelled:
            examples = r["examples"] if isinstance(r["examples"], dict) else {}
            first = next((f"{KIND_NAMES[k]}: {', '.join(v[:2])}" for k, v in examples.items()
                          if v), "")
            row += [(count(r["n_labelled"]), "n"), (count(r["right"]), "n")]
            row += [(count(r[k]), "n") for k in ERROR_KINDS]
            row += [(pct(r["accuracy"]), "n"), (shorten(first), "note")]
        rows.append(row)
    heading = "Values by kind of error" if labelled else "Values and pass rates"
    return f"<h3>{heading}</h3>" + html_table(header, rows)


def _detectors(checkup: Checkup, labelled: bool) -> str:
    table = checkup.doctor.detectors
    if table.empty:
        return ("<h3>Rule groups as detectors</h3><p class=\"lede\">The configuration has "
                "no validation rules.</p>")
    header = ["target", "rule group", "rules", "values judged", "fails"]
    if labelled:
        header += ["false alarms (right values failed)", "catches (wrong values failed)"]
    header += ["verdict", "for example"]
    rows = []
    for d in table.itertuples(index=False):
        row = [(str(d.target), ""), (str(d.group), ""), (shorten(str(d.rules), 60), "note"),
               (count(d.n_values), "n"), (pct(d.fail_rate), "n")]
        if labelled:
            row += [(_rate(d.false_alarms, d.n_right), "n"), (_rate(d.catches, d.n_wrong), "n")]
        examples = list(d.false_alarm_examples) or list(d.catch_examples)
        row += [(str(d.verdict), ""), (shorten(", ".join(repr(x) for x in examples[:3])),
                                       "note")]
        rows.append(row)
    return "<h3>Rule groups as detectors</h3>" + html_table(header, rows)


def _suggestions(checkup: Checkup, labelled: bool) -> str:
    table = checkup.doctor.suggestions
    if table.empty:
        return ("<h3>Suggestions</h3><p class=\"lede\">Too few right values to mine rules "
                "from (at least 5 per target on the mined half).</p>")
    note = "" if labelled else (
        '<p class="warn">No truth: mined from confident values (confidence ≥ '
        f"{esc(_confident(table))}) and measured on the held-back documents' confident "
        "values; catches need truth.</p>")
    header = ["target", "kind", "rules", "mined from", "held-back right values",
              "false alarms"]
    if labelled:
        header.append("catches (held-back wrong values)")
    header += ["meets the limit", "best"]
    rows = []
    for s in table.itertuples(index=False):
        row = [(str(s.target), ""), (str(s.kind), ""), (shorten(str(s.rules), 70), "note"),
               (count(s.n_mined), "n"), (count(s.n_right_held), "n"),
               (f"{count(s.false_alarms)} ({pct(s.false_alarm_rate)})", "n")]
        if labelled:
            row.append((_rate(s.catches, s.n_wrong_held), "n"))
        row += [("yes" if s.meets else "no", ""), ("best" if s.best else "", "")]
        rows.append(row)
    return "<h3>Suggestions</h3>" + note + html_table(header, rows)


def _confident(table: pd.DataFrame) -> str:
    said = str(table["mined_from"].iloc[0])
    return said.split(">=")[-1].split("(")[0].strip() if ">=" in said else "?"


def _section(checkup: Checkup, report: DoctorReport) -> str:
    dr = checkup.doctor
    labelled = dr.labelled
    lede = (f"{esc(checkup.source)}; {plural(len(checkup.batches), 'batch')} "
            f"({esc(', '.join(checkup.batches))}), {count(checkup.extractions)} extractions, "
            f"{count(len(dr.values))} values"
            + ("" if labelled else "; no truth: error kinds, false alarms and catches "
               "need it"))
    return "\n".join([
        f'<h2 id="{slug_of(checkup.label)}">configuration: {esc(checkup.label)}</h2>',
        f'<p class="lede">{lede}</p>', _changes(checkup), _findings(checkup),
        _errors(checkup, labelled), _detectors(checkup, labelled),
        _suggestions(checkup, labelled)])


def _overview(report: DoctorReport) -> str:
    header = ["configuration", "extractions", "values", "validation pass rate"]
    if report.has_truth:
        header.append("accuracy")
    header += ["findings", "targets changed", "written"]
    rows = []
    for c in report.checkups:
        values = c.doctor.values
        errors = c.doctor.errors
        passed = (errors["pass_rate"] * errors["n_values"]).sum()
        checked = errors["pass_rate"].notna().any()
        row = [(c.label, ""), (count(c.extractions), "n"), (count(len(values)), "n"),
               (pct(passed / errors["n_values"].sum()) if checked else "–", "n")]
        if report.has_truth:
            graded = errors["n_labelled"].sum()
            row.append((pct(errors["right"].sum() / graded) if graded else "–", "n"))
        row += [(count(len(c.doctor.findings)), "n"), (count(len(c.changes)), "n"),
                (f"configurations/{c.written.name}" if c.written else "–", "")]
        rows.append(row)
    return html_table(header, rows)


def html_page(report: DoctorReport) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime())
    truth_note = "" if report.has_truth else (
        '<p class="warn">No ground truth was given (<code>--truth DIR</code>): the page has '
        "what needs none (pass rates, rule groups that fail every value or none, "
        "suggestions mined from confident values); error kinds, false alarms and catches "
        "need truth or a corrections ledger.</p>")
    taking = ("every target's best suggestion, and the suggestion for each rule group "
              "that rejects right values in its place" if report.take_suggestions else
              "the suggestion for each rule group that rejects right values, in its place "
              "(<code>--take-suggestions</code> takes every target's best)")
    body = [f"<h1>{esc(report.title)}</h1>",
            f'<p class="lede">{plural(len(report.checkups), "configuration")}, made '
            f"{esc(stamp)}. Each written configuration takes {taking}; check it with "
            "<code>servicetools config check</code> and extract again to see what it "
            "reads.</p>", truth_note, _overview(report)]
    body += [_section(c, report) for c in report.checkups]
    return page_shell(report.title, body, _GLOSSARY, "What the tables mean")


def summary(report: DoctorReport) -> str:
    """What a terminal prints: per configuration its first findings and the file written."""
    lines = [f"{report.title}: {plural(len(report.checkups), 'configuration')}"
             + ("" if report.has_truth else " (no truth: what needs none)"), ""]
    for c in report.checkups:
        # Across targets, most values affected first: the page keeps them per target.
        found = c.doctor.findings.sort_values("affected", ascending=False, kind="stable")
        lines.append(f"{c.label}: {count(c.extractions)} extractions, "
                     f"{plural(len(found), 'finding')}")
        for f in found.head(SUMMARY_FINDINGS).itertuples(index=False):
            lines.append(f"  {str(f.target)[:30]:<30} {f.finding}: {shorten(str(f.message))}")
        if len(found) > SUMMARY_FINDINGS:
            lines.append(f"  … and {len(found) - SUMMARY_FINDINGS} more (on the page)")
        for t in c.taken.itertuples(index=False):
            if t.action != "left":
                lines.append(f"  changed {t.target}: {t.action} {t.suggestion} (pass rate "
                             f"{pct(t.pass_rate_before)} → {pct(t.pass_rate_after)})")
        if c.written is not None:
            lines.append(f"  written: {c.written}")
        lines.append("")
    lines.append(f"Page: {report.out_dir / 'index.html'}  ({len(report.files)} files, "
                 f"{report.seconds:.0f} s)")
    return "\n".join(lines)
