"""A PDF's cost is bounded by its pages' drawn size, not its bytes (D12 limits).

A few hundred bytes can declare a 7,200 x 7,200 pt page: drawn at 150 dpi it is 225
megapixels, seconds of work and gigabytes of memory. The service refuses it, as it
refuses an image over the pixel limit, before any drawing; a page that stays under the
limit, or many small ones, is read as before.
"""

from __future__ import annotations

import io

import requests

from ..support.helpers import Api, raw_trigger

SYNC = "/extraction/trigger_sync"


def pdf_of_pages(*sizes: tuple[float, float]) -> bytes:
    """A PDF with one short line of text on each page of the given sizes (points)."""
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer)
    for width, height in sizes:
        page.setPageSize((width, height))
        page.drawString(20, 20, "Invoice No: INV-1")
        page.showPage()
    page.save()
    return buffer.getvalue()


def check_too_large(resp: requests.Response) -> dict[str, object]:
    assert resp.status_code == 413, resp.text
    error = resp.json()["error"]
    assert error["code"] == "document_too_large"
    return dict(error)


def test_a_huge_page_is_refused_before_it_is_drawn(api: Api) -> None:
    data = pdf_of_pages((595, 842), (7200, 7200))
    assert len(data) < 4000  # the bytes say nothing of the cost
    error = check_too_large(api.post(SYNC, raw_trigger(data)))
    assert error["details"] == {"page": 2, "width_pt": 7200.0, "height_pt": 7200.0,
                                "megapixels": 225.0, "limit": 50.0}
    assert "Page 2" in str(error["message"]) and "150 dpi" in str(error["message"])


def test_a_huge_page_is_refused_by_the_vault_too(api: Api) -> None:
    check_too_large(api.upload(pdf_of_pages((7200, 7200))))


def test_the_pages_together_have_a_limit(api: Api) -> None:
    # Each A0 page (2384 x 3370 pt) is 34.9 MP at 150 dpi, under the page limit; eight
    # of them are 279 MP, over the document's.
    error = check_too_large(api.post(SYNC, raw_trigger(pdf_of_pages(*[(2384, 3370)] * 8))))
    assert error["details"] == {"megapixels": 279.0, "limit": 250.0}


def test_pages_under_the_limits_are_read(api: Api) -> None:
    # An A1 page (1684 x 2384 pt) is 17.4 MP: large, but within the limits.
    data = pdf_of_pages((595, 842), (1684, 2384))
    assert api.post(SYNC, raw_trigger(data)).status_code == 200
    stored = api.upload(data)
    assert stored.status_code == 200, stored.text
    assert stored.json()["num_pages"] == 2
