"""The engine over the real sets: accuracy per target on each half, fill and ceiling.

Usage: ``make bench-sets`` or ``.venv/bin/python bench/sets.py [--root DIR] [--sets S ...]
[--cache DIR]``; by default the sets of other kinds of documents (adforms-dev,
zugferd-dev, contracts-dev) with their configurations in bench/configurations. Halves
by ``../shared/data``'s rule: choose on the tuning half, report the check half.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import realsets  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=realsets.SHARED,
                        help="folder holding the sets")
    parser.add_argument("--sets", nargs="+", default=list(realsets.OTHER_SETS))
    parser.add_argument("--cache", type=Path,
                        default=Path.home() / ".cache" / "servicetools-bench",
                        help="words of documents already read, by content and reader code")
    args = parser.parse_args(argv)
    outcomes = realsets.collect(args.sets, args.root, args.cache)
    if not outcomes:
        print("no set found: nothing to measure", file=sys.stderr)
        return 1
    print(realsets.halves_table(outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
