r"""``servicetools doctor``: what is wrong with the configurations of saved batches, and
each configuration with the fixes the doctor can measure.

    servicetools doctor runs/invoices.jsonl --truth data/truth --configurations my-configs \
        --out doctor
    servicetools doctor runs/week-48.jsonl --configurations my-configs --take-suggestions

Each batch's configuration is looked up in --configurations DIR (a *.json whose "id" or
"name" is the one the batch was extracted with; default: the bundled configurations).
Writes OUT/index.html (per configuration: what the written file changes, the findings
per target, values by kind of error, rule groups as detectors, mined suggestions with
their figures on held-back documents) and OUT/configurations/<name>.json: the
configuration with the doctor's suggestion in place of each rule group that rejects
right values (--take-suggestions: every target's best suggestion too), as `servicetools
config check` accepts it.

Without --truth, what needs none: pass rates, rule groups that fail every value or none,
and rules mined from values read with confidence of at least --confident.

Exit status: 0 when written; 2 when a batch file, the truth or a configuration cannot be
read, or a batch's configuration is not in the folder.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``doctor`` on the ``add_subparsers()`` object of the main parser."""
    from .doctor import CONFIDENT
    from .inputs import add_inputs

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "doctor", help="find what is wrong with the configurations of saved batches",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_inputs(parser)
    parser.add_argument("--configurations", metavar="DIR",
                        help="folder of the configurations the batches were extracted with "
                             "(default: the bundled ones)")
    parser.add_argument("--take-suggestions", action="store_true",
                        help="take every target's best suggestion, not only those that "
                             "replace a rule rejecting right values")
    parser.add_argument("--confident", type=float, default=CONFIDENT,
                        help="without --truth, the confidence from which values are taken "
                             f"as right to mine rules (default {CONFIDENT:g})")
    parser.add_argument("--title", help="the page's title")
    parser.add_argument("--out", default="doctor", metavar="DIR",
                        help="folder for index.html and configurations/ (default doctor)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from .doctor import build

    if not 0 <= args.confident <= 1:
        print(f"servicetools doctor: --confident is a confidence from 0 to 1, not "
              f"{args.confident:g}", file=sys.stderr)
        return 2
    try:
        made = build(args.batches, args.out, truth=args.truth,
                     configurations=args.configurations,
                     take_suggestions=args.take_suggestions, confident=args.confident,
                     title=args.title)
    except (OSError, ValueError) as exc:
        print(f"servicetools doctor: {exc}", file=sys.stderr)
        return 2
    print(made.summary)
    return 0
