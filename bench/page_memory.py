"""Peak memory of one page (issue 33): the peak RSS above idle of `ocr_words` alone and
of `load_document` for pages of 1 to 50 megapixels, as PNG, JPEG and scanned PDF.

Usage: ``.venv/bin/python bench/page_memory.py [--options a b1280] [--mp 1 3 ...]
[--formats png jpg pdf] [--code DIR] [--root ../shared/data]``.

Each measurement runs in a fresh process: the engine is loaded and warmed on a small
page first (as a service that has read a page), then the kernel's peak-RSS mark is reset
(``/proc/self/clear_refs`` 5) and the call's peak is VmHWM minus the RSS just before it
(the document's bytes are read before). Pages: a real receipt of ``sroie-dev`` and a
synthetic A4 text page, drawn once and resized (bicubic) to each size, stored as PNG,
as JPEG (quality 90) and as a PDF whose one page is that JPEG drawn at the service's
render_dpi (a scan: no text layer). ``--code DIR`` measures the engine of another
checkout (a worktree of an older commit, for before and after in one run).

Options (see OPTIONS): ``a`` the engine as it is; ``b*`` the detector's input limited to
that many pixels a side (recognition still crops from the page the OCR reads); ``c``
onnxruntime's memory pattern off (its CPU arena is already off in RapidOCR 3).
``--presence`` gives sroie-dev's tuning half's key values present in the lines read,
per option.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024
RECEIPT = "015.jpg"
WORK = Path("/tmp/page_memory")
DPI = 150  # Settings().render_dpi
CONTENT_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".pdf": "application/pdf"}

OPTIONS = {
    "a": "current settings",
    "b1280": "every page's detector input at most 1280 px a side",
    "c": "ORT mem pattern off",
}


def _kib(field: str) -> int:
    status = Path("/proc/self/status").read_text()
    return int(re.search(rf"{field}:\s+(\d+)", status).group(1))  # type: ignore[union-attr]


def _apply(option: str) -> None:
    from servicetools.service.engine import ocr

    if "c" in option:
        from rapidocr.inference_engine.onnxruntime.main import OrtInferSession

        plain = OrtInferSession._init_sess_opts

        def options(cfg: Any) -> Any:
            made = plain(cfg)
            made.enable_mem_pattern = False
            return made
        OrtInferSession._init_sess_opts = staticmethod(options)  # type: ignore[method-assign]
    if option.startswith("b"):
        side = int(re.match(r"b(\d+)", option).group(1))  # type: ignore[union-attr]
        from rapidocr import RapidOCR

        # Every page's detector limited, not only a large page's (ocr._ocr).
        ocr._engines[False] = ocr._engines[True] = RapidOCR(params={
            "Global.log_level": "error", "Det.box_thresh": 0.4,
            "Det.limit_type": "max", "Det.limit_side_len": side})


def child(option: str, path: str, what: str) -> dict[str, float]:
    from PIL import Image

    _apply(option)
    from servicetools.service.engine import pages
    from servicetools.service.engine.ocr import ocr_words

    ocr_words(Image.open(WORK / "warm.png").convert("RGB"))  # models loaded and run once
    data = Path(path).read_bytes()
    image = Image.open(path).convert("RGB") if what == "ocr" else None
    idle = _kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    start = time.perf_counter()
    if image is not None:
        found = ocr_words(image)
    else:
        found = pages.load_document(data, CONTENT_TYPES[Path(path).suffix]).pages[0].words
    seconds = time.perf_counter() - start
    peak = _kib("VmHWM")
    return {"peak_mib": (peak - idle) / 1024, "seconds": seconds, "words": len(found),
            "idle_mib": idle / 1024}


def presence(option: str, root: Path) -> dict[str, Any]:
    """sroie-dev's tuning half: key values present in the lines read, seconds a page."""
    from PIL import Image, ImageOps

    sys.path.insert(0, str(ROOT / "bench"))
    import realsets

    _apply(option)
    from servicetools.service.engine import ocr

    found, seconds, missed = [], [], []
    for case in realsets.cases("sroie-dev", root):
        if case.half != "tuning":
            continue
        with Image.open(case.path) as opened:
            image = (ImageOps.exif_transpose(opened) or opened).convert("RGB")
        start = time.perf_counter()
        lines = [w.text for w in ocr.ocr_words(image)]
        seconds.append(time.perf_counter() - start)
        text = " ".join(lines)
        for target, truth in case.truth.items():
            hit = realsets.present([text], truth)
            found.append(hit)
            if not hit:
                missed.append(f"{case.path.name}:{target}")
    return {"present": sum(found), "values": len(found), "pages": len(seconds),
            "s_per_page": sum(seconds) / len(seconds), "missed": missed}


def make_pages(root: Path, sizes: list[float], formats: list[str]
               ) -> dict[tuple[str, float, str], Path]:
    from PIL import Image, ImageDraw, ImageFont

    sys.path.insert(0, str(ROOT / "bench"))
    from limits import PdfPage, build_pdf

    WORK.mkdir(exist_ok=True)
    receipt = Image.open(root / "sroie-dev" / "img" / RECEIPT).convert("RGB")
    page = Image.new("RGB", (850, 1202), "white")
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=16)
    for row in range(45):
        draw.text((60, 40 + row * 25),
                  f"Line {row + 1:02d}  Widget {row * 7 % 13}  qty {row % 5 + 1}  unit 12.{row:02d}"
                  f"  amount {row * 3 + 1}.50  ref INV-2024-{row:04d}",
                  fill="black", font=font)
    bases = {"receipt": receipt, "synthetic": page}
    made = {}
    warm = page.resize((600, 848), Image.Resampling.BICUBIC)
    warm.save(WORK / "warm.png", compress_level=1)
    for kind, base in bases.items():
        for mp in sizes:
            stem = WORK / f"{kind}-{mp:g}mp"
            paths = {"png": stem.with_suffix(".png"), "jpg": stem.with_suffix(".jpg"),
                     "pdf": stem.with_suffix(".pdf")}
            if not all(paths[f].exists() for f in formats):
                scale = (mp * 1e6 / (base.width * base.height)) ** 0.5
                size = (round(base.width * scale), round(base.height * scale))
                image = base.resize(size, Image.Resampling.BICUBIC)
                image.save(paths["png"], compress_level=1)
                image.save(paths["jpg"], quality=90)
                box = (size[0] * 72 / DPI, size[1] * 72 / DPI)
                paths["pdf"].write_bytes(build_pdf([PdfPage(
                    *box, jpeg=paths["jpg"].read_bytes(), jpeg_pixels=size, jpeg_box=box)]))
            for fmt in formats:
                made[kind, mp, fmt] = paths[fmt]
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--options", nargs="+", default=["a"], choices=list(OPTIONS))
    parser.add_argument("--mp", nargs="+", type=float, default=[1, 3, 12, 25, 50])
    parser.add_argument("--kinds", nargs="+", default=["receipt", "synthetic"])
    parser.add_argument("--formats", nargs="+", default=["png", "jpg", "pdf"],
                        choices=["png", "jpg", "pdf"])
    parser.add_argument("--what", nargs="+", default=["load"], choices=["ocr", "load"])
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose engine is measured")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--presence", action="store_true",
                        help="sroie-dev tuning half's key values present, per option")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.code.resolve()))
    if args.presence and len(args.options) == 1:
        print(json.dumps(presence(args.options[0], args.root)))
        return 0
    here = ["--code", str(args.code), "--root", str(args.root)]
    if args.presence:
        for option in args.options:
            run = subprocess.run([sys.executable, __file__, "--presence", "--options", option,
                                  *here], capture_output=True, text=True, check=False)
            print(f"{option:8} {run.stdout.strip() or run.stderr[-2000:]}", flush=True)
        return 0
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    made = make_pages(args.root, args.mp, args.formats)
    print(f"peak RSS above idle, MiB (seconds of the call, words); engine of {args.code}")
    for option in args.options:
        for kind in args.kinds:
            for fmt in args.formats:
                for what in args.what:
                    if what == "ocr" and fmt == "pdf":
                        continue
                    cells = []
                    for mp in args.mp:
                        run = subprocess.run(
                            [sys.executable, __file__, *here, "--child", option,
                             str(made[kind, mp, fmt]), what],
                            capture_output=True, text=True, check=False)
                        if run.returncode:
                            cells.append(f"{mp:g}MP: failed")
                            print(run.stderr[-2000:], file=sys.stderr)
                            continue
                        got = json.loads(run.stdout.strip().splitlines()[-1])
                        cells.append(f"{mp:g}MP {got['peak_mib']:5.0f} ({got['seconds']:.1f}s,"
                                     f" {got['words']}w)")
                    print(f"{option:6} {kind:9} {fmt:3} {what:4} | " + " | ".join(cells),
                          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
