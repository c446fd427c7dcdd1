"""Helpers for the tests: a bare HTTP caller and documents made on the fly."""

from __future__ import annotations

import base64
import io
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[2]
API = "/service/api"


@dataclass
class Api:
    """A bare HTTP caller for one user: the service tests speak the wire, not the client."""

    base_url: str
    token: str | None

    def _headers(self) -> dict[str, str]:
        return {"X-Api": self.token} if self.token is not None else {}

    def post(self, path: str, body: Any = None, **kwargs: Any) -> requests.Response:
        return requests.post(self.base_url + API + path, json=body, headers=self._headers(),
                             timeout=120, **kwargs)

    def post_raw(self, path: str, data: bytes, content_type: str = "application/json",
                 **kwargs: Any) -> requests.Response:
        return requests.post(self.base_url + API + path, data=data, timeout=120,
                             headers={**self._headers(), "Content-Type": content_type},
                             **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return requests.get(self.base_url + API + path, headers=self._headers(), timeout=60,
                            **kwargs)

    def upload(self, data: bytes, name: str = "doc.pdf", doctype: str = "invoice"
               ) -> requests.Response:
        return requests.post(self.base_url + API + "/vault/upload", headers=self._headers(),
                             files={"uploadFile": (name, data)}, data={"doctype": doctype},
                             timeout=60)

    def wait(self, extraction_id: str, timeout: float = 120) -> dict[str, Any]:
        """Poll the status list until the extraction is final; its final status."""
        import time

        deadline = time.monotonic() + timeout
        while True:
            resp = self.post("/extraction/status/list", {"extraction_id_list": [extraction_id]})
            resp.raise_for_status()
            status: dict[str, Any] = resp.json()["status_map"][extraction_id]
            if status["status_type"] in ("ended", "error") or time.monotonic() > deadline:
                return status
            time.sleep(0.1)


def create_key(data_dir: Path, user: str, database: str | None = None) -> str:
    """Issue a token the way an admin does: ``servicetools keys create`` (on the
    PostgreSQL ``database`` when given, as the service was started with it)."""
    out = subprocess.run([sys.executable, "-m", "servicetools", "keys", "create", "--user", user,
                          "--data-dir", str(data_dir),
                          *(["--database", database] if database else [])],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


# -- documents ------------------------------------------------------------------------------
def make_invoice_pdf(number: str = "INV-2024-0042", pages: int = 1, encrypt: bool = False
                     ) -> bytes:
    """A small text-layer invoice drawn with reportlab (labels the invoices config knows)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    kwargs: dict[str, Any] = {}
    if encrypt:
        from reportlab.lib.pdfencrypt import StandardEncryption

        kwargs["encrypt"] = StandardEncryption("secret", "owner")
    c = canvas.Canvas(buf, pagesize=A4, **kwargs)
    _, height = A4
    for page in range(pages):
        y = height - 60
        if page == 0:
            c.setFont("Helvetica-Bold", 18)
            c.drawString(50, y, "INVOICE")
            c.setFont("Helvetica", 11)
            lines = [("Invoice No:", number), ("Invoice Date:", "2024-03-15"),
                     ("Due Date:", "2024-04-14"), ("From:", "Acme Supplies Ltd"),
                     ("Bill To:", "Globex Corporation")]
            for label, value in lines:
                y -= 22
                c.drawString(50, y, label)
                c.drawString(170, y, value)
            y -= 40
            c.setFont("Helvetica-Bold", 11)
            for x, head in [(50, "Description"), (300, "Qty"), (370, "Unit Price"),
                            (480, "Amount")]:
                c.drawString(x, y, head)
            c.setFont("Helvetica", 11)
            for desc, qty, price, amount in [("Widget A", "2", "50.00", "100.00"),
                                             ("Gadget B", "1", "150.00", "150.00")]:
                y -= 20
                for x, text in [(50, desc), (300, qty), (370, price), (480, amount)]:
                    c.drawString(x, y, text)
            y -= 40
            for label, value in [("Subtotal:", "250.00"), ("Tax:", "50.00"),
                                 ("Total:", "300.00")]:
                c.drawString(370, y, label)
                c.drawString(480, y, value)
                y -= 20
        else:
            c.setFont("Helvetica", 11)
            c.drawString(50, y, f"Terms and conditions, page {page + 1}")
        c.showPage()
    c.save()
    return buf.getvalue()


def render_png(pdf: bytes, scale: float = 2.0) -> bytes:
    """The PDF's first page as a PNG (scale 2: 144 dpi)."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        image = document[0].render(scale=scale).to_pil()
    finally:
        document.close()
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def to_jpeg(png: bytes) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def raw_trigger(data: bytes, **extra: Any) -> dict[str, Any]:
    body = {"configuration_name": "invoices", "input_type": "raw",
            "document_raw_data": b64(data)}
    body.update(extra)
    return body
