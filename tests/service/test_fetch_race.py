"""D6: of two concurrent first fetches with delete_after_first_fetch, exactly one wins."""

from __future__ import annotations

import threading

import requests

from ..helpers import Api, raw_trigger


def test_two_concurrent_first_fetches(api: Api, invoice_pdf: bytes) -> None:
    ids = [api.post("/extraction/trigger_async",
                    raw_trigger(invoice_pdf, delete_after_first_fetch=True)).json()
           ["extraction_id"] for _ in range(8)]
    for extraction_id in ids:
        assert api.wait(extraction_id)["status_type"] == "ended"
    for extraction_id in ids:
        barrier = threading.Barrier(2)
        results: list[requests.Response] = []

        def fetch(path: str, eid: str = extraction_id, b: threading.Barrier = barrier) -> None:
            b.wait()
            results.append(api.get(f"/extraction/result/{path}/{eid}"))

        threads = [threading.Thread(target=fetch, args=(p,)) for p in ("get", "get")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(r.status_code for r in results) == [200, 410]
