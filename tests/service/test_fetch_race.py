"""D6: of two concurrent first fetches with delete_after_first_fetch, exactly one wins."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import requests

from ..support.helpers import Api, raw_trigger


def test_two_concurrent_first_fetches(api: Api, invoice_pdf: bytes) -> None:
    ids = [api.post("/extraction/trigger_async",
                    raw_trigger(invoice_pdf, delete_after_first_fetch=True)).json()
           ["extraction_id"] for _ in range(8)]
    for extraction_id in ids:
        assert api.wait(extraction_id)["status_type"] == "ended"
    with ThreadPoolExecutor(2) as pool:
        for extraction_id in ids:
            barrier = threading.Barrier(2)  # both requests leave together

            def fetch(eid: str, start: threading.Barrier = barrier) -> requests.Response:
                start.wait()
                return api.get(f"/extraction/result/get/{eid}")

            answers = list(pool.map(fetch, [extraction_id] * 2))
            assert sorted(r.status_code for r in answers) == [200, 410]
