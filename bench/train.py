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

It also fits the ``cells`` model: the share of table cells that are right over how
each was read (by a finder's table or the engine's own reader; how well the header
matched, rival targets, found columns the schema lacks, one-cell rows above it, whether
the other reader agrees, how its row, column and table are filled, ...), from the
engine's tables on the table sets under ``--root`` (icdar2013-dev, camelot-tests-dev,
real/'s table documents; tuning halves, as text and as scans), one target per truth
table as in bench/tables.py.

And the scoring of table candidates (engine/candidates.json): weights of the evidence
by which the engine chooses among the tables its readers propose at one place (camelot's
and pdfplumber's finders, its own reader; candidates.choose), fitted on the candidates
of the same table sets' tuning halves against their truth, the regularisation chosen by
cross-validation over documents (tables.fit_scoring). ``--only fields``, ``--only cells``
or ``--only candidates`` fits one and keeps the others as shipped.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import icdar  # noqa: E402
import realsets  # noqa: E402
import tables  # noqa: E402

OUT = ROOT / "servicetools" / "service" / "engine" / "calibration.json"
SCORING = ROOT / "servicetools" / "service" / "engine" / "candidates.json"


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
    parser.add_argument("--only", choices=("fields", "cells", "candidates"),
                        help="fit one model and keep the others as shipped")
    parser.add_argument("--scoring-out", type=Path, default=SCORING)
    args = parser.parse_args(argv)
    if args.only in (None, "candidates"):
        # First: the cells model below is fitted on the cells of the tables it chooses.
        if (args.root / "icdar2013-dev").exists():
            scoring = fit_candidates(args)
            args.scoring_out.write_text(json.dumps(scoring, indent=1) + "\n", encoding="utf-8")
            print(f"wrote {args.scoring_out}")
            from servicetools.service.engine.candidates import load_scoring
            load_scoring.cache_clear()
        else:
            print(f"{args.root / 'icdar2013-dev'} not found: the scoring of candidates is "
                  "kept as shipped", file=sys.stderr)
        if args.only == "candidates":
            return 0
    shipped = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    table = shipped
    if args.only != "cells":
        table = {**fit_fields(args), **({"cells": shipped["cells"]} if "cells" in shipped else {})}
    if args.only != "fields":
        if (args.root / "icdar2013-dev").exists():
            table["cells"] = fit_cells(args)
        else:
            print(f"{args.root / 'icdar2013-dev'} not found: the cells model is kept as "
                  "shipped", file=sys.stderr)
    args.out.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


# Every real set, and the bundled generated sample (whole: it is ours, not a user's).
FIELD_SETS = [*realsets.SETS, *realsets.OTHER_SETS, realsets.SAMPLE]


def fit_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The shipped model: fitted on the tuning halves only (../shared/data's rule).

    Printed per set: the check half under the shipped model, and leave-one-set-out (a
    model fitted on every other set, both halves, scoring this whole set): ECE, and how
    often values given 0.9 or more are right.
    """
    outcomes = realsets.collect(FIELD_SETS, args.root, args.cache)
    tuning = [o for o in outcomes if o.set == realsets.SAMPLE or o.half == "tuning"]
    table = realsets.fit_map(tuning, args.method)
    table["sets"] = FIELD_SETS
    table["fitted_on"]["halves"] = "tuning (the bundled sample whole)"
    print(f"fields: {table['fitted_on']['values']} values of tuning halves, "
          f"kinds {sorted(table['kinds'])}")
    print(realsets.held_out_calibration(outcomes, table, args.method))
    return table


def table_sets(root: Path) -> list[tuple[str, list[icdar.Document]]]:
    """The table sets under `root`: icdar2013-dev, and camelot-tests-dev and real/'s table
    documents where present."""
    sets = [("icdar2013-dev", icdar.documents(root / "icdar2013-dev"))]
    if (root / "camelot-tests-dev").exists():
        sets.append(("camelot-tests-dev", icdar.camelot_documents(root / "camelot-tests-dev")))
    if (root / "real").exists():
        sets.append(("real/ table documents", icdar.real_documents(root / "real")))
    return sets


def fit_candidates(args: argparse.Namespace) -> dict[str, Any]:
    """The shipped scoring of candidates: fitted on the candidates the engine weighs on
    the tuning halves of the table sets (a PDF two sets hold counted once, in the
    first), each against its target's truth table. Printed: the mean F1 of the candidate
    chosen at each place with a choice, per set and half, beside the best possible."""
    from tqdm import tqdm

    weighed: list[tables.Weighed] = []
    for title, documents in table_sets(args.root):
        for document in tqdm(documents, desc=title, file=sys.stderr):
            weighed += [replace(w, set=title) for w in tables.run_engine(document).candidates]
    first: dict[str, str] = {}
    for w in weighed:
        first.setdefault(w.pdf, w.set)
    tuning = [w for w in weighed if w.half == "tuning" and first[w.pdf] == w.set]
    scoring = tables.fit_scoring(tuning, args.folds)
    scoring["fitted_on"]["halves"] = "tuning"
    for title in dict.fromkeys(w.set for w in weighed):
        for half in ("tuning", "check"):
            some = [w for w in weighed if w.set == title and w.half == half]
            print(f"candidates, {title}, {half}: chosen F1 "
                  f"{tables.chosen_f1(some, scoring['weights']):.3f}, best possible "
                  f"{tables.best_f1(some):.3f} (places with a choice)")
    print(f"candidates: {scoring['fitted_on']}")
    return scoring


def fit_cells(args: argparse.Namespace) -> dict[str, Any]:
    """The shipped ``cells`` model: fitted on the tuning halves of the table sets, each
    read as text and as scans (a PDF two sets hold counted once), and of the bundled
    invoices' line items. Printed: each set's
    check half under it, and each set where the model never saw it (tables.held_out_cells,
    as bench/tables.py prints it)."""
    from tqdm import tqdm

    sets = table_sets(args.root)
    cells: list[tables.CellOutcome] = []
    for title, documents in sets:
        for document in tqdm(documents, desc=title, file=sys.stderr):
            cells += [replace(c, set=title) for c in tables.run_engine(document).cells]
            # The same pages as scans (read by OCR): minutes of OCR, cached like the fields'.
            loaded = realsets.load_bytes(tables.scanned(document), "application/pdf", args.cache)
            cells += [replace(c, set=title, reading="ocr")
                      for c in tables.run_engine(document, loaded).cells]
    # The bundled invoices' line items (ours, like the fields' sample): the engine's own
    # reader on invoices, text and images.
    cells += tables.sample_cells(args.cache)
    sets.append((tables.SAMPLE_TITLE, []))
    first = {}
    for c in cells:
        first.setdefault(c.pdf, c.set)
    tuning = [c for c in cells if c.half == "tuning" and first[c.pdf] == c.set]
    model = tables.fit_cells(tuning)
    model["fitted_on"]["halves"] = "tuning"
    for title, _ in sets:
        for reading in ("text", "ocr"):
            check = [c for c in cells if c.set == title and c.reading == reading
                     and c.half == "check"]
            pairs = tables.scored_cells(model, check)
            print(f"cells, {title}, {'scans' if reading == 'ocr' else 'text'}, check half: "
                  f"ECE {realsets.ece(pairs):.3f} over {len(pairs)} cells")
    print(tables.held_out_cells(cells, args.folds))
    print(f"cells: {model['fitted_on']['cells']} cells of the tuning halves, "
          f"{model['fitted_on']['documents']} documents")
    return model


if __name__ == "__main__":
    sys.exit(main())
