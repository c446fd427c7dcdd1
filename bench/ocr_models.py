"""The OCR ceiling: how many key values of scanned receipts each way of reading can see.

Usage: ``make bench-ocr`` or ``.venv/bin/python bench/ocr_models.py [--root DIR]
[--variant NAME ...]``.

For every receipt of ``sroie-dev`` (``../shared/data``, not redistributed) each reader
returns its lines, and a key value (company, date, address, total) counts as present
when ``realsets.present`` finds it in them, as the engine's ceiling is measured. Seconds
per page are the reader's own call, in the same run, one reader after the other.

Readers: RapidOCR 3 with its PP-OCRv6 small models as the engine runs it, and with
other settings of its text detector; and rapidocr-onnxruntime 1.4 (the engine's reader
before issue 29) when that package is importable (``pip install
rapidocr-onnxruntime==1.4.4`` into a side venv with this project's dependencies: the
two packages are separate imports and can stand side by side).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import realsets  # noqa: E402

Reader = Callable[[Any], list[str]]


def rapidocr3(**params: Any) -> Reader:
    from rapidocr import RapidOCR

    engine = RapidOCR(params={"Global.log_level": "error", **params})

    def read(pixels: Any) -> list[str]:
        out = engine(pixels, use_det=True, use_cls=False, use_rec=True)
        return list(getattr(out, "txts", None) or [])
    return read


def upscaled(factor: float, **params: Any) -> Reader:
    import numpy as np
    from PIL import Image

    read = rapidocr3(**params)

    def scaled(pixels: Any) -> list[str]:
        image = Image.fromarray(pixels)
        size = (int(image.width * factor), int(image.height * factor))
        return read(np.asarray(image.resize(size, Image.Resampling.LANCZOS)))
    return scaled


def onnxruntime14() -> Reader:
    from rapidocr_onnxruntime import RapidOCR  # the engine's reader before issue 29

    engine = RapidOCR()

    def read(pixels: Any) -> list[str]:
        result, _ = engine(pixels, use_cls=False)
        return [str(item[1]) for item in result or []]
    return read


VARIANTS: dict[str, Callable[[], Reader]] = {
    "rapidocr 3 PP-OCRv6 small (engine)": lambda: rapidocr3(**{"Det.box_thresh": 0.4}),
    "rapidocr 3 PP-OCRv6 small, defaults": rapidocr3,
    "rapidocr 3, box_thresh 0.3": lambda: rapidocr3(**{"Det.box_thresh": 0.3}),
    "rapidocr 3, det limit 960": lambda: rapidocr3(**{"Det.limit_side_len": 960}),
    "rapidocr 3, upscaled 1.5x": lambda: upscaled(1.5),
    "rapidocr-onnxruntime 1.4 (before)": onnxruntime14,
}


def measure(read: Reader, cases: list[realsets.Case]) -> tuple[dict[str, list[bool]], list[float]]:
    import numpy as np
    from PIL import Image

    hits: dict[str, list[bool]] = {}
    seconds = []
    for case in cases:
        pixels = np.asarray(Image.open(case.path).convert("RGB"))
        start = time.perf_counter()
        lines = read(pixels)
        seconds.append(time.perf_counter() - start)
        for target, truth in case.truth.items():
            hits.setdefault(target, []).append(realsets.present(lines, truth))
    return hits, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=realsets.SHARED)
    parser.add_argument("--variant", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    args = parser.parse_args(argv)
    if not (args.root / "sroie-dev").exists():
        print(f"{args.root / 'sroie-dev'} not found: nothing to measure", file=sys.stderr)
        return 1
    cases = realsets.cases("sroie-dev", args.root)
    print(f"OCR ceiling on sroie-dev ({len(cases)} receipts): key values present in the "
          "lines read; seconds per page of the reader's own call")
    baseline = None
    for name in args.variant:
        try:
            read = VARIANTS[name]()
        except ImportError as error:
            print(f"{name:38} skipped: {error}")
            continue
        hits, seconds = measure(read, cases)
        every = [hit for found in hits.values() for hit in found]
        median = statistics.median(seconds)
        baseline = baseline or median
        fields = "  ".join(f"{target} {100 * sum(found) / len(found):3.0f}%"
                           for target, found in hits.items())
        print(f"{name:38} ceiling {100 * sum(every) / len(every):5.1f}%  {fields}  "
              f"{median:.2f} s/page ({median / baseline:.2f}x the first row)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
