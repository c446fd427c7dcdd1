"""Plan a dev set (kinds, formats, names) and write its documents and truth files."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from servicetools.datagen import content, invoice_layouts, receipt_layouts, truth
from servicetools.datagen.scan import scan
from servicetools.datagen.sheet import render_pdf

KINDS = ("invoice", "receipt")
FORMATS = ("pdf", "png", "jpeg", "scan-pdf")
IMAGE_FORMATS = ("png", "jpeg")  # one image holds one page

KIND_SHARES = {"invoice": 0.6, "receipt": 0.4}
FORMAT_SHARES = {"pdf": 0.6, "png": 0.12, "jpeg": 0.18, "scan-pdf": 0.1}
PREFIX = {"invoice": "inv", "receipt": "rcp"}
FOLDER = {"invoice": "invoices", "receipt": "receipts"}
EXTENSION = {"pdf": "pdf", "png": "png", "jpeg": "jpeg", "scan-pdf": "pdf"}

# Files a previous run may have left; removed so a smaller run leaves no strays.
_GENERATED = re.compile(r"^(inv|rcp)-\d{4,}\.(pdf|png|jpeg|json)$")


def _quotas(count: int, shares: dict[str, float]) -> dict[str, int]:
    """Split ``count`` by ``shares`` (largest remainder), so small runs still mix."""
    total = sum(shares.values())
    exact = {name: count * share / total for name, share in shares.items()}
    quotas = {name: int(value) for name, value in exact.items()}
    by_remainder = sorted(shares, key=lambda name: (quotas[name] - exact[name], name))
    for name in by_remainder[: count - sum(quotas.values())]:
        quotas[name] += 1
    return quotas


def plan(
    count: int, seed: int, kinds: Iterable[str] = KINDS, formats: Iterable[str] = FORMATS
) -> list[tuple[str, int, str]]:
    """(kind, number within the kind, format) of each document of a run."""
    kinds, formats = list(kinds), list(formats)
    for name, chosen, known in (("kind", kinds, KINDS), ("format", formats, FORMATS)):
        unknown = sorted(set(chosen) - set(known))
        if unknown or not chosen:
            raise ValueError(f"unknown or no {name}s: {unknown}; choose from {', '.join(known)}")
    if count < 0:
        raise ValueError("count must not be negative")
    rng = random.Random(f"servicetools.datagen:plan:{seed}")
    kind_quotas = _quotas(count, {k: KIND_SHARES[k] for k in KINDS if k in kinds})
    documents = []
    for kind, n in kind_quotas.items():
        quotas = _quotas(n, {f: FORMAT_SHARES[f] for f in FORMATS if f in formats})
        fmts = [fmt for fmt, q in quotas.items() for _ in range(q)]
        rng.shuffle(fmts)
        documents += [(kind, i, fmt) for i, fmt in enumerate(fmts, start=1)]
    return documents


def _item_count(rng: random.Random, kind: str, fmt: str) -> int:
    if kind == "receipt":
        return rng.randint(1, 12)
    if fmt not in IMAGE_FORMATS and rng.random() < 0.3:
        return rng.randint(22, 48)  # long enough to continue on a second page
    return rng.randint(2, 12)


def make_document(
    kind: str, number: int, fmt: str, seed: int
) -> tuple[bytes, truth.Printed, dict[str, Any] | None]:
    """Draw one document; return its file bytes, what it printed and, for scans, the scan info."""
    key = f"servicetools.datagen:{seed}:{kind}:{number}"
    rng = random.Random(key)
    layouts: dict[str, Callable[[random.Random, Any], truth.Printed]]
    layouts = dict(invoice_layouts.LAYOUTS if kind == "invoice" else receipt_layouts.LAYOUTS)
    layout = layouts[rng.choice(sorted(layouts))]
    items = _item_count(rng, kind, fmt)
    while True:
        doc_rng = random.Random(f"{key}:{items}")
        if kind == "invoice":
            printed = layout(doc_rng, content.invoice(doc_rng, item_count=items))
        else:
            printed = layout(doc_rng, content.receipt(doc_rng, item_count=items))
        # An image holds one page, so drop items until the document fits on one.
        if fmt not in IMAGE_FORMATS or len(printed.sheet.pages) == 1 or items == 1:
            break
        items -= 1
    pdf = render_pdf(printed.sheet, title=f"{PREFIX[kind]}-{number:04d}")
    if fmt == "pdf":
        return pdf, printed, None
    data, info = scan(pdf, fmt, doc_rng)
    return data, printed, info


def _clean(folder: Path) -> None:
    if folder.is_dir():
        for path in folder.iterdir():
            if path.is_file() and _GENERATED.match(path.name):
                path.unlink()


def generate(
    out_dir: str | Path,
    count: int,
    seed: int,
    kinds: Iterable[str] = KINDS,
    formats: Iterable[str] = FORMATS,
    *,
    progress: Callable[[Path], None] | None = None,
) -> list[Path]:
    """Write ``count`` documents under ``out_dir/documents`` and their truth under
    ``out_dir/truth``; return the truth paths. Same arguments, same bytes."""
    out = Path(out_dir)
    documents = plan(count, seed, kinds, formats)
    truth_dir = out / "truth"
    for folder in [*(out / "documents" / f for f in FOLDER.values()), truth_dir]:
        _clean(folder)
    truth_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for kind, number, fmt in documents:
        data, printed, scan_info = make_document(kind, number, fmt, seed)
        stem = f"{PREFIX[kind]}-{number:04d}"
        relative = f"{FOLDER[kind]}/{stem}.{EXTENSION[fmt]}"
        path = out / "documents" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        record = truth.record(printed, document=relative, fmt=fmt, seed=seed, scan=scan_info)
        truth_path = truth_dir / f"{stem}.json"
        truth.write(truth_path, record)
        written.append(truth_path)
        if progress is not None:
            progress(truth_path)
    return written
