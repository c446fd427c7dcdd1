"""Tables on real documents: the engine against the best table finders, set by set.

Three sets, each read from its folder (never copied into the product): icdar2013-dev
(``--root``), camelot-tests-dev (``--camelot``, default beside it) and the table
documents of real/ (``--real``). For each document, in one run, on the same documents
and the same measure (adjacency relations, `icdar.py`):

- ``engine``: the engine in-process, as the service's pipeline calls it, with one
  table target per ground-truth table whose header_schema is the texts of the table's
  last header row (a column without one has an empty name) and no region: what a user
  who knows the column names would write. Its output grid is the header row (the
  names, as printed) over the rows it read.
- ``service, names only`` and ``service, header trees`` (``--service``): the same
  configuration through the local service over loopback (`LocalService`, as the tests
  start it), without header trees, and with a tree per column whose regex is the
  column's heading as a user reads it on the page (`user_headings`, `user_regex`: the
  heading's lines joined by spaces, footnote marks left out).
- ``pdfplumber``: ``page.extract_tables()`` with default settings (ruling lines), and
  ``pdfplumber text`` with the text strategy both ways;
- ``camelot lattice | stream | network | hybrid`` (camelot-py 2).

Matching, the same for every method: the tables a method found in a document (for the
engine, every table of every target) are matched one-to-one to the document's
ground-truth tables, greedily by shared relations; a table matched to none still counts
in precision (unless a truth table of the document is partial, camelot-tests-dev's
``area``: the page holds table text its rows leave out), a truth table matched to none
in recall. camelot-tests-dev is scored from the last heading row down (its README):
every method's tables, the engine's too, are cut by the same heading rule
(`icdar.from_heading`) before they are scored.

Printed per set: F1 on the tuning half, the check half (``../shared/data/README.md``'s
split, by the document's own file name) and both, every method's row; ``engine,
l-o-s-o``, the engine choosing among its candidates by a scoring fitted on the other
sets' documents (`leave_one_set_out`; the shipped scoring, engine/candidates.json, is
fitted on every set's tuning half by ``bench/train.py --only candidates``); the engine's
ratio to the best library of each half, and the time of the pages with tables beside the
slowest finder the engine ran on them (each finder's own row); the truth tables some
library reads with F1 >= 0.5 where the engine matches no table at all;
``--per-document``, each document's F1 per method. Also: seconds per page of each method
(the engine's includes drawing every page, as the service does), and the engine's cell
confidence against correctness (a cell is right when its text equals, spaces removed,
the truth cell at its row and column; ECE over 10 bins): per set with the shipped model,
and at the end, with ``--scans`` for the pages read as scans, each set's and the scans'
where the model never saw them (leave-one-set-out, `held_out_cells`), beside issue 30's
starting point and beside the mean confidence it gives each set; and why a model fitted
on some sets misjudges another: each input's weight fitted on each set alone, the inputs
that speak for right cells in one set and against them in another marked
(`cell_input_signs`).

Run: ``make bench-tables`` or ``.venv/bin/python bench/tables.py [--sets icdar,camelot,real]
[--only NAME] [--limit N] [--per-document] [--service] [--scans]``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import itertools
import json
import re
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
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
    """One table target per ground-truth table, named by its last header row (a column
    without a heading has an empty name, as a user leaves it)."""
    targets = []
    for number, table in enumerate(document.tables):
        names = icdar.header_names(table)
        targets.append({
            "id": f"t-{number}", "type": "table", "name": f"Table {number + 1}",
            "search_area": "all", "search_area_type": "all",
            "extraction_group_id": f"g-{number}", "creation_unix_timestamp": 0.0,
            "header_schema": [
                {"id": f"h-{number}-{position}", "name": name, "position": position}
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
    evidence: dict[str, float]  # how it was read (calibration.cell_confidence's inputs)
    reading: str = "text"  # the pages' words: "text" (layer) or "ocr" (drawn as scans)
    set: str = ""
    # The PDF's content hash: one document in two sets (camelot-tests-dev's PDFs are in
    # real/camelot/ too) is left out of a model fitted for either.
    pdf: str = ""
    half: str = ""


@dataclass
class EngineRun:
    found: list[tuple[int, Grid]]  # (0, grid): pages do not matter for the matching
    cells: list[CellOutcome] = field(default_factory=list)
    seconds: float = 0.0
    pages: int = 0
    # Every candidate the engine weighed, with its F1 against its target's truth table.
    candidates: list[Weighed] = field(default_factory=list)
    loaded: Any = None  # the Document read, its found tables kept (page_model.Document)


@dataclass(frozen=True)
class Weighed:
    """One candidate the engine weighed for a target (candidates.Proposal), and the F1
    of its table (the target's header names over its rows) against the target's truth
    table, as `outcome` scores a method's."""

    document: str
    pdf: str  # content hash: a PDF two sets hold is left out of a scoring fitted for either
    half: str
    target: str
    place: int
    source: str
    features: dict[str, float]
    f1: float
    chosen: bool
    set: str = ""


def run_engine(document: icdar.Document, loaded: Any = None,
               scoring: dict[str, Any] | None = None) -> EngineRun:
    """The engine over the truth's pages (or over `loaded`, a Document already read),
    choosing among candidates by `scoring` (the shipped one when None)."""
    from servicetools.service.engine import candidates, extract_group, group_targets, load_document

    config = configuration(document)
    start = time.perf_counter()
    if loaded is None:
        loaded = load_document(truth_pages(document), "application/pdf")
    with candidates.recording() as proposals, candidates.scoring(scoring):
        results = {t.target_id: t for group in group_targets(config)
                   for t in extract_group(loaded, group, config)}
    run = EngineRun([], seconds=time.perf_counter() - start, pages=len(loaded.pages),
                    candidates=weighed(document, proposals, config), loaded=loaded)
    for number, table in enumerate(document.tables):
        target = results.get(f"t-{number}")
        if target is None:
            continue
        names = [s["name"] for s in config["extraction_targets"][number]["header_schema"]]
        for index in sorted({c.table_index for c in target.cells}):
            cells = [c for c in target.cells if c.table_index == index]
            grid: Grid = {(0, p): n for p, n in enumerate(names) if n}
            grid.update({(1 + c.row, c.column): c.text for c in cells if c.text.strip()})
            # Every table of every target counts: targets named alike that return the
            # same table twice pay for it in precision.
            run.found.append((0, grid))
        run.cells += _cell_outcomes(document,
                                    [c for c in target.cells if c.table_index == 0], table)
    return run


def weighed(document: icdar.Document, proposals: list[Any], config: dict[str, Any]
            ) -> list[Weighed]:
    """Each proposal's F1 against the truth table of its target ("t-N": table N)."""
    pdf = hashlib.sha256(document.pdf.read_bytes()).hexdigest()[:16]
    schemas = {t["id"]: [s["name"] for s in t["header_schema"]]
               for t in config["extraction_targets"]}
    out = []
    for proposal in proposals:
        table = document.tables[int(proposal.target.split("-")[1])]
        grid: Grid = {(0, p): n for p, n in enumerate(schemas[proposal.target]) if n}
        grid.update({(1 + r, c): text for r, row in enumerate(proposal.grid)
                     for c, text in enumerate(row) if text.strip()})
        if document.cut:
            grid = icdar.from_heading(rows_of(grid))
        score = icdar.Score()
        score.add(icdar.relations(grid), icdar.relations(table.grid))
        out.append(Weighed(document.name, pdf, document.half, proposal.target, proposal.place,
                           proposal.source, proposal.features, table_f1(score),
                           proposal.chosen))
    return out


# -- the scoring of candidates -----------------------------------------------------------------
# Candidates at one place whose F1 differ by less than this are as good as each other.
_TIE = 0.02
# The regularisation tried by cross-validation (inverse strength, sklearn's C).
_CS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)


def _pairs(candidates: list[Weighed], names: list[str]
           ) -> tuple[list[list[float]], list[int], list[float]]:
    """Differences of features between candidates at one place, labelled by which has the
    better F1, weighted by how much better (both orders: no side is favoured)."""
    places: dict[tuple[str, str, int], list[Weighed]] = {}
    for c in candidates:
        places.setdefault((c.pdf + c.document, c.target, c.place), []).append(c)
    x: list[list[float]] = []
    y: list[int] = []
    w: list[float] = []
    for group in places.values():
        for a, b in itertools.combinations(group, 2):
            if abs(a.f1 - b.f1) < _TIE:
                continue
            diff = [a.features.get(n, 0.0) - b.features.get(n, 0.0) for n in names]
            x += [diff, [-d for d in diff]]
            y += [int(a.f1 > b.f1), int(b.f1 > a.f1)]
            w += [abs(a.f1 - b.f1)] * 2
    return x, y, w


def _fit_weights(candidates: list[Weighed], c: float) -> dict[str, float]:
    """Weights of the features such that the better of two candidates at one place
    mostly scores higher (a logistic model of the pairs' differences, no intercept)."""
    from sklearn.linear_model import LogisticRegression

    from servicetools.service.engine.candidates import FEATURES

    names = list(FEATURES)
    x, y, w = _pairs(candidates, names)
    if len(set(y)) < 2:
        return {}
    scale = [max(1e-6, float(v)) for v in _spread(candidates, names)]
    model = LogisticRegression(C=c, fit_intercept=False, max_iter=5000)
    model.fit([[v / s for v, s in zip(row, scale, strict=True)] for row in x], y,
              sample_weight=w)
    return {n: round(float(k) / s, 5) for n, k, s in zip(names, model.coef_[0], scale,
                                                          strict=True)}


def _spread(candidates: list[Weighed], names: list[str]) -> list[float]:
    import statistics

    return [statistics.pstdev([c.features.get(n, 0.0) for c in candidates]) or 1.0
            for n in names]


def chosen_f1(candidates: list[Weighed], weights: dict[str, float]) -> float:
    """The mean F1 of the candidate the weights choose at each place that has a choice."""
    places: dict[tuple[str, str, int], list[Weighed]] = {}
    for c in candidates:
        places.setdefault((c.pdf + c.document, c.target, c.place), []).append(c)
    f1s = [max(group, key=lambda c: sum(weights.get(k, 0.0) * v
                                         for k, v in c.features.items())).f1
           for group in places.values() if len(group) > 1]
    return sum(f1s) / len(f1s) if f1s else 0.0


def fit_scoring(candidates: list[Weighed], folds: int = 5) -> dict[str, Any]:
    """The engine's scoring of candidates (engine/candidates.json): feature weights fitted
    on `candidates` with the regularisation that chooses best in cross-validation over
    their documents (`folds` folds by document)."""
    scores = {}
    for c in _CS:
        chosen = []
        for fold in range(folds):
            train = [w for w in candidates if fold_of(w.pdf + w.document, folds) != fold]
            held = [w for w in candidates if fold_of(w.pdf + w.document, folds) == fold]
            chosen.append(chosen_f1(held, _fit_weights(train, c)))
        scores[c] = sum(chosen) / len(chosen)
    best = max(_CS, key=lambda c: (round(scores[c], 4), -c))
    return {"weights": _fit_weights(candidates, best),
            "fitted_on": {"candidates": len(candidates),
                          "documents": len({w.pdf for w in candidates}),
                          "C": best, "cross_validated_f1": round(scores[best], 4)}}


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


def run_scans(title: str, documents: list[icdar.Document], cache: Path | None = None
              ) -> tuple[str, list[CellOutcome]]:
    """The engine on the same pages as scans; beside it, the engine without the text
    finders over its OCR layer (engine/ocr_layer.py: only the finder of ruled tables, as
    before that layer) and with no finder at all (the header-band reader alone), on one
    reading of each document; and the engine's cells on them."""
    from tqdm import tqdm

    from servicetools.service.engine import candidates
    from servicetools.service.engine.page_model import DocumentCache, PageCache

    engine, ruled, alone = ("engine, scans", "engine, scans, ruled finder only",
                            "engine, scans, own reader only")
    methods: dict[str, list[Outcome]] = {engine: [], ruled: [], alone: []}
    seconds = dict.fromkeys(methods, 0.0)
    pages = 0
    cells: list[CellOutcome] = []
    finder, layer = candidates.found_tables, candidates._scanned
    for document in tqdm(documents, desc=f"{title} as scans", file=sys.stderr):
        loaded = load_bytes(scanned(document), "application/pdf", cache)
        pages += len(loaded.pages)
        for name, method in methods.items():
            # Each method finds and judges tables afresh (the document and its pages
            # keep what they worked out), so that their seconds compare.
            loaded.cache = DocumentCache()
            for page in loaded.pages:
                page.cache = PageCache()
            if name == alone:
                candidates.found_tables = lambda *_: []
            if name != engine:
                candidates._scanned = lambda *_: []
            try:
                run = run_engine(document, loaded)
            finally:
                candidates.found_tables, candidates._scanned = finder, layer
            method.append(outcome(run.found, document))
            seconds[name] += run.seconds
            if name == engine:
                cells += [replace(c, reading="ocr", set=title) for c in run.cells]
    # The engine's seconds after the OCR (cached here; its speed is bench/accuracy.py's,
    # against bare rapidocr, and make bench-tables' scans take some 3 s a page to read).
    lines = [f"{title}, the same pages as scans (drawn at 150 dpi, read by OCR)", "",
             f"{'method':<34}{'precision':>10}{'recall':>9}{'F1':>8}  s/page after OCR"]
    for name, outcomes in methods.items():
        score = total(outcomes).score
        lines.append(f"{name:<34}{score.precision:>10.3f}{score.recall:>9.3f}{score.f1:>8.3f}"
                     f"  {seconds[name] / max(1, pages):.3f}")
    pairs = [(o.confidence, o.right) for o in cells]
    lines.append(f"cells: {len(pairs)}, {sum(r for _, r in pairs) / max(1, len(pairs)):.1%} "
                 f"equal to the truth cell at their place; ECE {ece(pairs):.3f} with the "
                 "shipped cell model")
    return "\n".join(lines), cells


# The bundled sample's invoices (datagen, ours): their line items read with the bundled
# "invoices" configuration (header trees and column rules), a kind of table the other
# sets do not hold, half of them drawn as images or scans.
SAMPLE_TITLE = "bundled invoices, line items"


def sample_cells(cache: Path | None = None) -> list[CellOutcome]:
    """Each line-item cell the engine reads from the bundled invoices, against the truth
    cell at its table, row and column (spaces removed)."""
    from servicetools import bundled
    from servicetools.service.engine import extract_group, group_targets
    from servicetools.wire.content import sniff_content_type

    configuration = json.loads((bundled.CONFIGURATIONS / "invoices.json").read_text())
    target = next(t for t in configuration["extraction_targets"] if t["type"] == "table")
    cells = []
    for path in sorted(bundled.TRUTH.glob("*.json")):
        truth = json.loads(path.read_text())
        if truth["configuration"] != "invoices":
            continue
        data = (bundled.DOCUMENTS / truth["document"]).read_bytes()
        loaded = load_bytes(data, sniff_content_type(data) or "application/pdf", cache)
        found = next(r for group in group_targets(configuration)
                     for r in extract_group(loaded, group, configuration)
                     if r.target_id == target["id"])
        tables = [t["rows"] for t in truth["tables"][target["name"]]]
        reading = "ocr" if any(p.source == "ocr" for p in loaded.pages) else "text"
        name = Path(truth["document"]).name
        half = "tuning" if hashlib.sha256(name.encode()).hexdigest()[0] in "01234567" \
            else "check"
        for c in found.cells:
            rows = tables[c.table_index] if c.table_index < len(tables) else []
            expected = rows[c.row][c.column] if c.row < len(rows) and c.column < len(
                rows[c.row]) else ""
            cells.append(CellOutcome(
                name, float(c.confidence), icdar.compact(expected) == icdar.compact(c.text),
                dict(c.evidence), reading=reading, set=SAMPLE_TITLE,
                pdf=hashlib.sha256(data).hexdigest()[:16], half=half))
    return cells


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


def _cell_outcomes(document: icdar.Document, cells: list[Any], table: icdar.Table
                   ) -> list[CellOutcome]:
    """Each engine cell's confidence and whether it equals the truth cell at its place
    (the engine's first row is the row under the last header row)."""
    first = icdar.header_row(table) + 1
    truth = {place: icdar.compact(text) for place, text in table.grid.items()}
    pdf = hashlib.sha256(document.pdf.read_bytes()).hexdigest()[:16]
    return [CellOutcome(document.name, float(c.confidence),
                        truth.get((first + c.row, c.column), "") == icdar.compact(c.text),
                        dict(c.evidence), pdf=pdf, half=document.half)
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
def fit_cells(outcomes: list[CellOutcome], inputs: tuple[str, ...] | None = None
              ) -> dict[str, Any]:
    """The engine's ``cells`` model: P(right) of a table cell over its evidence (every
    piece of it but calibration.CELL_UNFITTED, or only `inputs`)."""
    from servicetools.service.engine.calibration import CELL_UNFITTED

    judged = [o for o in outcomes if o.evidence]
    rows = [{k: v for k, v in o.evidence.items()
             if k not in CELL_UNFITTED and (inputs is None or k in inputs)} for o in judged]
    model = logistic_model(rows, [o.right for o in judged])
    return {**model, "fitted_on": {"cells": len(judged),
                                   "documents": len({o.pdf or o.document for o in judged})}}


# The cell model's inputs before issue 30: found tables' cells only (the engine's own
# reader's kept their raw score), fitted on icdar2013-dev alone. Kept to print beside
# the model of now in the same run.
BEFORE_INPUTS = ("above_header", "column_numeric", "contested", "depth", "empty",
                 "extra_columns", "few_rows", "first_row", "invalid", "last_row", "lattice",
                 "lines", "lone", "lone_above", "number", "ocr", "odd_kind", "row_fill",
                 "share", "width")


def scored_cells(model: dict[str, Any], outcomes: list[CellOutcome], before: bool = False
                 ) -> list[tuple[float, bool]]:
    """(confidence, right) of each cell under a ``cells`` model; `before`: the engine's
    own reader's cells at their raw score, as before issue 30."""
    from servicetools.service.engine.calibration import cell_confidence

    return [(o.evidence["raw"] if before and o.evidence.get("own") else
             cell_confidence(o.evidence, o.evidence.get("raw", o.confidence),
                             {"cells": model}), o.right)
            for o in outcomes]


def held_out_cells(cells: list[CellOutcome], folds: int = 5) -> str:
    """Cell confidence on each set, text and scans, from a model that never saw it.

    after: the cell model of now (every input, both readers' cells), fitted on the other
    sets' cells, text and scans (leave-one-set-out; a PDF in two sets is left out with
    either). before: issue 30's starting point, same run: the old inputs fitted on
    icdar2013-dev alone (text and scans), the engine's own reader's cells at their raw
    score; icdar2013-dev itself 5-fold by document. Also both fitted on the other sets
    with the old inputs (before, l-o-s-o), and scans never seen: fitted on every set's
    text pages, scored on every set's scans. Beside the after figure, the mean
    confidence it gives the set (beside the share right: the set's shift as a whole).
    """
    sets = list(dict.fromkeys(o.set for o in cells))
    first = sets[0]
    icdar_cells = [o for o in cells if o.set == first]
    before_model = fit_cells(icdar_cells, BEFORE_INPUTS)
    before_cv: dict[int, float] = {}  # id of an icdar cell -> its 5-fold confidence
    for fold in range(folds):
        model = fit_cells([o for o in icdar_cells if fold_of(o.document, folds) != fold],
                          BEFORE_INPUTS)
        held = [o for o in icdar_cells if fold_of(o.document, folds) == fold]
        before_cv.update({id(o): c for o, (c, _) in
                          zip(held, scored_cells(model, held, before=True), strict=True)})
    lines = ["Cell confidence, ECE (10 bins) where the model never saw the set: before = "
             f"old inputs fitted on {first} (itself {folds}-fold), own reader's cells raw; "
             "after = every input, leave-one-set-out (fitted on the other sets, text and "
             "scans)", "",
             f"{'set':<30}{'reading':<9}{'cells':>7}{'right':>8}{'before':>9}"
             f"{'before l-o-s-o':>16}{'after l-o-s-o':>15}{'its mean':>10}"]
    for title in sets:
        pdfs = {o.pdf for o in cells if o.set == title}
        train = [o for o in cells if o.set != title and o.pdf not in pdfs]
        after, old = fit_cells(train), fit_cells(train, BEFORE_INPUTS)
        for reading in ("text", "ocr"):
            some = [o for o in cells if o.set == title and o.reading == reading]
            if not some:
                continue
            before = ([(before_cv[id(o)], o.right) for o in some]
                      if title == first else scored_cells(before_model, some, before=True))
            lines.append(f"{title:<30}{'scans' if reading == 'ocr' else 'text':<9}"
                         f"{len(some):>7}{sum(o.right for o in some) / len(some):>8.1%}"
                         f"{ece(before):>9.3f}{ece(scored_cells(old, some, before=True)):>16.3f}"
                         f"{_ece_mean(scored_cells(after, some))}")
    scans = [o for o in cells if o.reading == "ocr"]
    if scans:
        text = [o for o in cells if o.reading == "text"]
        after, old = fit_cells(text), fit_cells(text, BEFORE_INPUTS)
        before = [(before_cv[id(o)], o.right) if o.set == first else pair
                  for o, pair in zip(scans, scored_cells(before_model, scans, before=True),
                                     strict=True)]
        lines.append(f"{'every set, scans':<30}{'scans':<9}{len(scans):>7}"
                     f"{sum(o.right for o in scans) / len(scans):>8.1%}{ece(before):>9.3f}"
                     f"{ece(scored_cells(old, scans, before=True)):>16.3f}"
                     f"{_ece_mean(scored_cells(after, scans))}  (l-o-s-o here: fitted on text "
                     "pages only, scans never seen)")
    lines += ["", "(its mean: the mean confidence after, beside the share right: a set read "
              "surer or less sure than it is as a whole)"]
    return "\n".join(lines)


def _ece_mean(pairs: list[tuple[float, bool]]) -> str:
    mean = sum(c for c, _ in pairs) / len(pairs) if pairs else 0.0
    return f"{ece(pairs):>15.3f}{mean:>10.1%}"


def cell_input_signs(cells: list[CellOutcome]) -> str:
    """Why a cells model fitted on some sets misjudges another: each input's weight in a
    model fitted on each set alone (tuning halves, text and scans), the inputs whose
    weight is for a cell's being right in one set and against it in another marked
    "flips". An input that flips says something of the set, not of the cell."""
    sets = list(dict.fromkeys(o.set for o in cells))
    weights = {}
    for title in sets:
        some = [o for o in cells if o.set == title and o.half != "check"]
        if len({o.right for o in some}) == 2:
            weights[title] = fit_cells(some)["coef"]
    names = sorted({n for w in weights.values() for n in w})
    lines = ["Each input's weight in a cells model fitted on one set alone (tuning halves, "
             "text and scans)", "",
             f"{'input':<18}" + "".join(f"{t[:14]:>15}" for t in weights)]
    for name in names:
        values = [w.get(name, 0.0) for w in weights.values()]
        signs = {v > 0 for v in values if abs(v) >= _SIGN_FLOOR}
        lines.append(f"{name:<18}" + "".join(f"{v:>15.2f}" for v in values)
                     + ("  flips" if len(signs) == 2 else ""))
    return "\n".join(lines)


# A weight this small is no side taken (the model's regularisation leaves most unused
# inputs within a few hundredths of zero).
_SIGN_FLOOR = 0.1


def cross_validated(outcomes: list[CellOutcome], folds: int = 5) -> list[CellOutcome]:
    """Cells whose confidence comes from a model fitted without their own document's
    cells; cells without evidence keep theirs."""
    from servicetools.service.engine.calibration import cell_confidence

    held = [o for o in outcomes if not o.evidence]
    for fold in range(folds):
        model = fit_cells([o for o in outcomes if fold_of(o.document, folds) != fold])
        held += [replace(o, confidence=cell_confidence(
            o.evidence, o.evidence.get("raw", o.confidence), {"cells": model}))
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


@dataclass
class Outcome:
    """One method on one document: the score of the found table matched to each truth
    table (None where none was), the found tables matched to none, time and failure."""

    tables: list[icdar.Score]  # relations of each truth table and of its matched table
    matched: list[bool]
    extra: icdar.Score
    seconds: float = 0.0
    pages: int = 0
    failed: str = ""

    @property
    def score(self) -> icdar.Score:
        total = icdar.Score()
        for part in [*self.tables, self.extra]:
            total.found += part.found
            total.truth += part.truth
            total.right += part.right
        return total


def outcome(found: list[tuple[int, Grid]], document: icdar.Document) -> Outcome:
    """A method's tables of one document scored: matched one-to-one to the truth tables,
    the ones left over counted in precision (except where a truth table is partial: the
    page holds table text its rows leave out). On a set scored from the heading down
    (camelot-tests-dev), every found table is first cut by the same heading rule."""
    if document.cut:
        found = [(page, icdar.from_heading(rows_of(grid))) for page, grid in found]
    matched, extra = match(found, list(document.tables))
    tables = []
    for grid, table in zip(matched, document.tables, strict=True):
        score = icdar.Score()
        score.add(icdar.relations(grid or {}), icdar.relations(table.grid))
        tables.append(score)
    left = icdar.Score()
    if not any(t.partial for t in document.tables):
        for grid in extra:
            left.add(icdar.relations(grid), Counter())
    return Outcome(tables, [grid is not None for grid in matched], left)


def rows_of(grid: Grid) -> list[list[str]]:
    """A grid's rows of cell texts (empty where no cell)."""
    if not grid:
        return []
    height = max(r for r, _ in grid) + 1
    width = max(c for _, c in grid) + 1
    return [[grid.get((r, c), "") for c in range(width)] for r in range(height)]


def table_f1(score: icdar.Score) -> float:
    """F1 of one truth table and the found table matched to it."""
    return 2 * score.right / (score.found + score.truth) if score.found + score.truth else 0.0


def total(outcomes: list[Outcome]) -> Method:
    method = Method()
    for o in outcomes:
        method.score.found += o.score.found
        method.score.truth += o.score.truth
        method.score.right += o.score.right
        method.seconds += o.seconds
        method.pages += o.pages
        if o.failed:
            method.failed.append(o.failed)
    return method


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


@dataclass
class SetRun:
    """Every method on every document of one set."""

    title: str
    documents: list[icdar.Document]
    outcomes: dict[str, dict[str, Outcome]] = field(default_factory=dict)  # doc -> method ->
    cells: list[CellOutcome] = field(default_factory=list)
    candidates: list[Weighed] = field(default_factory=list)
    loaded: dict[str, Any] = field(default_factory=dict)  # doc -> the engine's Document
    # The finders the engine ran on each document (library names), for its cost.
    ran: dict[str, list[str]] = field(default_factory=dict)

    def methods(self) -> list[str]:
        return list(next(iter(self.outcomes.values()), {}))

    def of(self, method: str, half: str | None = None) -> Method:
        return total([self.outcomes[d.name][method] for d in self.documents
                      if half is None or d.half == half])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=icdar.ROOT, help="icdar2013-dev")
    parser.add_argument("--camelot", type=Path, default=None,
                        help="camelot-tests-dev (default: beside --root)")
    parser.add_argument("--real", type=Path, default=None,
                        help="the real/ documents, whose table-doc truths are read too "
                             "(default: beside --root)")
    parser.add_argument("--only", help="one document, e.g. eu-011")
    parser.add_argument("--limit", type=int, help="the first N documents of each set")
    parser.add_argument("--sets", help="comma-separated: icdar,camelot,real (default all)")
    parser.add_argument("--engine-only", action="store_true")
    parser.add_argument("--per-document", action="store_true", help="F1 of each document")
    parser.add_argument("--service", action="store_true",
                        help="also run the engine through the local service, with and "
                             "without header trees written from the printed headings")
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
    camelot_root = args.camelot or args.root.parent / "camelot-tests-dev"
    real_root = args.real or args.root.parent / "real"
    wanted = set((args.sets or "icdar,camelot,real").split(","))
    sets: list[tuple[str, list[icdar.Document]]] = []
    if "icdar" in wanted:
        sets.append(("icdar2013-dev", icdar.documents(args.root)))
    if "camelot" in wanted and camelot_root.exists():
        sets.append(("camelot-tests-dev", icdar.camelot_documents(camelot_root)))
    if "real" in wanted and real_root.exists():
        sets.append(("real/ table documents", icdar.real_documents(real_root)))
    sets = [(title, [d for d in documents if not args.only or d.name == args.only]
             [: args.limit or None]) for title, documents in sets]
    sets = [(title, documents) for title, documents in sets if documents]
    service = start_service(sets) if args.service else None
    cells: list[CellOutcome] = []  # every set's, text and scans
    try:
        runs = [run_set(title, documents, args, service) for title, documents in sets]
    finally:
        if service is not None:
            service[0].stop()
    # The scoring of candidates fitted on the other sets, each set read again with it.
    loso = leave_one_set_out(runs) if len(runs) > 1 else ""
    for run in runs:
        print(report(run))
        cells += [replace(c, set=run.title) for c in run.cells]
        if args.per_document:
            print()
            print(per_document(run))
        if args.scans:
            print()
            text, scans = run_scans(run.title, run.documents, args.cache)
            print(text)
            cells += scans
        print()
    if loso:
        print(loso)
        print()
    if len(sets) > 1 and not args.only:
        sample = sample_cells(args.cache)
        pairs = [(o.confidence, o.right) for o in sample]
        print(f"{SAMPLE_TITLE}: {len(pairs)} cells, "
              f"{sum(r for _, r in pairs) / max(1, len(pairs)):.1%} right; ECE "
              f"{ece(pairs):.3f} with the shipped cell model")
        print(held_out_cells(cells + sample, args.folds))
        print()
        print(cell_input_signs(cells))
        print()
    if sets and sets[0][0].startswith("icdar") and not args.only and not args.limit:
        print(untabled(sets[0][1]))
        print()
    print("Goals (check halves): engine F1 >= 0.90 on every set and >= 1.05x the best library "
          "in the same run; no table a library finds (F1 >= 0.5) where the engine finds "
          "nothing; with header trees, F1 within 0.02 of the run without; cell ECE <= 0.05.")
    return 0


def run_set(title: str, documents: list[icdar.Document], args: argparse.Namespace,
            service: Any = None) -> SetRun:
    from tqdm import tqdm

    run = SetRun(title, documents)
    for document in tqdm(documents, desc=title, file=sys.stderr):
        outcomes: dict[str, Outcome] = {}
        engine = run_engine(document)
        outcomes["engine"] = outcome(engine.found, document)
        outcomes["engine"].seconds, outcomes["engine"].pages = engine.seconds, engine.pages
        run.cells += engine.cells
        if service is not None:
            for trees in (False, True):
                name = "service, header trees" if trees else "service, names only"
                found, seconds = run_service(service, document, title, trees)
                outcomes[name] = outcome(found, document)
                outcomes[name].seconds, outcomes[name].pages = seconds, engine.pages
        pages = sorted({t.page for t in document.tables})
        for name, finder in ({} if args.engine_only else LIBRARIES).items():
            start = time.perf_counter()
            failed = ""
            try:
                found = finder(document.pdf, pages)
            except Exception as error:  # noqa: BLE001  a library failing is a figure too
                failed = f"{document.name}: {type(error).__name__}: {error}"
                found = []
            outcomes[name] = outcome(found, document)
            outcomes[name].seconds = time.perf_counter() - start
            outcomes[name].pages = len(pages)
            outcomes[name].failed = failed
        run.outcomes[document.name] = outcomes
        run.candidates += [replace(w, set=title) for w in engine.candidates]
        run.loaded[document.name] = engine.loaded
        ruled = any(p.ruled for p in engine.loaded.pages)
        run.ran[document.name] = ["camelot network", "camelot stream", "pdfplumber text",
                                  *(["camelot lattice", "pdfplumber"] if ruled else [])]
    return run


LOSO = "engine, l-o-s-o"


def leave_one_set_out(runs: list[SetRun]) -> str:
    """Each set read again by the engine with the scoring of candidates fitted on the
    other sets' documents (both halves; a PDF the set holds too is left out), as the
    method `LOSO` of its run. The found tables of each document are kept from the first
    reading (they do not depend on the scoring); its seconds are the engine's."""
    lines = ["Scoring of candidates, leave-one-set-out (fitted on the other sets' documents, "
             "C by 5-fold CV over them)"]
    for run in runs:
        pdfs = {hashlib.sha256(d.pdf.read_bytes()).hexdigest()[:16] for d in run.documents}
        train = [w for other in runs if other is not run for w in other.candidates
                 if w.pdf not in pdfs]
        model = fit_scoring(train)
        lines.append(f"  {run.title:<24} fitted on {model['fitted_on']['candidates']} "
                     f"candidates of {model['fitted_on']['documents']} documents, C "
                     f"{model['fitted_on']['C']}, CV chosen F1 "
                     f"{model['fitted_on']['cross_validated_f1']:.3f}; on this set "
                     f"chosen F1 {chosen_f1(run.candidates, model['weights']):.3f}, shipped "
                     f"{chosen_f1(run.candidates, _shipped_weights()):.3f}, best possible "
                     f"{best_f1(run.candidates):.3f}")
        for document in run.documents:
            engine = run_engine(document, run.loaded[document.name], model)
            outcomes = run.outcomes[document.name]
            again = outcome(engine.found, document)
            again.seconds, again.pages = outcomes["engine"].seconds, outcomes["engine"].pages
            run.outcomes[document.name] = {
                name: item for key, value in outcomes.items()
                for name, item in ([(key, value), (LOSO, again)] if key == "engine"
                                   else [(key, value)])}
    return "\n".join(lines)


def _shipped_weights() -> dict[str, float]:
    from servicetools.service.engine.candidates import load_scoring

    return dict(load_scoring().get("weights") or {})


def best_f1(candidates: list[Weighed]) -> float:
    places: dict[tuple[str, str, int], list[Weighed]] = {}
    for c in candidates:
        places.setdefault((c.pdf + c.document, c.target, c.place), []).append(c)
    f1s = [max(c.f1 for c in group) for group in places.values() if len(group) > 1]
    return sum(f1s) / len(f1s) if f1s else 0.0


def _f1(score: icdar.Score) -> float:
    return 2 * score.right / (score.found + score.truth) if score.found + score.truth else 0.0


def report(run: SetRun) -> str:
    halves = {h: [d for d in run.documents if d.half == h] for h in ("tuning", "check")}
    tables = sum(len(d.tables) for d in run.documents)
    lines = [f"{run.title}: {len(run.documents)} documents ({len(halves['tuning'])} tuning, "
             f"{len(halves['check'])} check), {tables} tables; adjacency relations, "
             "micro-averaged", "",
             f"{'method':<24}{'tuning F1':>10}{'check F1':>10}  | both:{'precision':>10}"
             f"{'recall':>8}{'F1':>7}{'right':>7}{'found':>7}{'truth':>7}{'s/page':>8}"]
    names = run.methods()
    for name in names:
        both = run.of(name)
        s = both.score
        per_page = both.seconds / both.pages if both.pages else 0.0
        lines.append(f"{name:<24}{_half_f1(run, name, 'tuning'):>10}"
                     f"{_half_f1(run, name, 'check'):>10}  | {'':>5}{s.precision:>10.3f}"
                     f"{s.recall:>8.3f}{s.f1:>7.3f}{s.right:>7}{s.found:>7}{s.truth:>7}"
                     f"{per_page:>8.3f}")
    libraries = [n for n in names if n in LIBRARIES]
    if libraries:
        lines.append("")
        for mine in [n for n in ("engine", LOSO) if n in names]:
            parts = []
            for half in ("tuning", "check", None):
                if half is not None and not halves[half]:
                    continue
                best = max(libraries, key=lambda n: run.of(n, half).score.f1)
                engine, library = run.of(mine, half).score.f1, run.of(best, half).score.f1
                ratio = f"{engine / library:.2f}x" if library else "inf"
                parts.append(f"{half or 'both'} {engine:.3f} / {library:.3f} ({best}) = {ratio}")
            lines.append(f"{mine} / best library: " + "; ".join(parts))
        # What a page with tables costs: the engine (drawing the page and reading its words
        # included) beside the slowest finder it ran there, that finder's own row.
        engine_seconds = sum(run.outcomes[d.name]["engine"].seconds for d in run.documents)
        slowest = sum(max((run.outcomes[d.name][n].seconds for n in run.ran.get(d.name, [])
                           if n in run.outcomes[d.name]), default=0.0)
                      for d in run.documents)
        if slowest:
            lines.append(f"cost of the pages with tables: engine {engine_seconds:.1f} s, the "
                         f"slowest finder it ran on each document {slowest:.1f} s: "
                         f"{engine_seconds / slowest:.2f}x")
    if "service, header trees" in names:
        for half in ("tuning", "check", None):
            if half is not None and not halves[half]:
                continue
            plain = run.of("service, names only", half).score.f1
            trees = run.of("service, header trees", half).score.f1
            inside = run.of("engine", half).score.f1
            lines.append(f"service, {half or 'both'}: header trees {trees:.3f}, names only "
                         f"{plain:.3f} (difference {trees - plain:+.3f}); in-process {inside:.3f}")
    for name in names:
        for failure in total([run.outcomes[d.name][name] for d in run.documents]).failed[:3]:
            lines.append(f"  {name} failed on {failure}")
    for mine in [n for n in ("engine", LOSO) if n in names]:
        lost = nothing_found(run, mine)
        lines += ["", f"Tables a library finds (F1 >= 0.5) where the {mine} finds nothing: "
                  f"{len(lost)}"]
        lines += [f"  {line}" for line in lost]
    cells = [(o.confidence, o.right) for o in run.cells]
    right = sum(r for _, r in cells)
    lines += ["", f"Engine cells: {len(cells)}, {right / len(cells) if cells else 0:.1%} equal "
              f"to the truth cell at their place; ECE {ece(cells):.3f} with the shipped "
              "cell model (fitted on the tuning halves of every set: in-sample here; "
              "held out below)",
              reliability(cells)]
    return "\n".join(lines)


def _half_f1(run: SetRun, method: str, half: str) -> str:
    if not any(d.half == half for d in run.documents):
        return "-"
    return f"{run.of(method, half).score.f1:.3f}"


def nothing_found(run: SetRun, engine: str = "engine") -> list[str]:
    """Truth tables some library reads with F1 >= 0.5 and the engine matches no table to."""
    lost = []
    for document in run.documents:
        outcomes = run.outcomes[document.name]
        for index, table in enumerate(document.tables):
            if outcomes[engine].matched[index]:
                continue
            good = {name: f for name, o in outcomes.items() if name in LIBRARIES
                    and (f := table_f1(o.tables[index])) >= 0.5}
            if good:
                libs = ", ".join(f"{n} {f:.2f}" for n, f in sorted(good.items(),
                                                                 key=lambda i: -i[1]))
                lost.append(f"{table.name} ({document.half}): {libs}")
    return lost


def per_document(run: SetRun) -> str:
    """Each document's F1 per method (its tables together), half by half."""
    names = run.methods()
    short = {n: n.replace("camelot ", "c.").replace("pdfplumber", "plumb").replace(
        "service, ", "svc ") for n in names}
    width = max(12, max(len(d.name) for d in run.documents) + 1)
    lines = [f"{run.title}, F1 per document",
             f"{'document':<{width}}{'half':<7}" + "".join(f"{short[n][:14]:>15}" for n in names)]
    for half in ("tuning", "check"):
        for document in [d for d in run.documents if d.half == half]:
            outcomes = run.outcomes[document.name]
            lines.append(f"{document.name:<{width}}{half:<7}" + "".join(
                f"{_f1(outcomes[n].score):>15.3f}" for n in names))
    return "\n".join(lines)


# -- through the service ----------------------------------------------------------------------
def user_headings(table: icdar.Table) -> list[str]:
    """Each column's heading as a user reads it on the page: camelot-tests-dev's heading
    rows as printed; for ICDAR and real/ tables, the header cells of the column alone
    (not the group headings spanning it) top to bottom, else its name."""
    names = icdar.header_names(table)
    if table.headings:
        printed = icdar.printed_headings(table.headings)
    else:
        last = icdar.header_row(table)
        printed = []
        for column in range(len(names)):
            own = sorted((c for c in table.cells if c.row <= last and c.column == column
                          and c.end_column == column and c.text.strip()), key=lambda c: c.row)
            printed.append(icdar.printed_headings([[c.text] for c in own])[0] if own else "")
    return [p or n for p, n in zip([*printed, *[""] * len(names)], names, strict=False)]


def user_regex(heading: str) -> str:
    """The regex a user writes for a heading: its words as printed, spaces as spaces,
    footnote marks left out ("Others(1)" is "Others"), case ignored."""
    words = " ".join(_FOOTNOTE.sub("", heading).split())
    return "(?i)" + re.escape(words).replace("\\ ", " ")


# A footnote mark at a heading's end: "(1)", "*", "†", a superscript digit or letter.
_FOOTNOTE = re.compile(r"\s*(?:\(\d{1,2}\)|\([a-z]\)|[*†‡§¹²³⁴⁵⁶⁷⁸⁹⁰]+)$")


def service_configuration(document: icdar.Document, set_title: str, trees: bool
                          ) -> dict[str, Any]:
    """`configuration(document)` for the service, each column with a header tree (a regex
    of its printed heading, `user_regex`) or none, under a name of its own."""
    config = json.loads(json.dumps(configuration(document)))
    slug = re.sub(r"[^a-z0-9]+", "-", f"{set_title}-{document.name}".lower())
    config["id"] = config["name"] = f"{slug}-{'trees' if trees else 'names'}"
    for target, table in zip(config["extraction_targets"], document.tables, strict=True):
        headings = user_headings(table)
        for column in target["header_schema"]:
            heading = headings[column["position"]] if column["position"] < len(headings) else ""
            rules = [{"name": "heading", "rules": [{"type": "regex",
                                                    "pattern": user_regex(heading)}]}]
            column["header_matching_validation_tree"] = {
                "name": "header", "rule_groups": rules if trees and heading.strip() else []}
            column["extracted_value_validation_tree"] = {"name": "value", "rule_groups": []}
    return config


def start_service(sets: list[tuple[str, list[icdar.Document]]]) -> tuple[Any, Any, Path]:
    """The local service over loopback, with both configurations of every document."""
    import tempfile

    from servicetools import Client, LocalService

    folder = Path(tempfile.mkdtemp(prefix="bench-tables-"))
    for title, documents in sets:
        for document in documents:
            for trees in (False, True):
                config = service_configuration(document, title, trees)
                (folder / f"{config['id']}.json").write_text(json.dumps(config))
    service = LocalService(configurations=folder)
    service.start()
    return service, Client(base_url=service.base_url, api_key=service.token), folder


def run_service(service: tuple[Any, Any, Path], document: icdar.Document, set_title: str,
                trees: bool) -> tuple[list[tuple[int, Grid]], float]:
    """The document's truth pages through the service: every table of every target."""
    _, client, _ = service
    config = service_configuration(document, set_title, trees)
    start = time.perf_counter()
    result = client.trigger_sync((f"{re.sub(r'[^A-Za-z0-9]+', '-', document.name)}.pdf",
                                  truth_pages(document)),
                                 configuration_name=config["name"], save_extraction=False)
    seconds = time.perf_counter() - start
    columns = {t["id"]: t["header_schema"] for t in config["extraction_targets"]}
    found: list[tuple[int, Grid]] = []
    for target in result.targets:
        schema = columns.get(target.get("used_extraction_target_id"), [])
        names = [s["name"] for s in schema]
        grids: dict[str, Grid] = {}
        for cell in target.get("extracted_values") or []:
            grid = grids.setdefault(str(cell["table_id"]),
                                    {(0, p): n for p, n in enumerate(names) if n})
            if str(cell["extracted_cell"]).strip():
                grid[(1 + int(cell["row"]), int(cell["column"]))] = str(cell["extracted_cell"])
        found += [(0, grid) for grid in grids.values()]
    return found, seconds


if __name__ == "__main__":
    sys.exit(main())
