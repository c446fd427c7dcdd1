"""``python -m servicetools.datagen --out DIR --count N --seed S``"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from servicetools.datagen.generator import FORMATS, KINDS, generate


def _names(known: Sequence[str]) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        names = [name.strip() for name in text.split(",") if name.strip()]
        unknown = sorted(set(names) - set(known))
        if unknown or not names:
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(unknown) or 'empty list'}; choose from {','.join(known)}"
            )
        return names

    return parse


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m servicetools.datagen",
        description="Generate invoices and receipts with ground truth (deterministic by seed).",
    )
    parser.add_argument("--out", type=Path, required=True, help="writes OUT/documents, OUT/truth")
    parser.add_argument("--count", type=int, default=40, help="number of documents (default 40)")
    parser.add_argument("--seed", type=int, default=2026, help="random seed (default 2026)")
    parser.add_argument(
        "--kinds",
        type=_names(KINDS),
        default=list(KINDS),
        help=f"comma-separated, from {','.join(KINDS)}",
    )
    parser.add_argument(
        "--formats",
        type=_names(FORMATS),
        default=list(FORMATS),
        help=f"comma-separated, from {','.join(FORMATS)}",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    args = parser.parse_args(argv)
    if args.count < 0:
        parser.error("--count must not be negative")

    def show(path: Path) -> None:
        if not args.quiet:
            print(path, file=sys.stderr)

    written = generate(args.out, args.count, args.seed, args.kinds, args.formats, progress=show)
    print(
        f"wrote {len(written)} documents under {args.out / 'documents'}, "
        f"truth under {args.out / 'truth'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
