"""``servicetools report``: a saved batch (or several) as a report for people.

    servicetools report runs/invoices.jsonl runs/receipts.jsonl --truth data/truth --out report

Writes OUT/index.html with its plots and the frames (Parquet) under OUT/frames. Exit
status: 0 when written, 2 when a batch file or the truth cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``report`` on the ``add_subparsers()`` object of the main parser."""
    from . import BY, ERROR_BUDGET

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "report", help="write the HTML report of saved batches",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("batches", nargs="+", metavar="BATCH.jsonl",
                        help="batch files written by `servicetools extract` or Batch.save")
    parser.add_argument("--truth", metavar="DIR",
                        help="ground truth (a folder of truth files, or a CSV/JSON table)")
    parser.add_argument("--by", choices=BY, default="configuration_name",
                        help="one section per configuration (default), or 'none'")
    parser.add_argument("--error-budget", type=float, default=ERROR_BUDGET,
                        help="share of wrong values tolerated among auto-accepted ones "
                             f"(default {ERROR_BUDGET:g})")
    parser.add_argument("--title", help="the page's title")
    parser.add_argument("--out", default="report", metavar="DIR",
                        help="folder for index.html, its plots and frames (default report)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from . import build

    try:
        report = build(args.batches, args.out, truth=args.truth, by=args.by,
                       error_budget=args.error_budget, title=args.title)
    except (OSError, ValueError) as exc:
        print(f"servicetools report: {exc}", file=sys.stderr)
        return 2
    print(report.summary)
    return 0
