"""Peak memory of one page (issue 33): the peak RSS above idle of `ocr_words` alone and
of `load_document` for images of 1 to 50 megapixels, under several engine settings.

Usage: ``.venv/bin/python bench/page_memory.py [--options a b ...] [--mp 1 3 ...]
[--root ../shared/data]``.

Each measurement runs in a fresh process: the engine is loaded and warmed on a small
page first (as a service that has read a page), then the kernel's peak-RSS mark is reset
(``/proc/self/clear_refs`` 5) and the call's peak is VmHWM minus the RSS just before it.
Pages: a real receipt of ``sroie-dev`` and a synthetic A4 text page, drawn once and
resized (bicubic) to each size, stored as PNG (``load_document`` takes the PNG bytes).

Options (see OPTIONS): ``a`` the engine as it is; ``b*`` the detector's input limited
while recognition crops from the full image; ``c`` onnxruntime's memory pattern off (its
CPU arena is already off in RapidOCR 3); ``d`` no extra full-size copies of the image
(an RGB image is not converted again, the pixel array is made once); combinations.
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
sys.path.insert(0, str(ROOT))
MIB = 1024 * 1024
RECEIPT = "015.jpg"
WORK = Path("/tmp/page_memory")

OPTIONS = {
    "a": "current settings",
    "b2000": "det max side 2000, rec from full image",
    "b1280": "det max side 1280, rec from full image",
    "c": "ORT mem pattern off",
    "d": "no extra full-size copies",
    "cd": "c + d",
    "b2000cd": "b2000 + c + d",
    "e": "image reduced to the OCR's own 2000 px before the pixel array",
    "de": "d + e",
}


def _kib(field: str) -> int:
    status = Path("/proc/self/status").read_text()
    return int(re.search(rf"{field}:\s+(\d+)", status).group(1))  # type: ignore[union-attr]


def _apply(option: str) -> None:
    from servicetools.service.engine import ocr, pages

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

        # The package's own resize of the whole image (Global.max_side_len, 2000) is
        # lifted; the detector resizes its own input to at most `side`.
        ocr._engine = RapidOCR(params={
            "Global.log_level": "error", "Det.box_thresh": 0.4,
            "Global.max_side_len": 1_000_000, "Det.limit_type": "max",
            "Det.limit_side_len": side})
    if "d" in option:
        import numpy as np

        plain_words = ocr.ocr_words
        plain_rgb = pages._to_rgb

        def to_rgb(image: Any) -> Any:
            return image if image.mode == "RGB" else plain_rgb(image)

        def words(image: Any) -> Any:
            # np.asarray of an RGB image, once; ocr_words converts (a copy) only when the
            # mode is another.
            if image.mode == "RGB":
                convert = image.convert
                image.convert = lambda mode=None, *a, **k: (
                    image if mode == "RGB" and not a and not k else convert(mode, *a, **k))
            return plain_words(image)
        pages._to_rgb = to_rgb
        pages.ocr_words = words
        _ = np
    if "e" in option:
        from PIL import Image

        inner = pages.ocr_words

        def reduced(image: Any) -> Any:
            # RapidOCR reads at most 2000 px on the long side (Global.max_side_len): the
            # page is brought there by PIL from the image, not from a full-size array.
            # Words are fractions of the page, so the smaller image gives the same boxes.
            side = max(image.size)
            if side > 2000:
                size = (round(image.width * 2000 / side), round(image.height * 2000 / side))
                image = image.resize(size, Image.Resampling.BILINEAR, reducing_gap=3.0)
            return inner(image)
        pages.ocr_words = reduced
        ocr_reduced = reduced
        _ = ocr_reduced


def child(option: str, path: str, what: str) -> dict[str, float]:
    from PIL import Image

    _apply(option)
    from servicetools.service.engine import pages
    from servicetools.service.engine.ocr import ocr_words

    ocr_words(Image.open(WORK / "warm.png").convert("RGB"))  # models loaded and run once
    words_call = pages.ocr_words  # d patches the name pages uses
    data = Path(path).read_bytes()
    image = Image.open(path).convert("RGB") if what == "ocr" else None
    idle = _kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    start = time.perf_counter()
    if image is not None:
        found = words_call(image)
    else:
        found = pages.load_document(data, "image/png").pages[0].words
    seconds = time.perf_counter() - start
    peak = _kib("VmHWM")
    return {"peak_mib": (peak - idle) / 1024, "seconds": seconds, "words": len(found),
            "idle_mib": idle / 1024}


def presence(option: str, root: Path) -> dict[str, Any]:
    """sroie-dev's tuning half: key values present in the lines read, seconds a page."""
    import numpy as np
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
            pixels = np.asarray((ImageOps.exif_transpose(opened) or opened).convert("RGB"))
        if "e" in option and max(pixels.shape[:2]) > 2000:
            image = Image.fromarray(pixels)
            side = max(image.size)
            size = (round(image.width * 2000 / side), round(image.height * 2000 / side))
            pixels = np.asarray(image.resize(size, Image.Resampling.BILINEAR, reducing_gap=3.0))
        start = time.perf_counter()
        lines = [item[1] for item in ocr._read(pixels)]
        seconds.append(time.perf_counter() - start)
        for target, truth in case.truth.items():
            hit = realsets.present(lines, truth)
            found.append(hit)
            if not hit:
                missed.append(f"{case.path.name}:{target}")
    return {"present": sum(found), "values": len(found), "pages": len(seconds),
            "s_per_page": sum(seconds) / len(seconds), "missed": missed}


def make_pages(root: Path, sizes: list[float]) -> dict[tuple[str, float], Path]:
    from PIL import Image, ImageDraw, ImageFont

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
            out = WORK / f"{kind}-{mp:g}mp.png"
            if not out.exists():
                scale = (mp * 1e6 / (base.width * base.height)) ** 0.5
                size = (round(base.width * scale), round(base.height * scale))
                base.resize(size, Image.Resampling.BICUBIC).save(out, compress_level=1)
            made[kind, mp] = out
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--options", nargs="+", default=list(OPTIONS), choices=list(OPTIONS))
    parser.add_argument("--mp", nargs="+", type=float, default=[1, 3, 12, 25, 50])
    parser.add_argument("--kinds", nargs="+", default=["receipt", "synthetic"])
    parser.add_argument("--what", nargs="+", default=["ocr", "load"])
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--presence", action="store_true",
                        help="sroie-dev tuning half's key values present, per option")
    args = parser.parse_args(argv)
    if args.presence and len(args.options) == 1:
        print(json.dumps(presence(args.options[0], args.root)))
        return 0
    if args.presence:
        for option in args.options:
            run = subprocess.run([sys.executable, __file__, "--presence", "--options", option,
                                  "--root", str(args.root)], capture_output=True, text=True,
                                 check=False)
            print(f"{option:8} {run.stdout.strip() or run.stderr[-2000:]}", flush=True)
        return 0
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    made = make_pages(args.root, args.mp)
    print("peak RSS above idle, MiB (seconds of the call)")
    for option in args.options:
        for kind in args.kinds:
            for what in args.what:
                cells = []
                for mp in args.mp:
                    run = subprocess.run(
                        [sys.executable, __file__, "--child", option, str(made[kind, mp]), what],
                        capture_output=True, text=True, check=False)
                    if run.returncode:
                        cells.append(f"{mp:g}MP: failed")
                        print(run.stderr[-2000:], file=sys.stderr)
                        continue
                    got = json.loads(run.stdout.strip().splitlines()[-1])
                    cells.append(f"{mp:g}MP {got['peak_mib']:6.0f} ({got['seconds']:.1f}s,"
                                 f" {got['words']}w)")
                print(f"{option:8} {kind:9} {what:4} | " + " | ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
