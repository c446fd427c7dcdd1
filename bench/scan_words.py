"""The words and values the engine reads from the real sets' scanned pages, saved to JSON
and compared between two runs (issue 33: a page read at a reduced scale must read the
same or better).

Usage: ``.venv/bin/python bench/scan_words.py run OUT.json [--sets ...]
[--detector-side N] [--as-pdf] [--larger PX]`` (no cache: every document is read afresh;
``--as-pdf`` reads the JPEGs as scanned PDF pages, ``--larger`` only the JPEGs larger
than the OCR reads) and ``.venv/bin/python bench/scan_words.py diff A B``. Another
checkout's engine: ``PYTHONPATH=DIR``.
A document counts when any of its pages is read by OCR: the images, and PDFs without a
text layer. Per set and half: values right and present (realsets' scoring), and the
documents whose OCR words differ, with the words that changed.
"""

from __future__ import annotations

import argparse
import difflib
import io
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: another checkout may be measured
sys.path.insert(0, str(Path(__file__).resolve().parent))

import realsets  # noqa: E402

SETS = ("sroie-dev", "real", "invoices-dev", "adforms-dev")


def as_scan_pdf(jpeg: bytes) -> bytes:
    """A JPEG as the one image of a PDF page drawn at render_dpi pixel for pixel: what a
    scanner that writes PDF makes of it (no text layer)."""
    from limits import SCALE, PdfPage, build_pdf
    from PIL import Image

    with Image.open(io.BytesIO(jpeg)) as image:
        if image.mode != "RGB":  # build_pdf declares /DeviceRGB
            out = io.BytesIO()
            image.convert("RGB").save(out, format="JPEG", quality=95)
            jpeg = out.getvalue()
        box = (image.width / SCALE, image.height / SCALE)
        return build_pdf([PdfPage(*box, jpeg=jpeg, jpeg_pixels=image.size, jpeg_box=box)])


def run(out: Path, sets: list[str], root: Path, detector_side: int = 0,
        as_pdf: bool = False, larger: int = 0) -> None:
    from PIL import Image

    import servicetools
    from servicetools.service.engine import load_document

    print(f"engine of {Path(servicetools.__file__).parents[1]}", file=sys.stderr)
    if detector_side:  # the detector's input at most this many pixels a side
        from rapidocr import RapidOCR

        from servicetools.service.engine import ocr

        ocr._engine = RapidOCR(params={
            "Global.log_level": "error", "Det.box_thresh": 0.4,
            "Det.limit_type": "max", "Det.limit_side_len": detector_side})

    configurations = realsets.configurations()
    found: dict[str, Any] = {}
    for set_name in sets:
        for case in realsets.cases(set_name, root):
            data = case.path.read_bytes()
            if case.content_type == "application/pdf" and b"/Image" not in data:
                continue  # no image: a text PDF, never read by OCR
            content_type = case.content_type
            if larger or as_pdf:
                if content_type != "image/jpeg":
                    continue
                with Image.open(case.path) as image:
                    if max(image.size) <= larger:
                        continue
                if as_pdf:
                    data, content_type = as_scan_pdf(data), "application/pdf"
            start = time.perf_counter()
            document = load_document(data, content_type)
            seconds = time.perf_counter() - start
            if not any(page.source == "ocr" for page in document.pages):
                continue
            real_load = realsets.load
            realsets.load = lambda *_, read=document: read  # type: ignore[assignment]
            try:
                outcomes, _ = realsets.run_case(case, configurations[case.configuration])
            finally:
                realsets.load = real_load  # type: ignore[assignment]
            found[f"{set_name}/{case.name}"] = {
                "set": set_name, "half": case.half, "seconds": round(seconds, 3),
                "words": [[w.text, round(w.x0, 3), round(w.y0, 3)]
                          for page in document.pages if page.source == "ocr"
                          for w in page.words],
                "png": [len(page.png) for page in document.pages],
                "values": [[o.target, o.got, o.right, o.present] for o in outcomes]}
            print(f"{set_name}/{case.name} {seconds:.2f}s", file=sys.stderr, flush=True)
    out.write_text(json.dumps(found))


def summary(runs: dict[str, Any]) -> dict[tuple[str, str], list[int]]:
    totals: dict[tuple[str, str], list[int]] = {}
    for doc in runs.values():
        cell = totals.setdefault((doc["set"], doc["half"]), [0, 0, 0, 0])
        cell[0] += 1
        for _, _, right, present in doc["values"]:
            cell[1] += right
            cell[2] += present
            cell[3] += 1
    return totals


def diff(a_path: Path, b_path: Path) -> None:
    a, b = json.loads(a_path.read_text()), json.loads(b_path.read_text())
    sa, sb = summary(a), summary(b)
    print("set, half: documents; right before -> after; present before -> after (of values)")
    for key in sorted(set(sa) | set(sb)):
        x, y = sa.get(key, [0] * 4), sb.get(key, [0] * 4)
        print(f"  {key[0]:13} {key[1]:6}: {x[0]:3} docs; right {x[1]} -> {y[1]}; "
              f"present {x[2]} -> {y[2]} (of {x[3]})")
    changed = 0
    for name in sorted(set(a) & set(b)):
        wa = [w[0] for w in a[name]["words"]]
        wb = [w[0] for w in b[name]["words"]]
        moved = max((abs(p[1] - q[1]) + abs(p[2] - q[2])
                     for p, q in zip(a[name]["words"], b[name]["words"], strict=False)
                     if p[0] == q[0]), default=0.0)
        va, vb = a[name]["values"], b[name]["values"]
        if wa == wb and va == vb:
            continue
        changed += 1
        print(f"{name} ({a[name]['half']}): {len(wa)} -> {len(wb)} words, "
              f"largest box shift of a word kept in place {moved:.3f}")
        for op in difflib.SequenceMatcher(a=wa, b=wb, autojunk=False).get_opcodes():
            if op[0] != "equal":
                print(f"    {op[0]}: {' '.join(wa[op[1]:op[2]])!r} -> "
                      f"{' '.join(wb[op[3]:op[4]])!r}")
        for p, q in zip(va, vb, strict=False):
            if p != q:
                print(f"    value {p[0]}: {p[1]!r} ({'right' if p[2] else 'wrong'}) -> "
                      f"{q[1]!r} ({'right' if q[2] else 'wrong'})")
    print(f"{changed} of {len(set(a) & set(b))} documents read differently; seconds "
          f"{sum(d['seconds'] for d in a.values()):.0f} -> "
          f"{sum(d['seconds'] for d in b.values()):.0f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run")
    one.add_argument("out", type=Path)
    one.add_argument("--sets", nargs="+", default=list(SETS))
    one.add_argument("--root", type=Path, default=realsets.SHARED)
    one.add_argument("--detector-side", type=int, default=0,
                     help="limit the detector's input to this many pixels a side")
    one.add_argument("--as-pdf", action="store_true",
                     help="the JPEGs only, each as a scanned PDF page at render_dpi")
    one.add_argument("--larger", type=int, default=0,
                     help="the JPEGs only, of more pixels than this on the long side")
    two = sub.add_parser("diff")
    two.add_argument("a", type=Path)
    two.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.out, args.sets, args.root, args.detector_side, args.as_pdf, args.larger)
    else:
        diff(args.a, args.b)
    return 0


if __name__ == "__main__":
    sys.exit(main())
