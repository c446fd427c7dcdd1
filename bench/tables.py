"""Tables on real documents: the engine against the best table finders on ICDAR 2013.

For each document of the ICDAR 2013 dev set (``../shared/data/icdar2013-dev``, or
``--root``), in one run, on the same documents and the same measure (the competition's
adjacency relations, `icdar.py`):

- ``engine``: the engine in-process, as the service's pipeline calls it, with one
  table target per ground-truth table whose header_schema is the texts of the table's
  last header row and no region: what a user who knows the column names would write.
  Its output grid is the header row (the names, as printed) over the rows it read.
- ``pdfplumber``: ``page.extract_tables()`` with default settings (ruling lines), and
  ``pdfplumber text`` with the text strategy both ways;
- ``camelot lattice | stream | network | hybrid`` (camelot-py 2).

Matching, the same for every method: the tables a method found in a document (for the
engine, every table of every target, each counted once) are matched one-to-one to the
document's ground-truth tables, greedily by shared relations; a table matched to none
still counts in precision, a truth table matched to none in recall.

Also printed: seconds per page of each method (the engine's includes drawing every
page, as the service does), and the engine's cell confidence against correctness (a
cell is right when its text equals, spaces removed, the truth cell at its row and
column; ECE over 10 bins). The same figures follow for the 18 table documents of
``../shared/data/real`` (``--real``), whose truth gives rows and whether the first is
a header; their header rows end at the first row of mostly numbers.

Run: ``make bench-tables`` or ``.venv/bin/python bench/tables.py [--only NAME] [--limit N]``.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import icdar  # noqa: E402  (the bench folder is not a package)
from realsets import (  # noqa: E402  (one ECE, folds, model and cache)
    ece,
    fold_of,
    load_bytes,
    logistic_model,
)

Grid = icdar.Grid
Finder = Callable[[Path, list[int]], list[tuple[int, Grid]]]  # (page, grid) of each table


# -- the engine ---------------------------------------------------------------------------
def configuration(document: icdar.Document) -> dict[str, Any]:
    """One table target per ground-truth table, named by its last header row."""
    targets = []
    for number, table in enumerate(document.tables):
        names = icdar.header_names(table)
        targets.append({
            "id": f"t-{number}", "type": "table", "name": f"Table {number + 1}",
            "search_area": "all", "search_area_type": "all",
            "extraction_group_id": f"g-{number}", "creation_unix_timestamp": 0.0,
            "header_schema": [
                {"id": f"h-{number}-{position}", "name": name or f"column {position + 1}",
                 "position": position}
                for position, name in enumerate(names)],
        })
    return {"id": f"icdar-{document.name}", "name": f"icdar-{document.name}",
            "description": "Tables named by their column headings.",
            "extraction_targets": targets}


@dataclass(frozen=True)
class CellOutcome:
    """One engine cell: its document, confidence, whether it is right, how it was read."""

    document: str
    confidence: float
    right: bool
    evidence: dict[str, float]  # empty for a cell of the engine's own reader
    reading: str = "text"  # the pages' words: "text" (layer) or "ocr" (drawn as scans)


@dataclass
class EngineRun:
    found: list[tuple[int, Grid]]  # (0, grid): pages do not matter for the matching
    cells: list[CellOutcome] = field(default_factory=list)
    seconds: float = 0.0
    pages: int = 0


def run_engine(document: icdar.Document, loaded: Any = None) -> EngineRun:
    """The engine over the truth's pages (or over `loaded`, a Document already read)."""
    from servicetools.service.engine import extract_group, group_targets, load_document

    config = configuration(document)
    start = time.perf_counter()
    if loaded is None:
        loaded = load_document(truth_pages(document), "application/pdf")
    results = {t.target_id: t for group in group_targets(config)
               for t in extract_group(loaded, group, config)}
    run = EngineRun([], seconds=time.perf_counter() - start, pages=len(loaded.pages))
    seen: set[tuple[tuple[tuple[int, int], str], ...]] = set()
    for number, table in enumerate(document.tables):
        target = results.get(f"t-{number}")
        if target is None:
            continue
        names = [s["name"] for s in config["extraction_targets"][number]["header_schema"]]
        for index in sorted({c.table_index for c in target.cells}):
            cells = [c for c in target.cells if c.table_index == index]
            grid: Grid = {(0, p): n for p, n in enumerate(names)}
            grid.update({(1 + c.row, c.column): c.text for c in cells if c.text.strip()})
            # Targets named alike (tables under the same headings) find the same tables:
            # each table counts once, judged by its body.
            key = tuple(sorted((place, icdar.compact(text)) for place, text in grid.items()
                               if place[0] > 0))
            if key not in seen:
                seen.add(key)
                run.found.append((0, grid))
        run.cells += _cell_outcomes(document.name,
                                    [c for c in target.cells if c.table_index == 0], table)
    return run


def scanned(document: icdar.Document, dpi: int = 150) -> bytes:
    """The truth's pages drawn as images (JPEG at `dpi`) in a PDF without a text layer,
    as a scanner would make them: the engine reads them by OCR."""
    import pypdfium2 as pdfium

    source = pdfium.PdfDocument(truth_pages(document))
    try:
        images = [page.render(scale=dpi / 72).to_pil().convert("RGB") for page in source]
    finally:
        source.close()
    buffer = io.BytesIO()
    # Fixed dates: the same bytes each run, so the OCR cache (keyed by content) holds.
    fixed = time.gmtime(1356998400)  # 2013-01-01
    images[0].save(buffer, "PDF", resolution=dpi, save_all=True, append_images=images[1:],
                   creationDate=fixed, modDate=fixed)
    return buffer.getvalue()


def run_scans(title: str, documents: list[icdar.Document], cache: Path | None = None) -> str:
    """The engine on the same pages as scans, with and without its finder of ruled tables
    on OCR'd pages (the header-band reader alone), on one reading of each document."""
    from tqdm import tqdm

    from servicetools.service.engine import candidates

    methods = {"engine, scans": Method(), "engine, scans, own reader only": Method()}
    cells: list[CellOutcome] = []
    finder = candidates.found_tables
    for document in tqdm(documents, desc=f"{title} as scans", file=sys.stderr):
        loaded = load_bytes(scanned(document), "application/pdf", cache)
        for name, method in methods.items():
            loaded.__dict__.pop("_found_tables", None)
            loaded.__dict__.pop("_judged", None)
            # The baseline: no found tables at all, as before the finder of ruled scans.
            candidates.found_tables = finder if name == "engine, scans" else (
                lambda *_: [])
            try:
                run = run_engine(document, loaded)
            finally:
                candidates.found_tables = finder
            _add(method, run.found, document)
            if name == "engine, scans":
                cells += run.cells
    # No seconds: the OCR is cached, and its speed is bench/accuracy.py's (against bare
    # rapidocr).
    lines = [f"{title}, the same pages as scans (drawn at 150 dpi, read by OCR)", "",
             f"{'method':<32}{'precision':>10}{'recall':>9}{'F1':>8}"]
    for name, method in methods.items():
        score = method.score
        lines.append(f"{name:<32}{score.precision:>10.3f}{score.recall:>9.3f}{score.f1:>8.3f}")
    pairs = [(o.confidence, o.right) for o in cells]
    lines.append(f"cells: {len(pairs)}, {sum(r for _, r in pairs) / max(1, len(pairs)):.1%} "
                 f"equal to the truth cell at their place; ECE {ece(pairs):.3f}")
    return "\n".join(lines)


def truth_pages(document: icdar.Document) -> bytes:
    """The document's pages that hold its truth tables, as a PDF of their own: the
    libraries are given those pages, and a truth that covers page 1 of a long report
    says nothing of the tables on the other pages."""
    return pages_pdf(document.pdf.read_bytes(), sorted({t.page for t in document.tables}))


def pages_pdf(data: bytes, pages: list[int]) -> bytes:
    """Some pages (from 1) of a PDF, as a PDF of their own."""
    import pypdfium2 as pdfium

    source = pdfium.PdfDocument(data)
    try:
        if pages == list(range(1, len(source) + 1)):
            return data
        part = pdfium.PdfDocument.new()
        part.import_pages(source, [p - 1 for p in pages])
        buffer = io.BytesIO()
        part.save(buffer)
        part.close()
        return buffer.getvalue()
    finally:
        source.close()


def _cell_outcomes(document: str, cells: list[Any], table: icdar.Table) -> list[CellOutcome]:
    """Each engine cell's confidence and whether it equals the truth cell at its place
    (the engine's first row is the row under the last header row)."""
    first = icdar.header_row(table) + 1
    truth = {place: icdar.compact(text) for place, text in table.grid.items()}
    return [CellOutcome(document, float(c.confidence),
                        truth.get((first + c.row, c.column), "") == icdar.compact(c.text),
                        dict(c.evidence))
            for c in cells]


# -- pages without a table ------------------------------------------------------------------
def untabled(documents: list[icdar.Document], most: int = 60) -> str:
    """Seconds per page of the engine on the ICDAR documents' pages that hold no truth
    table, each page alone with every table target of its document, beside bare
    pdfplumber words on the same page: what a page without a table costs. Pages whose
    lines name a target's columns are still given to the finders (they often hold a
    table the truth does not cover, or its continuation); they are counted apart."""
    import pdfplumber
    import pypdfium2 as pdfium

    from servicetools.service.engine import extract_group, group_targets, load_document
    from servicetools.service.engine.candidates import headed_pages

    costs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}  # headed -> times
    for document in documents:
        data = document.pdf.read_bytes()
        opened = pdfium.PdfDocument(data)
        count = len(opened)
        opened.close()
        truth = {t.page for t in document.tables}
        config = configuration(document)
        for number in [n for n in range(1, count + 1) if n not in truth]:
            if sum(len(c) for c in costs.values()) >= most:
                break
            page = pages_pdf(data, [number])
            start = time.perf_counter()
            loaded = load_document(page, "application/pdf")
            for group in group_targets(config):
                extract_group(loaded, group, config)
            engine = time.perf_counter() - start
            start = time.perf_counter()
            with pdfplumber.open(io.BytesIO(page)) as plumber:
                plumber.pages[0].extract_words()
            bare = time.perf_counter() - start
            headed = any(headed_pages(loaded, t) for t in config["extraction_targets"])
            costs[headed].append((engine, bare))
    lines = ["Pages without a truth table, each alone, the document's table targets: engine "
             "beside bare pdfplumber words"]
    for headed, title in ((False, "not given to the finders"),
                          (True, "naming a target's columns (finders run)")):
        some = costs[headed]
        if some:
            engine, bare = (sum(t[i] for t in some) / len(some) for i in (0, 1))
            lines.append(f"  {title:<40} {len(some):>3} pages  engine {engine:.3f} s/page  "
                         f"pdfplumber {bare:.3f} s/page  {engine / bare:.2f}x")
    return "\n".join(lines)


# -- cell calibration ------------------------------------------------------------------------
def fit_cells(outcomes: list[CellOutcome]) -> dict[str, Any]:
    """The engine's ``cells`` model: P(right) of a found table's cell over its evidence."""
    judged = [o for o in outcomes if o.evidence]
    model = logistic_model([o.evidence for o in judged], [o.right for o in judged])
    return {**model, "fitted_on": {"cells": len(judged),
                                   "documents": len({o.document for o in judged})}}


def cross_validated(outcomes: list[CellOutcome], folds: int = 5) -> list[CellOutcome]:
    """Cells whose confidence comes from a model fitted without their own document's
    cells; cells of the engine's own reader keep theirs (the model is not theirs)."""
    from dataclasses import replace

    from servicetools.service.engine.calibration import cell_confidence

    held = [o for o in outcomes if not o.evidence]
    for fold in range(folds):
        model = fit_cells([o for o in outcomes if fold_of(o.document, folds) != fold])
        held += [replace(o, confidence=cell_confidence(o.evidence, o.confidence, {"cells": model}))
                 for o in outcomes if o.evidence and fold_of(o.document, folds) == fold]
    return held


# -- the libraries --------------------------------------------------------------------------
def pdfplumber_finder(strategy: str | None) -> Finder:
    """pdfplumber's table finder: its default (ruling lines), or the given strategy."""
    settings = {} if strategy is None else {"vertical_strategy": strategy,
                                            "horizontal_strategy": strategy}

    def find(pdf: Path, pages: list[int]) -> list[tuple[int, Grid]]:
        import pdfplumber

        found = []
        with pdfplumber.open(pdf) as opened:
            for number in pages:
                for rows in opened.pages[number - 1].extract_tables(settings):
                    found.append((number, icdar.grid_of_rows(rows)))
        return found
    return find


def camelot_finder(flavor: str) -> Finder:
    def find(pdf: Path, pages: list[int]) -> list[tuple[int, Grid]]:
        import camelot

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "No tables found in table area" and the like
            tables = camelot.read_pdf(str(pdf), pages=",".join(map(str, pages)), flavor=flavor)
        return [(int(t.page), icdar.grid_of_rows(t.df.values.tolist())) for t in tables]
    return find


LIBRARIES: dict[str, Finder] = {
    "pdfplumber": pdfplumber_finder(None),
    "pdfplumber text": pdfplumber_finder("text"),
    **{f"camelot {f}": camelot_finder(f) for f in ("lattice", "stream", "network", "hybrid")},
}


def match(found: list[tuple[int, Grid]], truth: list[icdar.Table]
          ) -> tuple[list[Grid | None], list[Grid]]:
    """Each truth table's best found table (one-to-one, by shared relations), and the
    found tables left over."""
    pairs = sorted(
        ((sum((icdar.relations(g) & icdar.relations(t.grid)).values()), i, j)
         for i, (_, g) in enumerate(found) for j, t in enumerate(truth)), reverse=True)
    chosen: dict[int, int] = {}
    used: set[int] = set()
    for shared, i, j in pairs:
        if shared and i not in used and j not in chosen:
            chosen[j] = i
            used.add(i)
    return ([found[chosen[j]][1] if j in chosen else None for j in range(len(truth))],
            [g for i, (_, g) in enumerate(found) if i not in used])


# -- figures ---------------------------------------------------------------------------------
@dataclass
class Method:
    score: icdar.Score = field(default_factory=icdar.Score)
    seconds: float = 0.0
    pages: int = 0
    failed: list[str] = field(default_factory=list)


def reliability(pairs: list[tuple[float, bool]], bins: int = 10) -> str:
    lines = ["  confidence      n  mean conf  accuracy"]
    for b in range(bins):
        inside = [(c, r) for c, r in pairs
                  if b / bins <= c < (b + 1) / bins or (b == bins - 1 and c >= 1.0)]
        if inside:
            lines.append(f"  {b / bins:.1f}-{(b + 1) / bins:.1f}  {len(inside):>6}  "
                         f"{sum(c for c, _ in inside) / len(inside):>9.3f}  "
                         f"{sum(r for _, r in inside) / len(inside):>8.1%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=icdar.ROOT)
    parser.add_argument("--real", type=Path, default=icdar.ROOT.parent / "real",
                        help="the real/ documents (their table-doc truths are reported too)")
    parser.add_argument("--only", help="one document, e.g. eu-011")
    parser.add_argument("--limit", type=int, help="the first N documents")
    parser.add_argument("--engine-only", action="store_true")
    parser.add_argument("--per-document", action="store_true", help="F1 of each document")
    parser.add_argument("--folds", type=int, default=5, help="folds of the cell model's CV")
    parser.add_argument("--scans", action="store_true",
                        help="also read every set's pages as scans (OCR: minutes)")
    parser.add_argument("--cache", type=Path,
                        default=Path.home() / ".cache" / "servicetools-bench",
                        help="words of scans already read by OCR")
    args = parser.parse_args(argv)
    if not args.root.exists():
        print(f"{args.root} not found: the ICDAR 2013 dev set is needed", file=sys.stderr)
        return 1
    sets = [("ICDAR 2013 dev", icdar.documents(args.root))]
    if args.real.exists():
        sets.append(("real/ table documents", icdar.real_documents(args.real)))
    for title, documents in sets:
        documents = [d for d in documents if not args.only or d.name == args.only]
        documents = documents[: args.limit] if args.limit else documents
        if documents:
            methods, cells = run_set(title, documents, args)
            print(report(title, methods, cells, len(documents),
                         sum(len(d.tables) for d in documents)))
            if args.scans:
                print()
                print(run_scans(title, documents, args.cache))
            if title.startswith("ICDAR") and not args.only and not args.limit:
                held = cross_validated(cells, args.folds)
                pairs = [(o.confidence, o.right) for o in held]
                print(f"Cells, {args.folds}-fold cross-validated cell model (fitted on the "
                      f"other folds' documents): ECE {ece(pairs):.3f} (goal <= 0.05)")
                print(reliability(pairs))
            print()
    if not args.only and not args.limit:
        print(untabled(sets[0][1]))
        print()
    print("Goals: engine F1 >= 0.90 on ICDAR 2013 dev and ahead of the best library in the "
          "same run; cell ECE <= 0.05.")
    return 0


def run_set(title: str, documents: list[icdar.Document], args: argparse.Namespace
            ) -> tuple[dict[str, Method], list[CellOutcome]]:
    from tqdm import tqdm

    names = ["engine"] + ([] if args.engine_only else list(LIBRARIES))
    methods = {name: Method() for name in names}
    cells: list[CellOutcome] = []
    for document in tqdm(documents, desc=title, file=sys.stderr):
        run = run_engine(document)
        engine = methods["engine"]
        engine.seconds += run.seconds
        engine.pages += run.pages
        cells += run.cells
        before = engine.score.right, engine.score.found, engine.score.truth
        _add(engine, run.found, document)
        if args.per_document:
            _print_document(document.name, "engine", engine.score, before)
        pages = sorted({t.page for t in document.tables})
        for name, finder in LIBRARIES.items():
            if name not in methods:
                continue
            method = methods[name]
            start = time.perf_counter()
            try:
                found = finder(document.pdf, pages)
            except Exception as error:  # noqa: BLE001  a library failing is a figure too
                method.failed.append(f"{document.name}: {type(error).__name__}: {error}")
                found = []
            method.seconds += time.perf_counter() - start
            method.pages += len(pages)
            _add(method, found, document)
    return methods, cells


def _add(method: Method, found: list[tuple[int, Grid]], document: icdar.Document) -> None:
    """Score a method's tables of one document: matched one-to-one to the truth tables,
    the ones left over counted in precision."""
    matched, extra = match(found, list(document.tables))
    for grid, table in zip(matched, document.tables, strict=True):
        method.score.add(icdar.relations(grid or {}), icdar.relations(table.grid))
    for grid in extra:
        method.score.add(icdar.relations(grid), Counter())


def _print_document(name: str, method: str, score: icdar.Score,
                    before: tuple[int, int, int]) -> None:
    right, found, truth = (score.right - before[0], score.found - before[1],
                           score.truth - before[2])
    f1 = 2 * right / (found + truth) if found + truth else 0.0
    print(f"  {name:<10} {method:<8} F1 {f1:.3f}  ({right} right of {found} found, "
          f"{truth} true)", file=sys.stderr)


def report(title: str, methods: dict[str, Method], outcomes: list[CellOutcome],
           documents: int, tables: int) -> str:
    lines = [f"{title}: {documents} documents, {tables} tables; adjacency relations, "
             "micro-averaged", "",
             f"{'method':<18}{'precision':>10}{'recall':>9}{'F1':>8}{'right':>8}{'found':>8}"
             f"{'truth':>8}{'s/page':>9}"]
    for name, method in methods.items():
        s = method.score
        per_page = method.seconds / method.pages if method.pages else 0.0
        lines.append(f"{name:<18}{s.precision:>10.3f}{s.recall:>9.3f}{s.f1:>8.3f}"
                     f"{s.right:>8}{s.found:>8}{s.truth:>8}{per_page:>9.3f}")
    libraries = {n: m for n, m in methods.items() if n != "engine"}
    if libraries:
        best_name, best = max(libraries.items(), key=lambda item: item[1].score.f1)
        engine = methods["engine"].score.f1
        ratio = engine / best.score.f1 if best.score.f1 else float("inf")
        lines += ["", f"engine / best library ({best_name}): F1 {engine:.3f} / "
                  f"{best.score.f1:.3f} = {ratio:.2f}x"]
    for name, method in methods.items():
        for failure in method.failed[:3]:
            lines.append(f"  {name} failed on {failure}")
    cells = [(o.confidence, o.right) for o in outcomes]
    right = sum(r for _, r in cells)
    lines += ["", f"Engine cells: {len(cells)}, {right / len(cells) if cells else 0:.1%} equal "
              f"to the truth cell at their place; ECE {ece(cells):.3f} with the shipped "
              "cell model (fitted on ICDAR 2013 dev: "
              f"{'in-sample here' if title.startswith('ICDAR') else 'held out here'})",
              reliability(cells)]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
