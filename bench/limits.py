"""Limit benchmarks against the embedded local service: the largest accepted request of
every limit beside a small ordinary request of the same kind, and the smallest refused one.

For each limit of docs/interface.md ("Limits" and "Fixed limits") three kinds of rows:

- ``baseline``: a small ordinary request of the same kind (median of a few runs);
- the largest request the limit lets through (one run: they are expensive);
- the smallest request just over the limit, with the documented 4xx and how fast it comes.

Columns: the request's wall time (bodies are built beforehand, so only the loopback and
the service are timed), the peak RSS of the service process tree (the service and its
engine workers) above its RSS just before the request, sampled every 20 ms, and the time
as a multiple of the baseline's. Values come from `Settings()` and the wire schemas, so
the bench follows the limits if they change. After the table, one page's peak memory:
the largest accepted image (PNG, JPEG) and PDF page (text, scanned) against an A4 page
of its kind, as a ratio. For the large requests a small status
request is sent every 50 ms alongside, and its slowest answer is listed after the table:
work done on the service's event loop holds up every other client.

Run: ``.venv/bin/python bench/limits.py [--quick]`` (``make bench`` runs it too). The exit
status is 1 when an accepted request is refused, a refused one accepted (or refused with
another code than documented), or any answer is a 5xx; timings never fail the run.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import math
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import requests
from urllib3 import encode_multipart_formdata

from servicetools import LocalService, wire
from servicetools.service.core.vault import MAX_NAME
from servicetools.service.settings import Settings
from servicetools.wire.protocol import API_PREFIX, AUTH_HEADER

MIB = 1024 * 1024
#: `servicetools serve`, which LocalService runs, uses the defaults; data_dir is unused.
LIMITS = Settings(data_dir=Path(tempfile.gettempdir()))
SCALE = LIMITS.render_dpi / 72  # pixels per point, as the service draws a page
SAMPLE_EVERY = 0.02  # seconds between RSS samples of the service tree
#: "Just under" and "just over" a megapixel limit, kept well above float32 rounding of a
#: page size in points (pdfium stores page boxes as float).
MP_MARGIN = 0.01
#: The service refuses loopback downloads in the pipeline (D14): a hosted trigger is
#: accepted and its extraction ends in `error` at once, with no network involved.
CHEAP_URL = "http://127.0.0.1:9/"
CONFIGURATION = "invoices"
A4 = (595.2756, 841.8898)


def _schema_max_length(schema: str, *path: str | int) -> int:
    node: Any = wire.schema(schema)
    for key in path:
        node = node[key]
    length: int = node["maxLength"]
    return length


#: The fixed limits, read where the service reads them (wire schemas, core/vault.py).
MAX_URL = _schema_max_length("trigger_request", "properties", "document_host_url")
MAX_VALUE = _schema_max_length("update_object", "allOf", 0, "then", "properties",
                               "new_extracted_values", "items", "properties",
                               "extracted_field")
MAX_ID = _schema_max_length("update_request", "properties", "extraction_id")


# -- documents ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Text:
    x: float
    top: float  # points from the top edge: pages of any height share one layout
    size: float
    text: str


@dataclass(frozen=True)
class PdfPage:
    width: float  # points
    height: float
    texts: tuple[Text, ...] = ()
    #: A JPEG drawn at (0, top) with the given size in points; with no text this is what a
    #: scan looks like to the service (no text layer, so the page goes to the OCR).
    jpeg: bytes = b""
    jpeg_pixels: tuple[int, int] = (0, 0)
    jpeg_box: tuple[float, float] = (0.0, 0.0)


def invoice_texts(number: str) -> tuple[Text, ...]:
    """The text of bench/client.py's invoice, at its place from the top-left corner."""
    texts = [Text(50, 60, 18, "INVOICE")]
    top = 60.0
    for label, value in [("Invoice No:", number), ("Invoice Date:", "2024-03-15"),
                         ("Due Date:", "2024-04-14"), ("From:", "Acme Supplies Ltd"),
                         ("Bill To:", "Globex Corporation")]:
        top += 22
        texts += [Text(50, top, 11, label), Text(170, top, 11, value)]
    top += 40
    texts += [Text(x, top, 11, head) for x, head in
              [(50, "Description"), (300, "Qty"), (370, "Unit Price"), (480, "Amount")]]
    for row in [("Widget A", "2", "50.00", "100.00"), ("Gadget B", "1", "150.00", "150.00")]:
        top += 20
        texts += [Text(x, top, 11, t) for x, t in zip((50, 300, 370, 480), row, strict=True)]
    top += 40
    for label, value in [("Subtotal:", "250.00"), ("Tax:", "50.00"), ("Total:", "300.00")]:
        texts += [Text(370, top, 11, label), Text(480, top, 11, value)]
        top += 20
    return tuple(texts)


def _stream(entries: str, data: bytes) -> bytes:
    return (f"<< {entries} /Length {len(data)} >>\nstream\n".encode() + data
            + b"\nendstream")


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def build_pdf(pages: Sequence[PdfPage], pad_to: int | None = None) -> bytes:
    """A PDF written directly, not with reportlab: page sizes are exact to 1/10,000 pt,
    the JPEG goes in as it is (reportlab would ASCII85 it, a quarter larger), and
    ``pad_to`` makes the file exactly that many bytes with an unreferenced stream, which
    no reader looks at (a 25 MiB document whose cost is its size, not its content)."""

    def assemble(pad: int) -> bytes:
        objects: list[bytes] = [b"", b""]  # 1: catalog, 2: page tree, filled in below
        objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
                       b"/Encoding /WinAnsiEncoding >>")
        font = len(objects)
        kids: list[int] = []
        for page in pages:
            resources = f"/Font << /F1 {font} 0 R >>"
            ops: list[str] = []
            if page.jpeg:
                (w, h), (bw, bh) = page.jpeg_pixels, page.jpeg_box
                objects.append(_stream(
                    f"/Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace "
                    "/DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode", page.jpeg))
                resources += f" /XObject << /Im1 {len(objects)} 0 R >>"
                ops.append(f"q {bw:.4f} 0 0 {bh:.4f} 0 {page.height - bh:.4f} cm /Im1 Do Q")
            for t in page.texts:
                ops.append(f"BT /F1 {t.size:g} Tf 1 0 0 1 {t.x:.2f} {page.height - t.top:.2f} "
                           f"Tm ({_escape(t.text)}) Tj ET")
            objects.append(_stream("", "\n".join(ops).encode("latin-1")))
            objects.append(
                f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {page.width:.4f} "
                f"{page.height:.4f}] /Resources << {resources} >> /Contents "
                f"{len(objects)} 0 R >>".encode())
            kids.append(len(objects))
        objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
        objects[1] = (f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] "
                      f"/Count {len(kids)} >>").encode()
        if pad > 0:
            objects.append(_stream("", b"\0" * pad))
        out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
        offsets = []
        for number, obj in enumerate(objects, 1):
            offsets.append(len(out))
            out += f"{number} 0 obj\n".encode() + obj + b"\nendobj\n"
        xref = len(out)
        out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
        for offset in offsets:
            out += f"{offset:010d} 00000 n \n".encode()
        out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n"
                "%%EOF\n").encode()
        return bytes(out)

    data = assemble(0)
    if pad_to is None:
        return data
    # The padding object's own framing and the digits of the offsets shift with its size:
    # a few rounds of correcting by the difference hit the size exactly.
    pad = pad_to - len(data) - 80
    for _ in range(8):
        if pad <= 0:
            raise ValueError(f"the pages alone have {len(data):,} bytes, over {pad_to:,}")
        data = assemble(pad)
        if len(data) == pad_to:
            return data
        pad += pad_to - len(data)
    raise RuntimeError(f"could not pad the PDF to {pad_to:,} bytes")


def square_side(megapixels: float) -> float:
    """The side in points of a square page that draws to ``megapixels`` at render_dpi."""
    return math.sqrt(megapixels * 1e6) / SCALE


def drawn_megapixels(pdf: bytes) -> list[float]:
    """Each page's megapixels exactly as the service computes them (core/documents.py)."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    try:
        sizes = [doc.get_page_size(i) for i in range(len(doc))]
    finally:
        doc.close()
    return [(w * SCALE) * (h * SCALE) / 1e6 for w, h in sizes]


def invoice_raster() -> Any:
    """The A4 invoice drawn at render_dpi: the text of a scan, for images and scanned PDFs."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(build_pdf([PdfPage(*A4, invoice_texts("INV-SCAN-0001"))]))
    try:
        page = doc[0]
        image = page.render(scale=SCALE).to_pil().convert("RGB")
        page.close()
    finally:
        doc.close()
    return image


def encode_image(image: Any, fmt: str) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return out.getvalue()


def canvas_image(width: int, height: int, raster: Any, fmt: str) -> bytes:
    """A white ``width`` x ``height`` image with the invoice in its top-left corner."""
    from PIL import Image

    image = Image.new("RGB", (width, height), "white")
    image.paste(raster, (0, 0))
    return encode_image(image, fmt)


def noise_jpeg(target: int) -> tuple[bytes, int, int]:
    """A JPEG of random pixels of at most ``target`` bytes: the size of a detailed photo
    or scan, with pixels the renderer really has to decode."""
    from PIL import Image

    def noise(w: int, h: int) -> bytes:
        return encode_image(Image.frombytes("RGB", (w, h), os.urandom(w * h * 3)), "JPEG")

    per_pixel = len(noise(512, 512)) / 512 ** 2
    side = int(math.sqrt(target / per_pixel) * 0.99)
    for _ in range(8):
        data = noise(side, side)
        if len(data) <= target:
            return data, side, side
        side = int(side * math.sqrt(target / len(data)) * 0.995)
    raise RuntimeError(f"no noise JPEG under {target:,} bytes")


def image_side(megapixels: float) -> int:
    """The largest square image side whose pixels are within ``megapixels``."""
    side = math.isqrt(int(megapixels * 1e6))
    while side * side > megapixels * 1e6:
        side -= 1
    return side


# -- JSON bodies ----------------------------------------------------------------------------
def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def padded(text: bytes, size: int) -> bytes:
    """``text`` followed by spaces (JSON whitespace) to exactly ``size`` bytes."""
    if len(text) > size:
        raise ValueError(f"body of {len(text):,} bytes is over {size:,}")
    return text + b" " * (size - len(text))


def repeated_body(prefix: bytes, item: bytes, suffix: bytes, size: int) -> tuple[bytes, int]:
    """``prefix item,item,...,item suffix`` with as many items as fit in ``size`` bytes,
    padded to exactly ``size``; the body and the number of items."""
    count = (size - len(prefix) - len(suffix) + 1) // (len(item) + 1)
    return padded(prefix + b",".join([item] * count) + suffix, size), count


def trigger(document: bytes, name: str = "bench", **fields: Any) -> bytes:
    return dumps({"configuration_name": CONFIGURATION, "input_type": "raw",
                  "extraction_name": name,
                  "document_raw_data": base64.b64encode(document).decode("ascii"), **fields})


def json_depth(value: Any) -> int:
    """Nesting as the service counts it (deps.py): the body itself is level 1, and only
    arrays and objects are levels."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


def deep_status_body(depth: int) -> bytes:
    """A status request whose id list is nested to ``depth`` levels, the body included."""
    body = (b'{"extraction_id_list":' + b"[" * (depth - 1) + b'"x"' + b"]" * (depth - 1)
            + b"}")
    assert json_depth(json.loads(body)) == depth
    return body


def wide_deep_status_body(depth: int, size: int) -> tuple[bytes, int]:
    """A status request of ``size`` bytes filled with empty arrays at level ``depth``: the
    most the parser and the depth check are given while the depth is allowed."""
    opening = depth - 2  # the id list and the arrays around the empty ones
    body, count = repeated_body(b'{"extraction_id_list":' + b"[" * opening, b"[]",
                                b"]" * opening + b"}", size)
    if size <= 1_000_000:  # a full-size check would double the bench's own memory
        assert json_depth(json.loads(body)) == depth
    return body, count


# -- measuring ------------------------------------------------------------------------------
class TreeMemory:
    """RSS of a process and all its descendants (the service and its engine workers)."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)

    def _processes(self) -> list[psutil.Process]:
        try:
            return [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def rss(self) -> int:
        total = 0
        for process in self._processes():
            try:
                total += process.memory_info().rss
            except psutil.NoSuchProcess:
                continue  # a worker replaced between the listing and the reading
        return total

    def cpu_seconds(self) -> float:
        total = 0.0
        for process in self._processes():
            try:
                times = process.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
        return total

    def settle(self, timeout: float = 20.0) -> None:
        """Wait until the tree is quiet (under a tenth of a core for 0.1 s): what a large
        request leaves behind (freeing its objects, a failed hosted job in a worker)
        must not be timed as part of the next one."""
        deadline = time.monotonic() + timeout
        before = self.cpu_seconds()
        while time.monotonic() < deadline:
            time.sleep(0.1)
            now = self.cpu_seconds()
            if now - before < 0.01:
                return
            before = now

    @contextmanager
    def peak(self) -> Iterator[list[float]]:
        """Yields a list that holds, once the block is left, peak minus idle RSS in MiB."""
        idle = self.rss()
        peak = idle
        stop = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not stop.wait(SAMPLE_EVERY):
                peak = max(peak, self.rss())

        sampler = threading.Thread(target=sample, name="rss-sampler", daemon=True)
        sampler.start()
        result: list[float] = []
        try:
            yield result
        finally:
            stop.set()
            sampler.join()
            peak = max(peak, self.rss())
            result.append((peak - idle) / MIB)


@dataclass(frozen=True)
class Call:
    """One prebuilt HTTP request; ``path`` is below the API prefix."""

    method: str
    path: str
    body: bytes = b""
    content_type: str = "application/json"


@dataclass
class Outcome:
    status: int
    code: str
    seconds: float
    peak_mib: float
    answer: Any = None  # the parsed 2xx body, when asked for


@dataclass
class Expect:
    status: int
    code: str = ""  # the documented error code; empty for a 2xx

    def matches(self, outcome: Outcome) -> bool:
        return outcome.status == self.status and (not self.code or outcome.code == self.code)


@dataclass
class Bench:
    svc: LocalService
    quick: bool
    session: requests.Session = field(default_factory=requests.Session)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The rows run with `probing`, and the slowest answer to the probe meanwhile.
    waits: list[tuple[str, float]] = field(default_factory=list)
    baselines: dict[str, Outcome] = field(default_factory=dict)
    #: One page's peak memory: (what, the largest accepted page, a small page of the kind).
    page_peaks: list[tuple[str, Outcome, Outcome]] = field(default_factory=list)
    #: The small request `probing` sends; set once an extraction exists to ask about.
    probe: Call = field(default_factory=lambda: Call("GET", "/vault/list"))
    memory: TreeMemory = field(init=False)

    def __post_init__(self) -> None:
        assert self.svc.process is not None
        self.memory = TreeMemory(self.svc.process.pid)

    # -- HTTP ----------------------------------------------------------------------------
    def raw(self, call: Call, session: requests.Session | None = None) -> requests.Response:
        headers = {AUTH_HEADER: self.svc.token}
        if call.body:
            headers["Content-Type"] = call.content_type
        return (session or self.session).request(
            call.method, f"{self.svc.base_url}{API_PREFIX}{call.path}",
            data=call.body or None, headers=headers, timeout=900)

    @contextmanager
    def probing(self) -> Iterator[list[float]]:
        """Send the small `probe` request every 50 ms from another connection while the
        block runs; yields a list that holds the slowest answer's seconds afterwards. A
        slow answer means the request under test held up everybody else."""
        waits: list[float] = []
        stop = threading.Event()

        def run() -> None:
            session = requests.Session()
            while not stop.is_set():
                start = time.perf_counter()
                self.raw(self.probe, session)
                waits.append(time.perf_counter() - start)
                stop.wait(0.05)

        thread = threading.Thread(target=run, name="probe", daemon=True)
        thread.start()
        result: list[float] = []
        try:
            yield result
        finally:
            stop.set()
            thread.join()
            result.append(max(waits, default=0.0))

    def send(self, call: Call, keep_json: bool = False) -> Outcome:
        """Time one request and sample the service tree's memory while it runs."""
        self.memory.settle()
        with self.memory.peak() as peak:
            start = time.perf_counter()
            try:
                response: requests.Response | None = self.raw(call)
                assert response is not None
                response.content  # noqa: B018  the whole answer is part of the request
            except requests.ConnectionError as exc:
                response, error = None, f"connection error: {exc}"
            seconds = time.perf_counter() - start
        if response is None:
            return Outcome(0, error, seconds, peak[0])
        code, body = "", None
        if response.status_code >= 400:
            try:
                code = str(response.json()["error"]["code"])
            except (ValueError, KeyError, TypeError):
                code = "(no error body)"
        elif keep_json:
            body = response.json()
        return Outcome(response.status_code, code, seconds, peak[0], body)

    def post(self, path: str, body: bytes) -> Any:
        """An untimed request whose answer the bench needs; it must succeed."""
        response = self.raw(Call("POST", path, body))
        response.raise_for_status()
        return response.json()

    # -- rows ----------------------------------------------------------------------------
    def baseline(self, key: str, label: str, limit: str, call: Call,
                 expect: Expect | None = None) -> Outcome:
        """Median of a few runs of an ordinary request, printed as a section's first row."""
        if key not in self.baselines:
            runs = [self.send(call) for _ in range(1 if self.quick else 3)]
            runs.sort(key=lambda o: o.seconds)
            self.baselines[key] = runs[len(runs) // 2]
        outcome = self.baselines[key]
        self.report(limit, f"baseline: {label}", outcome, outcome, expect or Expect(200))
        return outcome

    def row(self, limit: str, label: str, call: Call, expect: Expect, base: Outcome,
            keep_json: bool = False, probe: bool = False) -> Outcome:
        """One request; with ``probe``, also how long a small request sent alongside
        waited (the service's event loop, shared by all requests, may be held)."""
        if probe:
            with self.probing() as waited:
                outcome = self.send(call, keep_json)
            self.waits.append((f"{limit} / {label}", waited[0]))
        else:
            outcome = self.send(call, keep_json)
        self.report(limit, label, outcome, base, expect)
        return outcome

    def report(self, limit: str, label: str, outcome: Outcome, base: Outcome,
               expect: Expect) -> None:
        status = f"{outcome.status} {outcome.code}".strip()
        if outcome.status >= 500 or not expect.matches(outcome):
            wanted = f"{expect.status} {expect.code}".strip()
            self.failures.append(f"{limit} / {label}: got {status}, expected {wanted}")
            status += " !!"
        ratio = outcome.seconds / base.seconds if base.seconds > 0 else float("nan")
        print(f"{limit:<12} {label:<54} {status:<26} {outcome.seconds:8.3f} "
              f"{outcome.peak_mib:9.1f} {base.seconds:8.3f} {ratio:8.1f}", flush=True)

    @staticmethod
    def section(title: str) -> None:
        print(f"-- {title}", flush=True)

    # -- helpers needing the service -----------------------------------------------------
    def fresh_extraction(self) -> tuple[str, dict[str, str]]:
        """A new saved extraction of the invoice; its id and extracted target ids by the
        configuration's target ids. Each update row gets its own, so a large update does
        not make the next row's update read it back."""
        data = self.post("/extraction/trigger_sync",
                         trigger(build_pdf([PdfPage(*A4, invoice_texts("INV-UPD"))])))
        targets = {t["used_extraction_target_id"]: t["id"] for t in data["extracted_targets"]}
        return data["extraction_info"]["extraction_id"], targets

    def wait_final(self, ids: list[str], timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        pending = list(ids)
        while pending and time.monotonic() < deadline:
            done: set[str] = set()
            for start in range(0, len(pending), wire.MAX_STATUS_IDS):
                chunk = pending[start:start + wire.MAX_STATUS_IDS]
                statuses = self.post("/extraction/status/list",
                                     dumps({"extraction_id_list": chunk}))["status_map"]
                done |= {i for i, s in statuses.items()
                         if s["status_type"] in wire.FINAL_STATUSES}
            pending = [i for i in pending if i not in done]
            if pending:
                time.sleep(0.2)


# -- the limits ---------------------------------------------------------------------------
def sync(body: bytes) -> Call:
    return Call("POST", "/extraction/trigger_sync", body)


def upload(data: bytes, name: str, doctype: str = "bench") -> Call:
    body, content_type = encode_multipart_formdata(
        {"uploadFile": (name, data, "application/octet-stream"), "doctype": doctype})
    return Call("POST", "/vault/upload", body, content_type)


def update(extraction_id: str, target_id: str, values: Sequence[str]) -> Call:
    return Call("POST", "/extraction/result/update", dumps(
        {"extraction_id": extraction_id, "updates": [
            {"extracted_target_id": target_id, "type": "field",
             "new_extracted_values": [{"extracted_field": v} for v in values]}]}))


def mp(value: float) -> str:
    return f"{value:.2f} MP"


def scan_pdf(raster: Any, width: float, height: float, fill: bool = False) -> bytes:
    """A page of ``width`` x ``height`` points without text: the invoice ``raster`` as a
    JPEG in its top-left corner at render_dpi, or with ``fill`` one JPEG of the page's
    whole size at render_dpi (white, the invoice in its corner), as a scanner makes it."""
    if fill:
        pixels = (round(width * SCALE), round(height * SCALE))
        jpeg = canvas_image(*pixels, raster, "JPEG")
        return build_pdf([PdfPage(width, height, jpeg=jpeg, jpeg_pixels=pixels,
                                  jpeg_box=(width, height))])
    box = (raster.width / SCALE, raster.height / SCALE)
    return build_pdf([PdfPage(width, height, jpeg=encode_image(raster, "JPEG"),
                              jpeg_pixels=raster.size, jpeg_box=box)])


def bench_page_pixels(b: Bench, invoice: Call, raster: Any) -> None:
    limit = "page MP"
    b.section(f"PDF page size: {LIMITS.max_megapixels:g} MP per page drawn at "
              f"{LIMITS.render_dpi} dpi (max_megapixels) -> 413 document_too_large")
    base = b.baseline("sync_pdf", "A4 invoice PDF, trigger_sync", limit, invoice)
    under = square_side(LIMITS.max_megapixels - MP_MARGIN)
    over = square_side(LIMITS.max_megapixels + MP_MARGIN)
    for side, expect, text in ((under, Expect(200), "text"),
                               (over, Expect(413, "document_too_large"), "text")):
        pdf = build_pdf([PdfPage(side, side, invoice_texts("INV-BIG-0001"))])
        (drawn,) = drawn_megapixels(pdf)
        assert (drawn <= LIMITS.max_megapixels) == (expect.status == 200), drawn
        outcome = b.row(limit, f"1 page {side:,.1f} pt square = {mp(drawn)}, {text}",
                        sync(trigger(pdf)), expect, base, probe=expect.status == 200)
        if expect.status == 200:
            b.page_peaks.append((f"PDF text page, {mp(drawn)} against A4", outcome, base))
    if b.quick:
        return
    # No text layer: the engine draws the page in colour for the OCR, the dearest page
    # the limit lets through; a small scan on a large page, and one image as large as the
    # page (a scanner's page: the renderer decodes all of its pixels).
    scan_base = b.baseline("sync_scan", "A4 scanned invoice PDF (one JPEG), trigger_sync",
                           limit, sync(trigger(scan_pdf(raster, *A4, fill=True))))
    for fill, what in ((False, "the scanned invoice in a corner"),
                       (True, "one JPEG of the whole page")):
        pdf = scan_pdf(raster, under, under, fill)
        (drawn,) = drawn_megapixels(pdf)
        outcome = b.row(limit, f"1 page = {mp(drawn)}, {what} (OCR)",
                        sync(trigger(pdf)), Expect(200), scan_base, probe=True)
        b.page_peaks.append((f"PDF scan page, {mp(drawn)}, {what}, against A4",
                             outcome, scan_base))


def bench_document_pixels(b: Bench, invoice: Call) -> None:
    limit = "doc MP"
    total_limit = LIMITS.max_document_megapixels
    b.section(f"PDF pixels of all pages: {total_limit:g} MP (max_document_megapixels) "
              "-> 413 document_too_large")
    base = b.baseline("sync_pdf", "A4 invoice PDF, trigger_sync", limit, invoice)
    count = math.ceil(total_limit / LIMITS.max_megapixels)
    each = min(LIMITS.max_megapixels, total_limit / count) - MP_MARGIN
    side = square_side(each)
    pages = [PdfPage(side, side, invoice_texts(f"INV-DOC-{i:04d}")) for i in range(count)]
    accepted = build_pdf(pages)
    drawn = drawn_megapixels(accepted)
    assert sum(drawn) <= total_limit and max(drawn) <= LIMITS.max_megapixels, drawn
    if not b.quick:
        b.row(limit, f"{count} pages of {mp(each)} = {mp(sum(drawn))}, text",
              sync(trigger(accepted)), Expect(200), base, probe=True)
    # One more small page takes the sum just over the limit.
    extra = square_side(total_limit - sum(drawn) + MP_MARGIN)
    refused = build_pdf([*pages, PdfPage(extra, extra)])
    drawn = drawn_megapixels(refused)
    assert sum(drawn) > total_limit, drawn
    b.row(limit, f"{count} pages as above + 1 of {mp(drawn[-1])} = {mp(sum(drawn))}",
          sync(trigger(refused)), Expect(413, "document_too_large"), base)


def bench_pages(b: Bench, invoice: Call) -> None:
    limit = "pages"
    b.section(f"Pages per document: {LIMITS.max_pages} (max_pages) -> 413 too_many_pages")
    base = b.baseline("sync_pdf", "A4 invoice PDF, trigger_sync", limit, invoice)
    for count, expect in ((LIMITS.max_pages, Expect(200)),
                          (LIMITS.max_pages + 1, Expect(413, "too_many_pages"))):
        pdf = build_pdf([PdfPage(*A4, invoice_texts(f"INV-P-{i:04d}")) for i in range(count)])
        b.row(limit, f"{count} A4 invoice pages ({len(pdf) / 1024:,.0f} KiB)",
              sync(trigger(pdf)), expect, base, probe=expect.status == 200)


def bench_document_bytes(b: Bench, invoice: Call) -> None:
    limit = "doc bytes"
    size = LIMITS.max_document_bytes
    b.section(f"Document size: {size:,} bytes (max_document_bytes) -> 413 document_too_large")
    base = b.baseline("sync_pdf", "A4 invoice PDF, trigger_sync", limit, invoice)
    texts = invoice_texts("INV-BYTES-001")
    if b.quick:  # a smaller document padded the same way: the path, not the full cost
        accepted = build_pdf([PdfPage(*A4, texts)], pad_to=4 * MIB)
        what = "A4 invoice padded to 4 MiB (quick)"
    else:
        # A photo-like JPEG behind the text, so the bytes are pixels the renderer decodes.
        jpeg, w, h = noise_jpeg(size - 64 * 1024)
        accepted = build_pdf([PdfPage(*A4, texts, jpeg, (w, h), A4)], pad_to=size)
        what = f"A4 invoice on a {w}x{h} JPEG, {len(accepted):,} B"
    b.row(limit, f"raw: {what}", sync(trigger(accepted)), Expect(200), base, probe=True)
    refused = build_pdf([PdfPage(*A4, texts)], pad_to=size + 1)
    b.row(limit, f"raw: padded PDF of {len(refused):,} B", sync(trigger(refused)),
          Expect(413, "document_too_large"), base, probe=True)
    upload_base = b.baseline("upload", "vault upload of the A4 invoice", limit,
                             upload(build_pdf([PdfPage(*A4, texts)]), "invoice.pdf"))
    b.row(limit, f"vault upload, {len(accepted):,} B", upload(accepted, "big.pdf"),
          Expect(200), upload_base, probe=True)
    b.row(limit, f"vault upload, {len(refused):,} B", upload(refused, "big.pdf"),
          Expect(413, "document_too_large"), upload_base)


def bench_image_pixels(b: Bench, raster: Any) -> None:
    limit = "image MP"
    b.section(f"Image pixels: {LIMITS.max_megapixels:g} MP (max_megapixels) "
              "-> 413 document_too_large")
    side = image_side(LIMITS.max_megapixels)
    over = (side + 1, side) if (side + 1) * side > LIMITS.max_megapixels * 1e6 else (
        side + 1, side + 1)
    cases = [((side, side), "PNG", Expect(200)),
             (over, "PNG", Expect(413, "document_too_large"))]
    if not b.quick:
        cases.insert(1, ((side, side), "JPEG", Expect(200)))
    for (w, h), fmt, expect in cases:
        base = b.baseline(f"sync_{fmt}", f"invoice {fmt} {raster.width}x{raster.height}, "
                          "trigger_sync", limit, sync(trigger(encode_image(raster, fmt))))
        data = canvas_image(w, h, raster, fmt)
        outcome = b.row(limit, f"{fmt} {w}x{h} = {w * h / 1e6:.3f} MP, invoice in a corner",
                        sync(trigger(data)), expect, base, probe=expect.status == 200)
        if expect.status == 200:
            b.page_peaks.append((f"{fmt} image, {w * h / 1e6:.2f} MP, against "
                                 f"{raster.width}x{raster.height}", outcome, base))


def bench_json_depth(b: Bench, status_base: Call) -> None:
    limit = "JSON depth"
    depth = LIMITS.max_json_depth
    b.section(f"JSON nesting: {depth} levels (max_json_depth) -> 400 invalid_json; no valid "
              "request nests that deep, so at the limit the answer is the schema's 400 "
              "invalid_request")
    base = b.baseline("status", "status/list of 1 id", limit, status_base)
    path = "/extraction/status/list"
    b.row(limit, f"status/list, id list nested {depth} levels",
          Call("POST", path, deep_status_body(depth)), Expect(400, "invalid_request"), base)
    b.row(limit, f"status/list, id list nested {depth + 1} levels",
          Call("POST", path, deep_status_body(depth + 1)), Expect(400, "invalid_json"), base)
    most = LIMITS.max_json_containers
    b.section(f"JSON arrays and objects: {most:,} (max_json_containers, counted before "
              "parsing) -> 400 invalid_json; at the limit the body is parsed, walked and "
              "checked (the schema's 400 invalid_request)")
    limit = "containers"
    opening = depth - 2
    for count, expect in ((most - opening - 1, Expect(400, "invalid_request")),
                          (most - opening, Expect(400, "invalid_json"))):
        body = (b'{"extraction_id_list":' + b"[" * opening + b",".join([b"[]"] * count)
                + b"]" * opening + b"}")
        b.row(limit, f"{len(body):,} B body: {count:,} [] at level {depth}",
              Call("POST", path, body), expect, base, probe=True)
    size = LIMITS.max_body_bytes // (10 if b.quick else 1)
    body, count = wide_deep_status_body(depth, size)
    b.row(limit, f"{size:,} B body: {count:,} [] at level {depth}",
          Call("POST", path, body), Expect(400, "invalid_json"), base, probe=True)


def bench_names(b: Bench, invoice: Call, status_base: Call) -> None:
    limit = "name/id len"
    b.section(f"Names and ids: {MAX_NAME} characters (JSON Schema maxLength, MAX_NAME) "
              "-> 400 invalid_request")
    base = b.baseline("sync_pdf", "A4 invoice PDF, trigger_sync", limit, invoice)
    pdf = build_pdf([PdfPage(*A4, invoice_texts("INV-NAME-001"))])
    for n, expect in ((MAX_NAME, Expect(200)), (MAX_NAME + 1, Expect(400, "invalid_request"))):
        b.row(limit, f"trigger_sync, extraction_name of {n}", sync(trigger(pdf, "n" * n)),
              expect, base)
    # Names and ids that pass the length check but name nothing: 404, before any work.
    for n, expect in ((MAX_NAME, Expect(404, "not_found")),
                      (MAX_NAME + 1, Expect(400, "invalid_request"))):
        body = dumps({"configuration_name": "c" * n, "input_type": "raw",
                      "document_raw_data": base64.b64encode(pdf).decode("ascii")})
        b.row(limit, f"trigger_sync, configuration_name of {n}", sync(body), expect, base)
    for n, expect in ((MAX_NAME, Expect(404, "not_found")),
                      (MAX_NAME + 1, Expect(400, "invalid_request"))):
        body = dumps({"configuration_name": CONFIGURATION, "input_type": "service",
                      "document_storage_id": "d" * n})
        b.row(limit, f"trigger_sync, document_storage_id of {n}", sync(body), expect, base)
    upload_base = b.baseline("upload", "vault upload of the A4 invoice", limit,
                             upload(pdf, "invoice.pdf"))
    for n, expect in ((MAX_NAME, Expect(200)), (MAX_NAME + 1, Expect(400, "invalid_request"))):
        name = "f" * (n - 4) + ".pdf"
        b.row(limit, f"vault upload, file name of {n}, doctype of {MAX_NAME}",
              upload(pdf, name, "t" * MAX_NAME), expect, upload_base)
    status_1 = b.baseline("status", "status/list of 1 id", limit, status_base)
    for n, expect in ((MAX_ID, Expect(404, "not_found")),
                      (MAX_ID + 1, Expect(400, "invalid_request"))):
        b.row(limit, f"status/list, id of {n}",
              Call("POST", "/extraction/status/list", dumps({"extraction_id_list": ["s" * n]})),
              expect, status_1)
    for n, expect in ((MAX_ID, Expect(404, "not_found")),
                      (MAX_ID + 1, Expect(400, "invalid_request"))):
        b.row(limit, f"result/update, extraction_id of {n}",
              update("u" * n, "t", ["x"]), expect, status_1)


def bench_values(b: Bench, update_base: Call) -> None:
    limit = "value len"
    b.section(f"Corrected value: {MAX_VALUE:,} characters (JSON Schema maxLength) "
              "-> 400 invalid_request; on the date target, whose rule is the dearest")
    base = b.baseline("update", "result/update, 1 short date value", limit, update_base)
    value = "9" * MAX_VALUE
    for n, expect in ((MAX_VALUE, Expect(200)), (MAX_VALUE + 1, Expect(400, "invalid_request"))):
        eid, targets = b.fresh_extraction()
        b.row(limit, f"result/update, 1 value of {n:,}",
              update(eid, targets["t-invoice-date"], ["9" * n]), expect, base)
    # As many values at the limit as the body limit holds.
    eid, targets = b.fresh_extraction()
    item = b'{"extracted_field":"' + value.encode() + b'"}'
    size = LIMITS.max_body_bytes // (10 if b.quick else 1)
    body, count = repeated_body(
        b'{"extraction_id":"' + eid.encode() + b'","updates":[{"extracted_target_id":"'
        + targets["t-invoice-date"].encode() + b'","type":"field","new_extracted_values":[',
        item, b"]}]}", size)
    b.row(limit, f"result/update, {count} values of {MAX_VALUE:,} ({size:,} B)",
          Call("POST", "/extraction/result/update", body), Expect(200), base, probe=True)


def bench_url(b: Bench) -> None:
    limit = "URL len"
    b.section(f"Hosted URL: {MAX_URL:,} characters (JSON Schema maxLength) -> 400 "
              "invalid_request; the URL is a refused loopback one, so only the trigger is "
              "timed")
    ids: list[str] = []

    def hosted(n: int) -> Call:
        url = CHEAP_URL + "a" * (n - len(CHEAP_URL))
        return Call("POST", "/extraction/trigger_async", dumps(
            {"configuration_name": CONFIGURATION, "input_type": "hosted",
             "document_host_url": url}))

    base = b.baseline("async_hosted", f"trigger_async, hosted URL of {len(CHEAP_URL) + 7}",
                      limit, hosted(len(CHEAP_URL) + 7))
    for n, expect in ((MAX_URL, Expect(200)), (MAX_URL + 1, Expect(400, "invalid_request"))):
        outcome = b.row(limit, f"trigger_async, hosted URL of {n:,}", hosted(n), expect, base,
                        keep_json=expect.status == 200)
        if isinstance(outcome.answer, dict):
            ids.append(outcome.answer["extraction_id"])
    b.wait_final(ids)  # the engine work of the refused download ends before the next row


def bench_update_items(b: Bench, update_base: Call) -> None:
    limit = "update items"
    size, most = LIMITS.max_body_bytes, LIMITS.max_update_values
    b.section(f"Values per update: {most:,} (max_update_values) -> 400 invalid_request; "
              f"the body: {size:,} bytes (max_body_bytes) -> 413 document_too_large")
    base = b.baseline("update", "result/update, 1 short date value", limit, update_base)

    def update(eid: str, target: str, values: list[Any]) -> Call:
        return Call("POST", "/extraction/result/update", dumps(
            {"extraction_id": eid, "updates": [{"extracted_target_id": target,
                                                "type": "field",
                                                "new_extracted_values": values}]}))

    # The smallest value that passes every check, on a target with a cheap rule.
    count = most // 10 if b.quick else most
    eid, targets = b.fresh_extraction()
    small = {"extracted_field": "x"}
    b.row(limit, f"{count:,} values on vendor", update(eid, targets["t-vendor"], [small] * count),
          Expect(200), base, probe=True)
    b.row(limit, f"{most + 1:,} values on vendor", update(eid, targets["t-vendor"],
                                                          [small] * (most + 1)),
          Expect(400, "invalid_request"), base, probe=True)
    # A failing date rule is the dearest per value (every format is tried).
    eid, targets = b.fresh_extraction()
    date_run = b.row(limit, f"{count:,} failing values on a date",
                     update(eid, targets["t-invoice-date"], [small] * count), Expect(200),
                     base, probe=True)
    if b.quick:
        b.notes.append(f"update items: {most:,} failing date values would take about "
                       f"{date_run.seconds / count * most:,.0f} s (linear projection)")
    # Invalid values: the 400 lists the first wire.MAX_PROBLEMS problems only.
    b.row(limit, f"{count:,} invalid values [1,1,...]",
          update(eid, targets["t-vendor"], [1] * count), Expect(400, "invalid_request"),
          base, probe=True)
    over = repeated_body(b'{"extraction_id":"' + eid.encode() + b'","updates":[{'
                         b'"extracted_target_id":"t","type":"field","new_extracted_values":[',
                         b'{"extracted_field":"x"}', b"]}]}", size)[0]
    b.row(limit, f"body of {size + 1:,} B", Call("POST", "/extraction/result/update",
                                                 over + b" "),
          Expect(413, "document_too_large"), base)


def bench_status_ids(b: Bench, status_base: Call) -> None:
    limit = "status ids"
    most = wire.MAX_STATUS_IDS
    b.section(f"Ids per status request: {most:,} (MAX_STATUS_IDS) -> 400 too_many_ids")
    base = b.baseline("status", "status/list of 1 id", limit, status_base)
    body = dumps({"configuration_name": CONFIGURATION, "input_type": "hosted",
                  "document_host_url": CHEAP_URL + "invoice.pdf"})
    local = threading.local()

    def one(_: int) -> str:
        if not hasattr(local, "session"):
            local.session = requests.Session()
        response = b.raw(Call("POST", "/extraction/trigger_async", body), local.session)
        response.raise_for_status()
        extraction_id: str = response.json()["extraction_id"]
        return extraction_id

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(one, range(most)))
    b.wait_final(ids)  # the workers are idle again before the timed request
    path = "/extraction/status/list"
    b.row(limit, f"status/list of {most:,} ids", Call("POST", path,
                                                      dumps({"extraction_id_list": ids})),
          Expect(200), base)
    b.row(limit, f"status/list of {most + 1:,} ids",
          Call("POST", path, dumps({"extraction_id_list": [*ids, ids[0] + "x"]})),
          Expect(400, "too_many_ids"), base)


def warm_up(b: Bench, calls: Sequence[Call]) -> None:
    """Every engine worker imports the engine and loads the OCR models on first use: run
    each kind of extraction on all of them at once, twice, before anything is timed."""
    workers = os.cpu_count() or 1
    with ThreadPoolExecutor(workers * 2) as pool:
        for _ in range(2):
            sessions = [requests.Session() for _ in calls for _ in range(workers)]
            jobs = [c for c in calls for _ in range(workers)]
            for response in pool.map(b.raw, jobs, sessions):
                response.raise_for_status()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smaller bodies and documents, no 250 MP, OCR-page or JPEG rows")
    args = parser.parse_args()
    started = time.perf_counter()
    raster = invoice_raster()
    invoice = sync(trigger(build_pdf([PdfPage(*A4, invoice_texts("INV-2024-0001"))])))
    with LocalService() as svc:
        b = Bench(svc, args.quick)
        print(f"service pid {svc.process.pid if svc.process else '?'}, "
              f"{os.cpu_count()} cores; warming up the engine workers", flush=True)
        warm_up(b, [invoice, sync(trigger(encode_image(raster, "PNG")))])
        eid, targets = b.fresh_extraction()
        update_base = update(eid, targets["t-invoice-date"], ["2024-03-16"])
        status_base = Call("POST", "/extraction/status/list",
                           dumps({"extraction_id_list": [eid]}))
        b.probe = status_base
        idle = b.memory.rss() / MIB
        print(f"service tree idle RSS {idle:,.0f} MiB\n", flush=True)
        print(f"{'limit':<12} {'request':<54} {'status':<26} {'seconds':>8} {'peak MiB':>9} "
              f"{'base s':>8} {'ratio':>8}")
        print("-" * 130)
        runs: list[Callable[[], None]] = [
            lambda: bench_page_pixels(b, invoice, raster),
            lambda: bench_document_pixels(b, invoice),
            lambda: bench_pages(b, invoice),
            lambda: bench_document_bytes(b, invoice),
            lambda: bench_image_pixels(b, raster),
            lambda: bench_json_depth(b, status_base),
            lambda: bench_names(b, invoice, status_base),
            lambda: bench_values(b, update_base),
            lambda: bench_url(b),
            lambda: bench_update_items(b, update_base),
            lambda: bench_status_ids(b, status_base),
        ]
        for run in runs:
            run()
        print("-" * 130)
        print(f"peak MiB: RSS of the service and its workers above their RSS just before the "
              f"request (sampled every {SAMPLE_EVERY * 1000:.0f} ms); ratio: seconds / "
              "baseline seconds")
        print(f"service tree RSS at the end {b.memory.rss() / MIB:,.0f} MiB (idle at the start "
              f"{idle:,.0f} MiB); whole run {time.perf_counter() - started:.0f} s")
        print("\none page's peak memory above idle (the service and its workers), the "
              "largest accepted page against a small one of its kind:")
        for label, large, small in b.page_peaks:
            # A worker with free heap left from an earlier request shows no growth at all.
            ratio = (f"{large.peak_mib / small.peak_mib:5.1f}x" if small.peak_mib >= 1
                     else "    -")
            print(f"  {large.peak_mib:7.1f} MiB vs {small.peak_mib:6.1f} MiB = {ratio}  "
                  f"{label}")
        print("\nwhile the request of a row ran, a 1-id status/list sent every 50 ms on "
              "another connection waited up to:")
        for label, waited in b.waits:
            print(f"  {waited:6.2f} s  {label}")
        for note in b.notes:
            print(f"note: {note}")
        for failure in b.failures:
            print(f"FAILED: {failure}")
        print("all answers as documented" if not b.failures
              else f"{len(b.failures)} answer(s) not as documented")
        return 1 if b.failures else 0


if __name__ == "__main__":
    sys.exit(main())
