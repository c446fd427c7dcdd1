"""The usage record of an extraction times the engine apart from the store: the status
writes between its stages are the store's seconds, not the engine's (benches compare the
engine's seconds with bare libraries)."""

from __future__ import annotations

import json
import sqlite3

from servicetools import Client
from servicetools.client.local import LocalService

from ..support.helpers import make_invoice_pdf


def test_the_usage_record_keeps_the_status_writes_apart_from_the_engine(
    sqlite_service: LocalService,
) -> None:
    with Client(base_url=sqlite_service.base_url, api_key=sqlite_service.token) as client:
        result = client.trigger_sync(make_invoice_pdf(number="INV-2024-0042"),
                                     configuration_name="invoices")
    database = sqlite_service.data_dir / "service.sqlite3"
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        row = db.execute("SELECT usage_json FROM extractions WHERE extraction_id = ?",
                         (result.extraction_id,)).fetchone()
    seconds = json.loads(row[0])["seconds"]
    assert set(seconds) == {"acquire", "render_and_read", "extract", "store"}
    assert all(value >= 0 for value in seconds.values())
    assert seconds["extract"] > 0 and seconds["store"] > 0
