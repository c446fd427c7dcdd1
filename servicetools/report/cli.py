r"""``servicetools report``: a saved batch (or several) as a report for people.

    servicetools report runs/invoices.jsonl runs/receipts.jsonl --truth data/truth --out report
    servicetools report runs/week-48.jsonl --reference runs/dev.jsonl \
        --reference-truth data/truth --sample corrections.parquet --error-budget 0.02

Writes OUT/index.html with its plots and the frames (Parquet) under OUT/frames.

Without truth for the batches, --reference (saved batches) and --reference-truth (their
truth files, or a corrections ledger as .parquet) estimate each target's accuracy with a
90% interval, and say how many of the riskiest values to review so that the rest are
expected to be wrong within --error-budget. --sample adds a random audit sample of the
batches (a corrections ledger: the rows a review plan drew for its audit; or truth of a
random sample): the estimate is then prediction-powered. With --truth, the estimate
stands beside the measured accuracy.

Exit status: 0 when written; 2 when a batch file, the truth, the reference or the sample
cannot be read, or the options do not go together (--reference without
--reference-truth, --sample without --reference).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``report`` on the ``add_subparsers()`` object of the main parser."""
    from . import BY, ERROR_BUDGET
    from .inputs import add_inputs

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "report", help="write the HTML report of saved batches",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_inputs(parser)
    parser.add_argument("--reference", nargs="+", metavar="BATCH.jsonl",
                        help="saved batches with truth (--reference-truth) to estimate "
                             "accuracy without truth for BATCH.jsonl")
    parser.add_argument("--reference-truth", metavar="DIR_OR_LEDGER",
                        help="the reference batches' truth (as --truth)")
    parser.add_argument("--sample", metavar="LEDGER",
                        help="a random audit sample of the batches: a corrections ledger "
                             ".parquet (its rows marked audit) or truth of a random sample")
    parser.add_argument("--by", choices=BY, default="configuration_name",
                        help="one section per configuration (default), or 'none'")
    parser.add_argument("--error-budget", type=float, default=ERROR_BUDGET,
                        help="share of wrong values tolerated among auto-accepted ones, "
                             "for the threshold with --truth and the values to review "
                             f"with --reference (default {ERROR_BUDGET:g})")
    parser.add_argument("--title", help="the page's title")
    parser.add_argument("--out", default="report", metavar="DIR",
                        help="folder for index.html, its plots and frames (default report)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from . import build

    if args.reference and not args.reference_truth:
        return _refuse("--reference needs --reference-truth DIR_OR_LEDGER: the truth files "
                       "or corrections ledger of the reference batches")
    if args.reference_truth and not args.reference:
        return _refuse("--reference-truth needs --reference BATCH.jsonl: the batches it "
                       "grades")
    if args.sample and not args.reference:
        return _refuse("--sample corrects an estimate made from a reference: give "
                       "--reference BATCH.jsonl and --reference-truth DIR_OR_LEDGER too")
    try:
        report = build(args.batches, args.out, truth=args.truth, reference=args.reference,
                       reference_truth=args.reference_truth, sample=args.sample,
                       by=args.by, error_budget=args.error_budget, title=args.title)
    except (OSError, ValueError) as exc:
        print(f"servicetools report: {exc}", file=sys.stderr)
        return 2
    print(report.summary)
    return 0


def _refuse(message: str) -> int:
    print(f"servicetools report: {message}", file=sys.stderr)
    return 2
