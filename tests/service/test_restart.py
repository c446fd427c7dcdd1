"""D5: a service killed hard during async runs leaves none of them running after restart."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from servicetools import LocalService

from ..support.helpers import Api, make_invoice_pdf, raw_trigger

#: Starts processes of its own (tests/conftest.py: integration).
pytestmark = pytest.mark.integration


def test_sigkill_during_async_extractions(tmp_path: Path) -> None:
    svc = LocalService(tmp_path / "data")
    svc.start()
    try:
        api = Api(svc.base_url, svc.token)
        saved = api.post("/extraction/trigger_sync", raw_trigger(make_invoice_pdf())).json()
        saved_id = saved["extraction_info"]["extraction_id"]
        document = api.upload(make_invoice_pdf(pages=12), "long.pdf").json()["document_id"]
        body = {"configuration_name": "invoices", "input_type": "service",
                "document_storage_id": document}
        ids = [api.post("/extraction/trigger_async", body).json()["extraction_id"]
               for _ in range(20)]
        # Let some finish and some be mid-pipeline, then stop the service as a crash would.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            statuses = api.post("/extraction/status/list",
                                {"extraction_id_list": ids}).json()["status_map"]
            if any(s["status_type"] == "ended" for s in statuses.values()):
                break
            time.sleep(0.05)
        svc.kill()
        svc.start()
        statuses = api.post("/extraction/status/list",
                            {"extraction_id_list": ids}).json()["status_map"]
        kinds = {s["status_type"] for s in statuses.values()}
        assert kinds <= {"ended", "error"}, kinds
        assert "error" in kinds, "the kill should have interrupted some extractions"
        for status in statuses.values():
            if status["status_type"] == "error":
                assert "interrupted" in status["message"]
        # Saved results and documents survive intact.
        assert api.get(f"/extraction/result/get/{saved_id}").json() == saved
        assert api.get(f"/vault/info/{document}").status_code == 200
        # And the restarted service works.
        again = api.post("/extraction/trigger_sync", raw_trigger(make_invoice_pdf()))
        assert again.status_code == 200
        # Stragglers from the killed service never revive a closed extraction.
        time.sleep(1.0)
        later = api.post("/extraction/status/list",
                         {"extraction_id_list": ids}).json()["status_map"]
        assert later == statuses
    finally:
        svc.stop()
