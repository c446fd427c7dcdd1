"""The report's page and its terminal summary, from a computed `Report`.

The page is read by people, often not the analyst: numbers are formatted (percentages,
two-decimal confidences, thousands separators), it fits 1,400 px without sideways
scrolling, every colour has a legend, and where a figure cannot be given (no threshold
within the budget, no graded values) it says why instead of showing "-":

>>> pct(0.925), conf(0.8712), count(12345), pct(float("nan"))
('92.5%', '0.87', '12,345', '–')
"""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..analysis import audit, frames
from .markup import esc, html_table, page_shell, plural, shorten, slug_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from . import Report, Section

#: Documents the failure heatmap shows at most: those with the most failed values.
HEATMAP_DOCUMENTS = 40
#: Failure reasons listed before "... and N more".
FAILURE_REASONS = 10
_DPI = 100


# -- formatting --------------------------------------------------------------------------
def pct(x: Any, digits: int = 1) -> str:
    """``0.925`` -> ``"92.5%"``; NaN or None -> ``"–"``."""
    return "–" if x is None or pd.isna(x) else f"{100 * float(x):.{digits}f}%"


def conf(x: Any) -> str:
    return "–" if x is None or pd.isna(x) else f"{float(x):.2f}"


def _ece(x: Any) -> str:
    return "–" if x is None or pd.isna(x) else f"{float(x):.3f}"


def count(x: Any) -> str:
    return "–" if x is None or pd.isna(x) else f"{int(x):,}"


# -- thresholds, explained ---------------------------------------------------------------
def threshold_note(th: audit.Thresholds, target: str) -> tuple[str, str]:
    """(threshold, what it means) for one target: the figure, or why there is none."""
    if target not in th.recommended.index:
        return "–", "no graded values"
    row = th.recommended.loc[target]
    n = int(row["n"])
    if n == 0:
        return "–", "no graded values"
    if not math.isnan(row["threshold"]):
        return conf(row["threshold"]), (
            f"accepts {pct(row['automation_rate'], 0)} ({count(row['n_accepted'])} of "
            f"{count(n)}), {pct(row['error_rate'])} of them wrong")
    sweep = th.sweep.loc[(th.sweep["target"] == target) & (th.sweep["n_accepted"] > 0)]
    if sweep.empty:
        return "none", f"none of the {count(n)} graded values has a confidence"
    best = sweep.sort_values(["error_rate", "threshold"], ascending=[True, False]).iloc[0]
    return "none", (
        f"no threshold keeps errors within {pct(th.error_budget, 0)}: the fewest is "
        f"{pct(best['error_rate'], 0)} ({count(best['n_errors'])} wrong of "
        f"{count(best['n_accepted'])} at ≥ {conf(best['threshold'])})")


# -- tables ------------------------------------------------------------------------------
def _target_table(section: Section, budget: float) -> str:
    card = section.scorecard
    header = ["target", "kind", "values", "fill rate", "mean confidence",
              "10th percentile", "validation pass rate", "commonest failure"]
    truth = section.accuracy is not None and section.thresholds is not None
    if truth:
        header += ["graded", "accuracy", "ECE", "auto-accept threshold", "at that threshold"]
    rows = []
    for target, r in card.iterrows():
        row = [(str(target), ""), (str(r["kind"]), ""), (count(r["n_values"]), "n"),
               (pct(r["fill_rate"]), "n"), (conf(r["confidence_mean"]), "n"),
               (conf(r["confidence_p10"]), "n"), (pct(r["pass_rate"]), "n"),
               ("" if pd.isna(r["top_condition"]) else shorten(str(r["top_condition"])),
                "note")]
        if truth:
            row += _graded_cells(section, str(target))
        rows.append(row)
    if truth:
        row = [(f"all {section.label} targets", ""), ("", ""),
               (count(card["n_values"].sum()), "n")] + [("", "")] * 5
        rows.append(row + _graded_cells(section, audit.ALL))
    return html_table(header, rows)


def _graded_cells(section: Section, target: str) -> list[tuple[str, str]]:
    assert section.accuracy is not None and section.thresholds is not None
    assert section.calibration is not None
    acc = section.accuracy
    graded = int(acc.loc[target, "n"]) if target in acc.index else 0
    ece = section.calibration.summary["ece"].get(target) if graded else None
    threshold, note = threshold_note(section.thresholds, target)
    return [(count(graded), "n"),
            (pct(acc.loc[target, "accuracy"]) if graded else "–", "n"),
            (_ece(ece), "n"), (threshold, "n"), (note, "note")]


def interval(low: Any, high: Any) -> str:
    """``(0.881, 0.94)`` -> ``"88.1–94.0%"``; ``"–"`` when either end is missing."""
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return "–"
    return f"{100 * float(low):.1f}–{100 * float(high):.1f}%"


def estimate_note(row: Any) -> str:
    """What the estimate of one target rests on, and why it is unreliable when it is."""
    if row["method"] == "none":
        return "no values"
    if not row["reliable"]:
        return f"unreliable: {row['note']}"
    if row["method"] == "prediction-powered":
        alone = interval(row["sample_low"], row["sample_high"])
        return (f"confidence corrected by {count(row['n_sample'])} audited values "
                f"(they alone: {pct(row['sample_accuracy'])}, {alone})")
    return "from confidence"


def to_review(section: Section, target: str) -> str:
    """``"120 (8%)"``: the riskiest values to review so that the rest are expected to be
    wrong within the budget."""
    reach = section.review
    if reach is None or target not in reach.index or not reach.loc[target, "n_values"]:
        return "–"
    row = reach.loc[target]
    return f"{count(row['n_review'])} ({pct(row['review_share'])})"


def _estimate_table(section: Section, report: Report) -> str:
    est = section.estimate
    assert est is not None
    measured = section.accuracy
    header = ["target", "values", "estimated accuracy", f"{pct(report.level, 0)} interval"]
    if measured is not None:
        header.append("measured accuracy")
    header += ["reference values", f"to review for ≤ {pct(report.error_budget, 0)} wrong",
               "what the estimate rests on"]
    rows = []
    for target, r in est.iterrows():
        label = f"all {section.label} targets" if target == audit.ALL else str(target)
        row = [(label, ""), (count(r["n"]), "n"), (pct(r["estimate"]), "n"),
               (interval(r["low"], r["high"]), "n")]
        if measured is not None:
            graded = target in measured.index and int(measured.loc[target, "n"]) > 0
            row.append((pct(measured.loc[target, "accuracy"]) if graded else "–", "n"))
        row += [(count(r["n_reference"]), "n"), (to_review(section, str(target)), "n"),
                (estimate_note(r), "note")]
        rows.append(row)
    return ("<h3>Accuracy estimated without truth</h3>" + html_table(header, rows))


def _overview(report: Report) -> str:
    header = ["section" if report.by == "none" else report.by.replace("_", " "),
              "extractions", "values", "validation pass rate"]
    if report.has_truth:
        header += ["graded", "accuracy", "ECE", "auto-accept threshold", "at that threshold"]
    if report.has_reference:
        header += ["estimated accuracy", f"{pct(report.level, 0)} interval",
                   f"to review for ≤ {pct(report.error_budget, 0)} wrong"]
    rows = []
    for s in report.sections:
        card = s.scorecard
        n_values = int(card["n_values"].sum()) if len(card) else 0
        failed = int(card["n_failed"].sum()) if len(card) else 0
        checked = n_values and card["pass_rate"].notna().any()
        row = [(s.label, ""), (count(s.extractions), "n"), (count(n_values), "n"),
               (pct(1 - failed / n_values) if checked else "–", "n")]
        if report.has_truth:
            row += _graded_cells(s, audit.ALL)
        if report.has_reference and s.estimate is not None:
            overall = s.estimate.loc[audit.ALL]
            row += [(pct(overall["estimate"]), "n"),
                    (interval(overall["low"], overall["high"]), "n"),
                    (to_review(s, audit.ALL), "n")]
        rows.append(row)
    return html_table(header, rows)


def _batches(report: Report) -> str:
    rows = []
    for label, b in report.batches.items():
        name = b.configuration.get("name") or b.configuration.get("id") or ""
        rows.append([(label, ""), (str(name), ""), (count(len(b)), "n"),
                     (count(len(b.results)), "n"), (count(len(b.failures)), "n"),
                     (f"{b.timings['total_s']:.0f} s" if "total_s" in b.timings else "–", "n")])
    return html_table(["batch", "configuration", "documents", "ended", "failed", "time"], rows)


def _failures(report: Report) -> str:
    failures = [f for b in report.batches.values() for f in b.failures]
    if not failures:
        return ""
    reasons = Counter((f.stage, f.reason) for f in failures)
    example: dict[tuple[str, str], str] = {}
    for f in failures:
        example.setdefault((f.stage, f.reason), f.document)
    rows = [[(stage, ""), (reason, "note"), (count(n), "n"), (str(example[stage, reason]), "")]
            for (stage, reason), n in reasons.most_common(FAILURE_REASONS)]
    more = len(reasons) - FAILURE_REASONS
    tail = f"<p>… and {more} more reasons (every failure is in the batch files).</p>" if (
        more > 0) else ""
    return (f'<h2>Documents without a result</h2><p class="warn">{count(len(failures))} of '
            f"{count(sum(len(b) for b in report.batches.values()))} documents gave no "
            "result; they are not in the figures below.</p>"
            + html_table(["stage", "reason", "documents", "for example"], rows) + tail)


# -- plots -------------------------------------------------------------------------------
def _figures(section: Section, budget: float) -> list[tuple[str, str, Figure]]:
    """(name, caption, figure) of one section's plots."""
    from ..analysis import plots

    th = section.thresholds
    threshold = th.threshold if th is not None and not math.isnan(th.threshold) else None
    out: list[tuple[str, str, Figure]] = [
        ("confidence", "Confidence of every value read, per target"
         + (" (dashed: the section's auto-accept threshold)" if threshold is not None else ""),
         plots.confidence_histograms(section.fields, section.cells, threshold=threshold)),
        ("failures", "Values failing validation per target and document; grey: the document "
         "has no value of the target",
         _figure_of(plots.failure_heatmap(section.fields, section.cells,
                                          documents=HEATMAP_DOCUMENTS))),
    ]
    if section.calibration is not None and th is not None:
        out += [
            ("reliability", "Accuracy against confidence; the number over each bar is how "
             "many values the bin holds", _figure_of(plots.reliability_diagram(
                 section.calibration))),
            ("automation", f"Share of values auto-accepted against the share of them "
             f"wrong, one point per threshold; error budget {pct(budget, 0)}",
             _figure_of(plots.automation_curve(th))),
        ]
    return out


def _figure_of(ax: Any) -> Figure:
    figure: Figure = ax.figure
    return figure


# -- the page ----------------------------------------------------------------------------
_GLOSSARY = [
    ("fill rate", "for a field, the share of extractions with a non-blank value; for a "
     "table column, the share of its cells that are not blank"),
    ("mean confidence, 10th percentile", "the service's confidence in the values read "
     "(0 to 1); one value in ten is below the 10th percentile"),
    ("validation pass rate", "the share of values passing the configuration's validation "
     "rules; the commonest failure is the condition that failed most often"),
    ("accuracy", "the share of graded values equal to the ground truth after "
     "normalising whitespace, dates and amounts"),
    ("ECE", "expected calibration error: how far confidence is from accuracy, averaged "
     "over confidence bins (0 is perfect)"),
    ("auto-accept threshold", "the lowest confidence at which the values accepted "
     "without review are wrong no more often than the error budget allows; 'none' when "
     "no threshold does, with the fewest errors any threshold reaches"),
    ("estimated accuracy, 90% interval", "accuracy without this batch's truth: each "
     "value's chance of being right, learnt on the reference batch from its confidence, "
     "validation outcome and emptiness, averaged per target; the interval holds the "
     "reference's and the batch's sampling noise, and, where the reference has few of "
     "the target's values, how far targets differ in calibration. With an audit sample "
     "it is "
     "prediction-powered: corrected by how far the chances were off on the audited values"),
    ("unreliable", "the reference has fewer than 30 labelled values of the target, or "
     "this batch's confidence or pass rate differs from the reference's: the estimate "
     "then extrapolates; an audit sample of the batch makes it reliable"),
    ("to review", "how many of the values most likely to be wrong to review (by the same "
     "chances) so that those accepted without review are expected to be wrong no more "
     "often than the error budget allows; for all targets, one budget shared by all"),
]


def _section_html(report: Report, section: Section, images: dict[str, list[tuple[str, str]]]
                  ) -> str:
    title = section.label if report.by == "none" else (
        f"{report.by.replace('_', ' ')}: {section.label}")
    parts = [f'<h2 id="{slug_of(section.label)}">{esc(title)}</h2>',
             f'<p class="lede">{count(section.extractions)} extractions, '
             f"{count(len(section.fields) + len(section.cells))} values</p>",
             _target_table(section, report.error_budget)]
    if section.estimate is not None:
        parts.append(_estimate_table(section, report))
    parts.append('<div class="plots">')
    for name, caption in images[section.label]:
        wide = ' class="wide"' if "failures" in name or "confidence" in name else ""
        parts.append(f'<figure{wide}><img src="{esc(name)}" alt="{esc(caption)}">'
                     f"<figcaption>{esc(caption)}</figcaption></figure>")
    parts.append("</div>")
    return "\n".join(parts)


def _cards(report: Report) -> str:
    documents = sum(len(b) for b in report.batches.values())
    ended = sum(len(b.results) for b in report.batches.values())
    cards = [("documents", count(documents)), ("with a result", count(ended)),
             ("values", count(len(report.fields) + len(report.cells)))]
    if report.has_truth:
        cards.append(("accuracy", pct(report.overall_accuracy)))
    return '<div class="cards">' + "".join(
        f'<div class="card"><b>{esc(v)}</b>{esc(k)}</div>' for k, v in cards) + "</div>"


def _reference_note(report: Report) -> str:
    """What the estimates rest on, or what they need."""
    if not report.has_reference:
        # With truth the measured accuracy is there: the missing estimate is no warning.
        kind = "lede" if report.has_truth else "warn"
        return (f'<p class="{kind}">No reference was given (<code>--reference BATCH '
                "--reference-truth DIR_OR_LEDGER</code>): an estimate of accuracy without "
                "truth, and how many values to review to keep errors within the budget, "
                "need a batch whose truth (or corrections ledger) shows how often values "
                "of each confidence are right.</p>")
    assert report.reference is not None
    labelled = int(report.reference["correct"].notna().sum())
    text = (f"Estimates learnt on {count(labelled)} labelled values of the reference, "
            f"{pct(report.reference['correct'].dropna().astype(bool).mean())} of them right")
    if report.sample is None:
        return f'<p class="lede">{esc(text)}; no audit sample of these batches was given.</p>'
    audited = sum(int(s.estimate.loc[audit.ALL, "n_sample"]) for s in report.sections
                  if s.estimate is not None)
    if not audited:
        return (f'<p class="lede">{esc(text)}.</p><p class="warn">The audit sample '
                "(<code>--sample</code>) labels none of these batches' values: the "
                "estimates are from confidence alone.</p>")
    return (f'<p class="lede">{esc(text)}; corrected by an audit sample of '
            f"{count(audited)} of these batches' values.</p>")


def html_page(report: Report, images: dict[str, list[tuple[str, str]]]) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime())
    truth_note = "" if report.has_truth else (
        '<p class="warn">No ground truth was given (<code>--truth DIR</code>): accuracy, '
        "calibration and auto-accept thresholds need it.</p>")
    truth_note += _reference_note(report)
    body = [f"<h1>{esc(report.title)}</h1>",
            f'<p class="lede">{plural(len(report.batches), "batch")}, made {esc(stamp)}; '
            f"error budget {pct(report.error_budget, 0)}</p>",
            _cards(report), truth_note, _overview(report), "<h3>Batches</h3>",
            _batches(report), _failures(report)]
    body += [_section_html(report, s, images) for s in report.sections]
    return page_shell(report.title, body, _GLOSSARY, "What the columns mean")


def write(report: Report) -> None:
    """Write the frames (Parquet), the plots (PNG) and ``index.html`` into ``out_dir``."""
    out = report.out_dir
    (out / "frames").mkdir(parents=True, exist_ok=True)
    tables: dict[str, pd.DataFrame] = {"fields": report.fields, "cells": report.cells}
    for s in report.sections:
        slug = slug_of(s.label)
        tables[f"{slug}-scorecard"] = s.scorecard
        if s.accuracy is not None and s.calibration is not None and s.thresholds is not None:
            tables |= {f"{slug}-accuracy": s.accuracy,
                       f"{slug}-calibration": s.calibration.summary,
                       f"{slug}-thresholds": s.thresholds.recommended}
        if s.estimate is not None and s.review is not None:
            tables |= {f"{slug}-estimate": s.estimate, f"{slug}-review": s.review}
    if report.graded is not None:
        tables["graded"] = report.graded
    for name, frame in tables.items():
        report.files.append(frames.save(frame, out / "frames" / f"{name}.parquet"))
    images: dict[str, list[tuple[str, str]]] = {}
    for s in report.sections:
        images[s.label] = []
        for name, caption, fig in _figures(s, report.error_budget):
            path = out / f"{slug_of(s.label)}-{name}.png"
            fig.savefig(path, dpi=_DPI, bbox_inches="tight")
            report.files.append(path)
            images[s.label].append((path.name, caption))
    page = out / "index.html"
    page.write_text(html_page(report, images), encoding="utf-8")
    report.files.append(page)


# -- the terminal ------------------------------------------------------------------------
def _estimated(est: pd.DataFrame, target: str) -> str:
    if target not in est.index:
        return "–"
    row = est.loc[target]
    return pct(row["estimate"]) + ("" if row["reliable"] else "*")


def _reviews(section: Section, target: str) -> str:
    reach = section.review
    if reach is None or target not in reach.index:
        return "–"
    return count(reach.loc[target, "n_review"])


def summary(report: Report) -> str:
    """The text a terminal prints: counts, a scorecard per section, the headline figures."""
    documents = sum(len(b) for b in report.batches.values())
    ended = sum(len(b.results) for b in report.batches.values())
    lines = [f"{report.title}: {documents} documents, {ended} with a result, "
             f"{documents - ended} without", ""]
    for s in report.sections:
        lines += [f"{s.label}: scorecard per target ({s.extractions} extractions)", ""]
        head = f"  {'target':<30} {'kind':<6} {'fill':>6} {'conf':>5} {'pass':>6}"
        est = s.estimate
        head += f" {'est':>7} {'review':>7}" if est is not None else ""
        head += f" {'acc':>6}  threshold" if s.accuracy is not None else ""
        lines += [head, "  " + "-" * (len(head) - 2)]
        for target, r in s.scorecard.iterrows():
            line = (f"  {str(target)[:30]:<30} {str(r['kind']):<6} {pct(r['fill_rate']):>6} "
                    f"{conf(r['confidence_mean']):>5} {pct(r['pass_rate']):>6}")
            if est is not None and s.review is not None:
                line += f" {_estimated(est, str(target)):>7} {_reviews(s, str(target)):>7}"
            if s.accuracy is not None and s.thresholds is not None:
                acc = s.accuracy["accuracy"].get(str(target))
                line += f" {pct(acc):>6}  {threshold_note(s.thresholds, str(target))[0]}"
            lines.append(line)
        if s.thresholds is not None and s.calibration is not None:
            threshold, note = threshold_note(s.thresholds, audit.ALL)
            lines += ["", f"  accuracy {pct(s.accuracy['accuracy'].get(audit.ALL))}, "
                          f"ECE {s.calibration.ece:.3f}; recommended auto-accept threshold "
                          f"{threshold}: {note}" if s.accuracy is not None else ""]
        if est is not None and s.review is not None:
            overall = est.loc[audit.ALL]
            lines += ["", f"  estimated accuracy {pct(overall['estimate'])} "
                          f"({pct(report.level, 0)} interval "
                          f"{interval(overall['low'], overall['high'])}, "
                          f"{estimate_note(overall)}); review "
                          f"{_reviews(s, audit.ALL)} of {count(overall['n'])} values for "
                          f"≤ {pct(report.error_budget, 0)} wrong among the rest"]
            if not est["reliable"].all():
                lines.append("  * unreliable: the reference is small or differs "
                             "(reasons on the page)")
        lines.append("")
    if report.has_truth:
        lines.append(f"Overall accuracy {pct(report.overall_accuracy)} over "
                     f"{count(report.graded['correct'].notna().sum())} graded values"
                     if report.graded is not None else "")
    lines.append(f"Report: {report.out_dir / 'index.html'}  ({len(report.files)} files, "
                 f"{report.seconds:.0f} s)")
    return "\n".join(lines)
