"""Summaries of extracted data, and its quality against ground truth.

Summaries (no truth needed), each a DataFrame indexed by ``target`` (a field's name, or
``"<table> / <header>"`` for a table column), in configuration order:

- `scorecard`: fill rate, confidence (n, mean, quantiles, share under a threshold),
  validation pass rate, the top failed condition, the correction rate when a corrections
  ledger is given;
- `failures`: per target and condition, how many values failed, with examples;
- `documents`: per extraction (document);
- `drift`: per target between two batches: confidence shift with a p-value, fill and
  failure rate changes.

Quality against ground truth (`truth` reads it: the dev set's truth files, a CSV/JSON of
expected values, or the corrections ledger of the review widgets):

- `grade`: one row per compared value, ``correct`` after normalisation (`normalize`);
- `accuracy`, `calibration` (reliability table, ECE, Brier), `thresholds` (automation
  vs error rate, recommended threshold for an error budget), `compare` (two batches or
  configurations on the same documents).

Without truth for this batch: `estimate` (accuracy per target with a 90% interval, from
a reference batch's truth and, better, a random audit sample of this batch).

The configuration itself: `doctor` (errors by kind, rules as detectors, mined rule
suggestions, findings per target, and what a changed rule would do, from a saved batch).

Every function takes frames from `servicetools.frames` or anything those converters
take (then it converts), or a `frames.Dataset` (then DuckDB aggregates the Parquet
files, and the result is the same frame). Each audit is written once: it asks its source
(`sources`) for per-group statistics (`grouped`), which pandas computes over the frames
(`grouped_frames`) and DuckDB over the files (`grouped_dataset`), and makes its frame
from them. Missing confidences are left out of confidence statistics, never counted as
zero.

The modules, in reading order (the functions above are re-exported here):

=================  ===============================================================
`arguments`        checks of thresholds and target names, with messages that say how
`normalisation`    `normalize`, `parse_date`, `parse_amount`: values as compared
`labels`           the target label of a value, from its parts (the one rule)
`work`             the work frame: fields and cells stacked, labelled by target
`workview`         the same for a dataset: DuckDB's ``work`` view of its files
`grouped`          per-group statistics, what every source gives every audit
`grouped_frames`   those statistics of frames in memory (pandas)
`grouped_dataset`  those statistics of a dataset (DuckDB)
`ground_truth`     `truth`, and the corrections ledger read as truth
`matching`         documents matched to their truth by path suffix
`graded_rows`      the rows of a dataset that a grade against the truth reads
`sources`          frames or a dataset, as the source an audit reads
`summaries`        `scorecard`, `failures`, `documents`
`significance`     `mann_whitney`, `ks_2samp`
`shift`            `drift`
`grading`          `grade`, `accuracy`, and the steps the other measures share
`reliability`      `calibration` and its `Calibration`
`automation`       `thresholds` and its `Thresholds`
`comparison`       `compare`
`estimation`       `estimate` without truth, its `ErrorModel`, `labelled` values
`error_kinds`      what kind of error each graded value is (missed, spurious, ...)
`detectors`        validation rule groups judged as detectors of wrong values
`suggestions`      rule groups mined from right values, measured where not mined
`doctor`           `doctor`: findings per target, what-if, the changed configuration
=================  ===============================================================

>>> import pandas as pd
>>> fields = pd.DataFrame({"target_name": ["Total", "Total", "Date"],
...                        "extraction_id": ["e1", "e2", "e1"],
...                        "value": ["1.00", "", "2024-01-02"],
...                        "confidence": [0.9, 0.2, 0.8],
...                        "validation_passed": [True, False, True]})
>>> scorecard(fields)[["n_values", "fill_rate", "confidence_mean", "pass_rate"]]
... # doctest: +NORMALIZE_WHITESPACE
        n_values  fill_rate  confidence_mean  pass_rate
target
Total          2        0.5             0.55        0.5
Date           1        0.5             0.80        1.0
"""

from __future__ import annotations

from .automation import RECOMMENDED_COLUMNS, SWEEP_COLUMNS, Thresholds, thresholds
from .comparison import COMPARE_COLUMNS, compare
from .detectors import DETECTOR_COLUMNS, detectors
from .doctor import ERROR_COLUMNS, FINDING_COLUMNS, Doctor, WhatIf, doctor
from .error_kinds import ERROR_KINDS
from .estimation import ESTIMATE_COLUMNS, ErrorModel, estimate, labelled
from .grading import ACCURACY_COLUMNS, ALL, GRADE_COLUMNS, accuracy, grade
from .ground_truth import TRUTH_COLUMNS, truth
from .normalisation import DATE_FORMATS, NORMALIZATIONS, normalize, parse_amount, parse_date
from .reliability import CALIBRATION_COLUMNS, CALIBRATION_TABLE_COLUMNS, Calibration, calibration
from .shift import DRIFT_COLUMNS, drift
from .significance import ks_2samp, mann_whitney
from .suggestions import SUGGESTION_COLUMNS, suggest
from .summaries import (
    DOCUMENT_COLUMNS,
    FAILURE_COLUMNS,
    SCORECARD_COLUMNS,
    documents,
    failures,
    scorecard,
)

__all__ = [
    "ACCURACY_COLUMNS",
    "ALL",
    "CALIBRATION_COLUMNS",
    "CALIBRATION_TABLE_COLUMNS",
    "COMPARE_COLUMNS",
    "Calibration",
    "DATE_FORMATS",
    "DETECTOR_COLUMNS",
    "DOCUMENT_COLUMNS",
    "DRIFT_COLUMNS",
    "Doctor",
    "ERROR_COLUMNS",
    "ERROR_KINDS",
    "ESTIMATE_COLUMNS",
    "ErrorModel",
    "FAILURE_COLUMNS",
    "FINDING_COLUMNS",
    "GRADE_COLUMNS",
    "NORMALIZATIONS",
    "RECOMMENDED_COLUMNS",
    "SCORECARD_COLUMNS",
    "SUGGESTION_COLUMNS",
    "SWEEP_COLUMNS",
    "TRUTH_COLUMNS",
    "Thresholds",
    "WhatIf",
    "accuracy",
    "calibration",
    "compare",
    "detectors",
    "doctor",
    "documents",
    "drift",
    "estimate",
    "failures",
    "grade",
    "ks_2samp",
    "labelled",
    "mann_whitney",
    "normalize",
    "parse_amount",
    "parse_date",
    "scorecard",
    "suggest",
    "thresholds",
    "truth",
]
