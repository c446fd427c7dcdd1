"""Reports for people: any batch, audited per configuration, as a page with its frames.

    servicetools report runs/invoices.jsonl runs/receipts.jsonl --truth data/truth --out report

`build` takes batches (`Batch` objects or the ``.jsonl`` files `Batch.save` writes) and
ground truth (optional), audits the values per configuration (``by``; two configurations
that share a target name, say ``Tax``, are kept apart) and writes ``OUT/index.html``
with its plots (PNG) and every frame as Parquet under ``OUT/frames/``. `Report.summary`
is the short text a terminal prints. The demo (`servicetools.demo`) builds its page here.

Without truth the page has the scorecard, confidence and failures; with it, accuracy,
calibration and the auto-accept threshold that keeps wrong values within
``error_budget`` (or why none does) per target.

With a ``reference`` (batches whose truth, ``reference_truth``, is known: a dev set,
last month's batch and its corrections ledger) the page also estimates each target's
accuracy without this batch's truth, with a 90% interval (`audit.estimate`; marked
unreliable where the reference is small or this batch lies outside it), and says how
many of the riskiest values to review so that the rest are expected to be wrong within
``error_budget`` (`review.to_reach`). An audit ``sample`` of the batch (a ledger whose
``audit`` rows a review plan drew at random, or truth of a random sample) makes the
estimate prediction-powered. With truth too, the estimate stands beside the measured
accuracy.

`doctor` is the configuration doctor's page (``servicetools doctor``, `doctor_cli`):
per configuration, what `audit.doctor` finds, and the configuration with its suggestions
taken; `doctor_page` writes it. Both pages read batches and truth through `inputs` and
are made of `markup` (style, tables); `page` is the report's.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..analysis import audit, frames, review
from ..analysis.audit.arguments import check_rate
from ..analysis.ledger import Ledger
from ..client import Batch
from ..extras import require_all
from .inputs import batches_of, truth_source

__all__ = [
    "BY",
    "ERROR_BUDGET",
    "LEVEL",
    "NORMALIZE",
    "Report",
    "Section",
    "build",
]

#: The share of wrong values tolerated among auto-accepted ones.
ERROR_BUDGET = 0.02
#: Dates and amounts are compared as values, not as printed strings.
NORMALIZE = ("whitespace", "dates", "amounts")
#: What a report can be split by: a column of the frames, or ``"none"`` for one section.
BY = ("configuration_name", "configuration_id", "none")
#: The level of the estimated accuracy's interval.
LEVEL = 0.9


@dataclass
class Section:
    """The audit of one configuration (``label``), or of everything with ``by="none"``."""

    label: str
    extractions: int
    fields: pd.DataFrame
    cells: pd.DataFrame
    scorecard: pd.DataFrame
    graded: pd.DataFrame | None = None
    accuracy: pd.DataFrame | None = None
    calibration: audit.Calibration | None = None
    thresholds: audit.Thresholds | None = None
    estimate: pd.DataFrame | None = None  # audit.estimate, with a reference
    review: pd.DataFrame | None = None  # review.to_reach for the error budget


@dataclass
class Report:
    """What a report computed and where it wrote it (``out_dir``, ``files``)."""

    batches: dict[str, Batch]
    sections: list[Section]
    fields: pd.DataFrame
    cells: pd.DataFrame
    by: str
    error_budget: float
    out_dir: Path
    title: str = "servicetools audit report"
    graded: pd.DataFrame | None = None
    seconds: float = 0.0
    files: list[Path] = field(default_factory=list)
    reference: pd.DataFrame | None = None  # the reference's labelled values
    sample: Any = None  # the audit sample, as `audit.estimate` takes it
    level: float = LEVEL  # of the estimates' intervals

    @property
    def has_truth(self) -> bool:
        return self.graded is not None

    @property
    def has_reference(self) -> bool:
        return self.reference is not None

    @property
    def estimate(self) -> pd.DataFrame | None:
        """Estimated accuracy per section and target (index ``(by, target)``), each
        section's `audit.ALL` row last; None without a reference."""
        parts = {s.label: s.estimate for s in self.sections if s.estimate is not None}
        if not parts:
            return None
        return pd.concat(parts, names=[self.by, "target"])

    @property
    def accuracy(self) -> pd.DataFrame | None:
        """Accuracy per section and target (index ``(by, target)``), each section's
        `audit.ALL` row last; None without truth."""
        parts = {s.label: s.accuracy for s in self.sections if s.accuracy is not None}
        if not parts:
            return None
        return pd.concat(parts, names=[self.by, "target"])

    @property
    def overall_accuracy(self) -> float:
        """The share of graded values that are right, over every section (NaN without truth)."""
        if self.graded is None or not len(self.graded):
            return float("nan")
        correct = self.graded["correct"].dropna().astype(bool)
        return float(correct.mean()) if len(correct) else float("nan")

    @property
    def summary(self) -> str:
        from .page import summary

        return summary(self)


def _only(frame: pd.DataFrame, column: str, keep: set[str]) -> pd.DataFrame:
    """The rows whose ``column`` is in ``keep``, holding only the categories they use."""
    part = frame.loc[frame[column].astype(object).isin(keep)] if column in frame.columns else (
        frame.iloc[0:0])
    cats = [c for c in part.columns if isinstance(part[c].dtype, pd.CategoricalDtype)]
    if cats:  # a section's plots and tables list its own targets, not every section's
        part = part.assign(**{c: part[c].cat.remove_unused_categories() for c in cats})
    return part


def _labels(fields: pd.DataFrame, cells: pd.DataFrame, by: str) -> list[str]:
    seen: dict[str, None] = {}
    for frame in (fields, cells):
        if by in frame.columns:
            for value in frame[by].astype(object).dropna():
                seen.setdefault(str(value))
    return list(seen)


def _extraction_ids(fields: pd.DataFrame, cells: pd.DataFrame) -> set[str]:
    ids: set[str] = set()
    for frame in (fields, cells):
        ids |= {str(x) for x in frame["extraction_id"].astype(object).dropna()}
    return ids


def _audit_sample(sample: Any) -> Any:
    """An audit sample as `audit.estimate` takes it: a ledger that marks audit rows as
    it is (`estimate` counts its reviewed rows as reviewed and the audit rows as the
    random sample of the rest); a ledger that says of every row that it was reviewed
    for its risk is refused; truth, or a ledger that does not say, is taken as given."""
    sample = truth_source(sample)
    frame = sample.frame if isinstance(sample, Ledger) else sample
    if not isinstance(frame, pd.DataFrame) or "audit" not in frame.columns or (
            "new_value" not in frame.columns):
        return sample
    marked = frame["audit"].astype("boolean")
    if marked.isna().all():
        return frame
    if not marked.fillna(False).any():
        raise ValueError("the audit sample is a ledger of values reviewed for their risk, "
                         "none drawn at random (its audit column is False throughout): "
                         "label the audit draws of servicetools.review.plan(..., audit=...) "
                         "in the review queue, or give truth of a random sample")
    return frame


def _reference_rows(reference: pd.DataFrame, by: str, label: str) -> pd.DataFrame:
    """The reference's values of a section's configuration, or all of them when it has
    none of that configuration (its estimate then says how few labels it has)."""
    if by == "none" or by not in reference.columns:
        return reference
    mine = reference.loc[reference[by].astype(object) == label]
    return mine if mine["correct"].notna().any() else reference


def _estimate(section: Section, reference: pd.DataFrame, sample: Any, error_budget: float,
              normalize: Any) -> None:
    """The section's estimated accuracy and how many values to review for the budget."""
    estimated = audit.estimate(section.fields, section.cells, reference=reference,
                               sample=sample, level=LEVEL, normalize=normalize)
    planned = review.plan(section.fields, section.cells, budget=0, audit=0,
                          reference=audit.ErrorModel.fit(reference))
    reach = review.to_reach(planned, error_budget)
    # In the scorecard's order, as the section's other tables.
    known = [str(t) for t in section.scorecard.index]
    order = [t for t in known if t in estimated.index]
    order += [t for t in estimated.index if t not in order and t != audit.ALL] + [audit.ALL]
    section.estimate = estimated.loc[order]
    section.review = reach.loc[[t for t in order if t in reach.index]]


def _section(label: str, fields: pd.DataFrame, cells: pd.DataFrame,
             graded: pd.DataFrame | None, error_budget: float) -> Section:
    ids = _extraction_ids(fields, cells)
    section = Section(label=label, extractions=len(ids), fields=fields, cells=cells,
                      scorecard=audit.scorecard(fields, cells))
    if graded is not None:
        # Graded rows carry no configuration: a section's are those of its extractions.
        graded = _only(graded, "extraction_id", ids)
        section.graded = graded
        section.accuracy = audit.accuracy(graded)
        section.calibration = audit.calibration(graded)
        section.thresholds = audit.thresholds(graded, error_budget=error_budget)
    return section


def build(batches: Any, out_dir: str | os.PathLike[str] = "report", *, truth: Any = None,
          reference: Any = None, reference_truth: Any = None, sample: Any = None,
          by: str = "configuration_name", error_budget: float = ERROR_BUDGET,
          normalize: Any = NORMALIZE, title: str | None = None, write: bool = True) -> Report:
    """Audit ``batches`` per ``by`` (one of `BY`) and write the report into ``out_dir``.

    ``batches``: a `Batch`, a saved batch file, or a list (or ``{label: batch}``) of
    them. ``truth``: anything `audit.truth` reads (a folder of truth files, a CSV,
    a corrections ledger or its ``.parquet`` file), or None. ``reference``: batches
    (as ``batches``) whose ``reference_truth`` (as ``truth``) calibrates the estimate of
    accuracy without truth. ``sample``: truth of a random audit sample of ``batches``
    (as ``truth``; of a ledger, the rows it marks ``audit``). ``write=False`` computes
    without writing.
    """
    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}, not {by!r}")
    check_rate("error_budget", error_budget, "rate")
    if reference is not None and reference_truth is None:
        raise ValueError("a reference needs its truth (reference_truth): truth files or a "
                         "corrections ledger of the reference batches")
    if reference is None and reference_truth is not None:
        raise ValueError("reference_truth without a reference: give the reference batches "
                         "it grades")
    if sample is not None and reference is None:
        raise ValueError("an audit sample corrects an estimate made from a reference: give "
                         "reference and reference_truth too")
    if write:  # before the work, not after: the page's plots need matplotlib
        require_all(["plots"], feature="the report")
    start = time.perf_counter()
    found = batches_of(batches)
    results = list(found.values())
    field_frame, cell_frame = frames.fields(results), frames.cells(results)
    graded = None
    if truth is not None:
        truth = truth_source(truth)
        expected = truth if isinstance(truth, pd.DataFrame) else audit.truth(truth)
        graded = audit.grade(field_frame, expected, cells=cell_frame, normalize=normalize)
    reference_rows = None
    if reference is not None:
        known = list(batches_of(reference).values())
        reference_rows = audit.labelled(frames.fields(known), truth_source(reference_truth),
                                        cells=frames.cells(known), normalize=normalize)
        if not reference_rows["correct"].notna().any():
            raise ValueError("the reference truth grades none of the reference's values: "
                             "do its documents (or the ledger's values) belong to the "
                             "reference batches?")
        sample = _audit_sample(sample) if sample is not None else None
    if by == "none":
        sections = [_section("all", field_frame, cell_frame, graded, error_budget)]
    else:
        sections = [_section(label, _only(field_frame, by, {label}),
                             _only(cell_frame, by, {label}), graded, error_budget)
                    for label in _labels(field_frame, cell_frame, by)]
    if reference_rows is not None:
        for section in sections:
            _estimate(section, _reference_rows(reference_rows, by, section.label), sample,
                      error_budget, normalize)
    report = Report(batches=found, sections=sections, fields=field_frame, cells=cell_frame,
                    by=by, error_budget=error_budget, out_dir=Path(out_dir),
                    title=title or Report.title, graded=graded, reference=reference_rows,
                    sample=sample)
    if write:
        from .page import write as write_page

        write_page(report)
    report.seconds = time.perf_counter() - start
    return report
