"""Accuracy, calibration and speed of the extraction engine, measured through the local service.

Usage: ``make bench-accuracy`` or ``.venv/bin/python bench/accuracy.py [--devset DIR]
[--count N] [--seed S] [--quick] [--no-real]``.

It generates a fresh dev set (or takes ``--devset``), triggers one asynchronous
extraction per document over the HTTP API of a `LocalService` (raw input), reads the
results back and scores them per document kind (text PDF vs scan: PNG, JPEG,
image-only PDF):

- field exact-match accuracy after normalisation (dates to ISO, amounts to numbers,
  whitespace collapsed, case ignored);
- table cell accuracy: extracted tables aligned to the truth tables by order, rows
  by order, cells by column;
- ECE (10 equal-width bins) over every extracted value and cell, the share of values
  with confidence >= 0.9 and the error rate among them;
- engine seconds per page (the service's own usage record: render + read + extract)
  against bare ``pdfplumber`` word extraction and bare ``RapidOCR()(png_bytes)`` on the
  same pages, measured right after each extraction so both see the same machine load.

The engine's confidence was fitted on the committed 40-document sample (seed 2026) and
a development set of seed 11; the default evaluation seed (31) is neither.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(Path(__file__).resolve().parent))

import realsets  # noqa: E402

from servicetools import bundled  # noqa: E402
from servicetools.wire.values import parse_amount  # noqa: E402

CALIBRATION_SEEDS = (2026, 11)
EVALUATION_SEED = 31
DATE_FORMATS = ("%Y-%m-%d", "%d.%m.%Y", "%d/%m/%Y", "%m/%d/%Y", "%d %b %Y", "%b %d, %Y",
                "%B %d, %Y", "%d %B %Y", "%m/%d/%y", "%d.%m.%y")
CONTENT_TYPES = {"pdf": "application/pdf", "scan-pdf": "application/pdf",
                 "png": "image/png", "jpeg": "image/jpeg"}
KINDS = {"pdf": "text PDF", "png": "scan", "jpeg": "scan", "scan-pdf": "scan"}
HIGH = 0.9


# -- scoring --------------------------------------------------------------------------------
def normalise(value: str) -> str:
    """The comparable form of a value: ISO date, plain number, or collapsed lower-case text."""
    text = " ".join(str(value).split())
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            pass
    amount = parse_amount(text)
    if amount is not None:
        return f"{amount:.4f}"
    return text.lower()


def same(extracted: str, truth: str) -> bool:
    return normalise(extracted) == normalise(truth)


@dataclass
class Score:
    """Counts of one document kind."""

    fields: int = 0
    fields_right: int = 0
    cells: int = 0
    cells_right: int = 0
    pages: int = 0
    documents: int = 0
    engine_seconds: float = 0.0
    # (confidence, right) of every extracted value and cell
    values: list[tuple[float, bool]] = field(default_factory=list)
    # per timed page: (engine seconds, bare seconds)
    timed: list[tuple[float, float]] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)


# One ECE for every set: the generated set's table and the real sets' tables agree.
ece = realsets.ece


def score_document(score: Score, truth: dict[str, Any], data: dict[str, Any],
                   configuration: dict[str, Any]) -> None:
    """Add one extracted data object's fields and cells, compared with the truth."""
    targets = {t["id"]: t for t in configuration["extraction_targets"]}
    for extracted in data["extracted_targets"]:
        target = targets[extracted["used_extraction_target_id"]]
        name = target.get("name") or target["id"]
        if target["type"] == "field":
            if name not in truth["fields"]:
                continue  # a target the generator does not grade (the receipts' Address)
            expected = truth["fields"][name]
            values = extracted["extracted_values"]
            got = values[0]["extracted_field"] if values else ""
            right = same(got, expected)
            score.fields += 1
            score.fields_right += right
            if not right:
                score.wrong.append(f"{truth['document']}: {name}: {got!r} != {expected!r}")
            for value in values:
                score.values.append((float(value["confidence"]), same(value["extracted_field"],
                                                                       expected)))
        else:
            _score_tables(score, truth, name, extracted["extracted_values"])


def _score_tables(score: Score, truth: dict[str, Any], name: str,
                  cells: list[dict[str, Any]]) -> None:
    tables: dict[str, dict[tuple[int, int], dict[str, Any]]] = {}
    for cell in cells:
        tables.setdefault(cell["table_id"], {})[(cell["row"], cell["column"])] = cell
    extracted = list(tables.values())
    expected = [t["rows"] for t in truth.get("tables", {}).get(name, [])]
    for index in range(max(len(extracted), len(expected))):
        got = extracted[index] if index < len(extracted) else {}
        rows = expected[index] if index < len(expected) else []
        truth_cells = {(r, c): text for r, row in enumerate(rows) for c, text in enumerate(row)}
        for key, text in truth_cells.items():
            found_cell = got.get(key)
            right = found_cell is not None and same(found_cell["extracted_cell"], text)
            score.cells += 1
            score.cells_right += right
            if not right and len(score.wrong) < 10_000:
                found = found_cell["extracted_cell"] if found_cell else None
                score.wrong.append(f"{truth['document']}: table {index} cell {key}: "
                                   f"{found!r} != {text!r}")
        for key, cell in got.items():
            score.values.append((float(cell["confidence"]),
                                 key in truth_cells and same(cell["extracted_cell"],
                                                             truth_cells[key])))


# -- baselines ------------------------------------------------------------------------------
def bare_pdfplumber(data: bytes) -> float:
    """Seconds of bare pdfplumber word extraction over the whole PDF."""
    import pdfplumber

    start = time.perf_counter()
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        for page in pdf.pages:
            page.extract_words()
    return time.perf_counter() - start


_ocr: Any = None


def bare_rapidocr(images: Iterable[bytes]) -> float:
    """Seconds of bare RapidOCR over page images given as PNG or JPEG bytes."""
    global _ocr
    if _ocr is None:
        from rapidocr import RapidOCR

        # The library with the engine's settings (engine/ocr.py), alone.
        _ocr = RapidOCR(params={"Global.log_level": "error", "Det.box_thresh": 0.4})
        _ocr(_page_pngs(_blank_pdf())[0])  # load the models outside the timing
    total = 0.0
    for image in images:
        start = time.perf_counter()
        _ocr(image)
        total += time.perf_counter() - start
    return total


def _page_pngs(pdf: bytes, dpi: int = 150) -> list[bytes]:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        out = []
        for page in document:
            buffer = io.BytesIO()
            page.render(scale=dpi / 72).to_pil().save(buffer, format="PNG")
            out.append(buffer.getvalue())
        return out
    finally:
        document.close()


def _blank_pdf() -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (400, 200), "white")
    ImageDraw.Draw(image).text((20, 80), "Invoice 2024-03-15 Total 12.00", fill="black")
    out = io.BytesIO()
    image.save(out, format="PDF")
    return out.getvalue()


# -- the service ----------------------------------------------------------------------------
class Runner:
    """Triggers extractions on a running local service and reads results and usage."""

    def __init__(self, service: Any) -> None:
        import requests

        self.session = requests.Session()
        self.session.headers["X-Api"] = service.token
        self.url = service.base_url + "/service/api/extraction"
        self.database = service.data_dir / "service.sqlite3"

    def extract(self, data: bytes, configuration: str, content_type: str
                ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The extracted data object and the service's usage record of one document."""
        body = {"configuration_name": configuration, "input_type": "raw",
                "document_raw_data": base64.b64encode(data).decode(),
                "content_type": content_type}
        resp = self.session.post(self.url + "/trigger_async", json=body, timeout=120)
        resp.raise_for_status()
        extraction_id = resp.json()["extraction_id"]
        deadline = time.monotonic() + 600
        while True:
            resp = self.session.post(self.url + "/status/list",
                                     json={"extraction_id_list": [extraction_id]}, timeout=60)
            resp.raise_for_status()
            status = resp.json()["status_map"][extraction_id]
            if status["status_type"] == "ended":
                break
            if status["status_type"] == "error" or time.monotonic() > deadline:
                raise RuntimeError(f"extraction failed: {status}")
            time.sleep(0.02)
        resp = self.session.get(f"{self.url}/result/get/{extraction_id}", timeout=60)
        resp.raise_for_status()
        return resp.json(), self._usage(extraction_id)

    def _usage(self, extraction_id: str) -> dict[str, Any]:
        # The usage record is not part of the API; the local service keeps it in its store.
        with sqlite3.connect(f"file:{self.database}?mode=ro", uri=True) as db:
            row = db.execute("SELECT usage_json FROM extractions WHERE extraction_id = ?",
                             (extraction_id,)).fetchone()
        return json.loads(row[0]) if row and row[0] else {}


def engine_seconds(usage: dict[str, Any]) -> float:
    # The engine's own: reading the page and extracting. The store's status writes between
    # the stages ("store") and getting the document ("acquire") are not the engine's.
    seconds = usage.get("seconds", {})
    return float(seconds.get("render_and_read", 0.0)) + float(seconds.get("extract", 0.0))


# -- report ---------------------------------------------------------------------------------
def pct(right: int, total: int) -> str:
    return f"{100 * right / total:5.1f}%" if total else "   - "


def report(scores: dict[str, Score], seed: int | str, devset: Path) -> str:
    rows = [("", "text PDF", "scan"), ("documents", *(str(scores[k].documents) for k in KINDS2)),
            ("pages", *(str(scores[k].pages) for k in KINDS2))]
    for label, fn in (
        ("field accuracy", lambda s: f"{pct(s.fields_right, s.fields)} ({s.fields_right}"
                                     f"/{s.fields})"),
        ("table cell accuracy", lambda s: f"{pct(s.cells_right, s.cells)} ({s.cells_right}"
                                          f"/{s.cells})"),
        ("ECE (10 bins)", lambda s: f"{ece(s.values):.3f}"),
        ("values conf >= 0.9", lambda s: pct(sum(c >= HIGH for c, _ in s.values),
                                             len(s.values))),
        ("  error rate among them", lambda s: pct(sum(c >= HIGH and not r for c, r in s.values),
                                                  sum(c >= HIGH for c, _ in s.values))),
        ("engine s/page", lambda s: f"{s.engine_seconds / max(1, s.pages):.3f}"),
    ):
        rows.append((label, *(fn(scores[k]) for k in KINDS2)))
    timed = {k: scores[k].timed for k in KINDS2}
    rows.append(("timed pages", *(str(len(timed[k])) for k in KINDS2)))
    rows.append(("bare s/page (pdfplumber | rapidocr)",
                 *(f"{statistics.fmean(b for _, b in timed[k]):.3f}" if timed[k] else "-"
                   for k in KINDS2)))
    rows.append(("engine s/page, same pages",
                 *(f"{statistics.fmean(e for e, _ in timed[k]):.3f}" if timed[k] else "-"
                   for k in KINDS2)))
    rows.append(("ratio engine / bare",
                 *(f"{sum(e for e, _ in timed[k]) / sum(b for _, b in timed[k]):.2f}x"
                   if timed[k] else "-" for k in KINDS2)))
    width = max(len(r[0]) for r in rows) + 2
    lines = [f"Dev set: {devset} (seed {seed}); confidence fitted on seeds "
             f"{', '.join(map(str, CALIBRATION_SEEDS))}, so this is a held-out evaluation"
             if seed not in CALIBRATION_SEEDS else
             f"Dev set: {devset} (seed {seed}) -- WARNING: a calibration seed, not held out"]
    lines.append("")
    for row in rows:
        lines.append(f"{row[0]:<{width}}{row[1]:>22}{row[2]:>22}")
    every = [v for k in KINDS2 for v in scores[k].values]
    high = sum(c >= HIGH for c, _ in every)
    high_wrong = sum(c >= HIGH and not r for c, r in every)
    lines.append(f"{'all values: ECE':<{width}}{ece(every):>22.3f}"
                 f"   conf>=0.9: {pct(high, len(every))} of values, error {pct(high_wrong, high)}")
    lines.append("")
    lines.append("Targets: text PDF fields >= 95%, cells >= 95%; scan fields >= 85%; ECE <= 0.08; "
                 "conf>=0.9 right >= 90%; text page <= 2x pdfplumber, scan page <= 1.3x rapidocr")
    return "\n".join(lines)


KINDS2 = ("text PDF", "scan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devset", type=Path, help="an existing dev set (datagen layout)")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=EVALUATION_SEED)
    parser.add_argument("--quick", action="store_true", help="40 documents, no real ones")
    parser.add_argument("--no-real", action="store_true", help="skip the real documents")
    parser.add_argument("--timed-scans", type=int, default=40,
                        help="scan pages timed against bare OCR (OCR twice is slow)")
    parser.add_argument("--show-errors", type=int, default=0, help="print N wrong values")
    parser.add_argument("--root", type=Path, default=realsets.SHARED,
                        help="folder holding sroie-dev/, invoices-dev/ and real/")
    parser.add_argument("--cache", type=Path,
                        default=Path.home() / ".cache" / "servicetools-bench",
                        help="words of documents already read, by content and reader code")
    parser.add_argument("--folds", type=int, default=5, help="folds of the calibration CV")
    args = parser.parse_args(argv)
    from tqdm import tqdm

    from servicetools import LocalService

    count = 40 if args.quick else args.count
    with tempfile.TemporaryDirectory(prefix="bench-accuracy-") as tmp:
        devset = args.devset
        seed: int | str = args.seed
        if devset is None:
            from servicetools.datagen import generate

            devset = Path(tmp) / "devset"
            print(f"generating {count} documents (seed {args.seed}) ...", file=sys.stderr)
            generate(str(devset), count, seed=args.seed)
        truths = [json.loads(p.read_text()) for p in sorted((devset / "truth").glob("*.json"))]
        if args.devset is not None:
            seed = truths[0].get("seed", "?") if truths else "?"
        configurations = {p.stem: json.loads(p.read_text())
                          for p in (bundled.CONFIGURATIONS).glob("*.json")}
        scores = {k: Score() for k in KINDS2}
        scans = [t for t in truths if t["format"] != "pdf"]
        step = max(1, len(scans) // max(1, args.timed_scans))
        timed_scans = {t["document"] for t in scans[::step][: args.timed_scans]}
        with LocalService(workers=1) as service:
            runner = Runner(service)
            for truth in tqdm(truths, desc="dev set", file=sys.stderr):
                data = (devset / "documents" / truth["document"]).read_bytes()
                extracted, usage = runner.extract(data, truth["configuration"],
                                                  CONTENT_TYPES[truth["format"]])
                kind = KINDS[truth["format"]]
                score = scores[kind]
                score.documents += 1
                pages = int(usage.get("pages", truth.get("pages", 1)))
                score.pages += pages
                seconds = engine_seconds(usage)
                score.engine_seconds += seconds
                score_document(score, truth, extracted, configurations[truth["configuration"]])
                if truth["format"] == "pdf":
                    bare = bare_pdfplumber(data)
                elif truth["document"] in timed_scans:
                    images = _page_pngs(data) if truth["format"] == "scan-pdf" else [data]
                    bare = bare_rapidocr(images)
                else:
                    continue
                score.timed.extend([(seconds / pages, bare / pages)] * pages)
            outcomes = None
            if not (args.quick or args.no_real):
                # In-process: the same engine calls as the service's pipeline, and the
                # words it saw (for the ceiling).
                # The bundled sample too: make train fits the shipped map on it.
                outcomes = realsets.collect([*realsets.SETS, *realsets.OTHER_SETS,
                                             realsets.SAMPLE], args.root, args.cache,
                                            extra=realsets.generated(devset, "generated"))
    print(report(scores, seed, devset if args.devset else Path(f"generated, {count} documents")))
    if outcomes is not None:
        print()
        print(real_report(outcomes, args.folds))
    if args.show_errors:
        for kind in KINDS2:
            for line in scores[kind].wrong[: args.show_errors]:
                print(f"  [{kind}] {line}")
        for o in outcomes or []:
            if not o.right and args.show_errors > 0:
                cause = "choose" if o.present else "read"
                print(f"  [{o.set}] {o.document}: {o.target}: {o.got!r} != {o.truth!r} ({cause})")
    return 0





# Key fields of the goals: what an analyst checks first on each kind of set.
KEY_FIELDS = {"Merchant", "Vendor", "Address", "Date", "Invoice Date", "Invoice Number",
              "Receipt Number", "Total"}
GOALS = ("Goals (issue 29, check halves and leave-one-set-out): sroie-dev >= 80% of the key "
         "fields; invoices-dev + real/ >= 90% of issuer, number, date, total; adforms-dev >= "
         "85%; zugferd-dev >= 90% of seller, number, date, total; contracts-dev >= 70%; ECE <= "
         "0.05 per set leave-one-set-out; values at >= 0.9 right >= 95% on every set")


def real_report(outcomes: list[realsets.Outcome], folds: int) -> str:
    """Per set and field: accuracy, fill, ceiling, ECE, Brier; key fields; CV calibration."""
    # Fitted as make train fits the shipped map (real sets and the bundled sample); the
    # generated dev set is only scored.
    held = realsets.cross_validated(outcomes, folds, "logistic",
                                    fit_on={*realsets.SETS, realsets.SAMPLE})
    names = [*realsets.SETS, "generated"]
    lines = ["Fields per set (engine in-process, bundled configurations; ceiling = truth "
             "present in the words the engine sees; choose/read = misses under/above it)"]
    for name in names:
        some = [o for o in outcomes if o.set == name]
        if not some:
            continue
        lines += ["", realsets.table(f"{name}: {len({o.document for o in some})} documents",
                                     some)]
        held_set = [o for o in held if o.set == name]
        cv = realsets.figures(held_set)
        floor = realsets.ece_floor([o.confidence for o in held_set])
        lines.append(f"  {folds}-fold cross-validated calibration (logistic, as make train "
                     f"fits it): ECE {cv['ece']:.3f}, Brier {cv['brier']:.3f}; a perfectly "
                     f"calibrated engine would read ECE {floor:.3f} on these {len(held_set)} "
                     "values")
    lines += ["", "Key fields (in-sample accuracy | fill | ceiling | cross-validated ECE):"]
    groups = {"sroie-dev": ["sroie-dev"], "real invoices (invoices-dev + real/)":
              ["invoices-dev", "real"], "generated": ["generated"]}
    for title, members in groups.items():
        some = [o for o in outcomes if o.set in members and o.target in KEY_FIELDS]
        cv_some = [o for o in held if o.set in members and o.target in KEY_FIELDS]
        if some:
            f, cv = realsets.figures(some), realsets.figures(cv_some)
            lines.append(f"  {title:<38}{f['accuracy']:>7.1%} | {f['fill']:.1%} | "
                         f"{f['ceiling']:.1%} | {cv['ece']:.3f}  ({f['n']} values)")
    real = [o for o in outcomes if o.set not in (realsets.SAMPLE, "generated")]
    lines += ["", "Per set and field, tuning half | check half (../shared/data's rule; every "
              "rule and the shipped calibration were chosen on tuning halves):",
              realsets.halves_table(real), "",
              "Calibration held out: the check halves under a map fitted on the tuning halves "
              "(as make train ships it), and leave-one-set-out:",
              realsets.held_out_calibration(
                  real + [o for o in outcomes if o.set == realsets.SAMPLE],
                  realsets.fit_map([o for o in outcomes if o.set == realsets.SAMPLE
                                    or (o.set != "generated" and o.half == "tuning")],
                                   "logistic"))]
    lines += ["", GOALS, "", "Reliability, cross-validated (per set):"]
    for name in names:
        some = [o for o in held if o.set == name]
        if some:
            lines += [f" {name}", realsets.reliability(some)]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
