"""Fit the engine's confidence calibration (engine/calibration.json) from the dev sets.

Usage: ``make train`` or ``.venv/bin/python bench/train.py [--root DIR] [--cache DIR]``.

Runs the engine over the real development sets (sroie-dev, invoices-dev, real/; read
from ``--root``, never copied into the product) and the bundled generated sample, then
fits a logistic model of the share of values that are right over the raw score and how
each value was found (its kind, OCR or text layer, labelled by the configuration's own
words or a translation, below its label, with rivals, the issuer or address at the top,
by shape alone), plus one isotonic map per kind as the fallback, and writes them where
the engine reads them. The same run prints the figures
in-sample and cross-validated (5 folds by document) so the shipped map is not judged
on the documents it was fitted on.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import realsets  # noqa: E402

OUT = ROOT / "servicetools" / "service" / "engine" / "calibration.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=realsets.SHARED)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "servicetools-bench",
                        help="words of documents already read (OCR is most of the time)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--method", choices=("logistic", "isotonic", "platt"),
                        default="logistic",
                        help="logistic: over the raw score and how each value was found "
                             "(the default); isotonic/platt: per kind of field")
    args = parser.parse_args(argv)
    outcomes = realsets.collect([*realsets.SETS, realsets.SAMPLE], args.root, args.cache)
    table = realsets.fit_map(outcomes, args.method)
    table["sets"] = [*realsets.SETS, realsets.SAMPLE]
    args.out.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}: "
          f"{table['fitted_on']['values']} values, kinds {sorted(table['kinds'])}")
    held = realsets.cross_validated(outcomes, args.folds, args.method)
    for name in [*realsets.SETS, realsets.SAMPLE]:
        some = [o for o in held if o.set == name]
        f = realsets.figures(some)
        print(f"  {name:<14} {args.folds}-fold ECE {f['ece']:.3f}  Brier {f['brier']:.3f}  "
              f"({f['n']} values)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
