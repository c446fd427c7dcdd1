"""The write lock is held for writes alone, and no extraction stays unfinished for good.

An update's values are checked outside any transaction and stored by compare-and-set,
so another writer holding the lock does not stop an update from being checked (and a
large update does not stop everyone else for as long as it is checked). The data is
in a file of its own, so storing a large update does not hold up other writers of
the main file either. An extraction that nobody works on any more is ended in
``error`` by the pipeline's watchdog.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests

from servicetools import LocalService
from servicetools.service.core.pipeline_pool import LOST, PoolPipeline
from servicetools.service.core.store_sqlite import SqliteStore, results_file
from servicetools.service.settings import Settings

from ..support.helpers import Api, raw_trigger

UPDATE = "/extraction/result/update"


@contextmanager
def write_lock(database: Path) -> Iterator[None]:
    """Hold the service database's write lock from another connection."""
    conn = sqlite3.connect(database, isolation_level=None, timeout=60)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def _field(data: dict[str, Any], target_id: str) -> dict[str, Any]:
    return next(t for t in data["extracted_targets"] if t["used_extraction_target_id"] == target_id)


def test_an_update_is_checked_while_another_writer_holds_the_lock(
    service: LocalService, api: Api, invoice_pdf: bytes,
) -> None:
    data = api.post("/extraction/trigger_sync", raw_trigger(invoice_pdf)).json()
    extraction_id = data["extraction_info"]["extraction_id"]
    number = _field(data, "t-invoice-number")["id"]
    good = {"extraction_id": extraction_id, "updates": [
        {"extracted_target_id": number, "type": "field",
         "new_extracted_values": [{"extracted_field": "INV-77"}]}]}
    bad = {"extraction_id": extraction_id, "updates": [
        {"extracted_target_id": "no-such-target", "type": "field", "new_extracted_values": []}]}
    answers: dict[str, requests.Response] = {}
    database = Settings(data_dir=service.data_dir).database_path
    with write_lock(results_file(database)):
        # Checked without the lock: refused at once. Before, the update took the lock
        # first and waited for it (30 s and more) before it looked at its values.
        answers["bad"] = api.post(UPDATE, bad)
        writer = threading.Thread(target=lambda: answers.update(good=api.post(UPDATE, good)))
        writer.start()
        writer.join(2.0)
        # A good update is checked, then waits for the lock to store its values.
        assert "good" not in answers
    writer.join(60)
    assert answers["bad"].status_code == 400
    assert answers["good"].status_code == 200, answers["good"].text
    stored = api.get(f"/extraction/result/get/{extraction_id}").json()
    assert _field(stored, "t-invoice-number")["extracted_values"][0]["extracted_field"] == "INV-77"
    # The data has a file of its own: a writer of the main file (a status, a trigger)
    # does not hold an update up, nor an update them.
    good["updates"][0]["new_extracted_values"] = [{"extracted_field": "INV-78"}]
    with write_lock(database):
        assert api.post(UPDATE, good).status_code == 200


def test_replace_data_stores_only_over_what_was_read(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "db.sqlite3")
    info = {"extraction_id": "e1", "trigger_user_id": "u1", "extracted_data_saved": True,
            "trigger_unix_timestamp": time.time()}
    store.add_extraction(info, delete_after_first_fetch=False)
    assert store.snapshot("u1", "e1") == ("pending", None)
    assert not store.replace_data("u1", "e1", "null", "{}")  # nothing stored yet
    store.finish("e1", {"v": 1}, {}, [("ended", time.time())])
    state, before = store.snapshot("u1", "e1") or ("", None)
    assert (state, before) == ("present", json.dumps({"v": 1}))
    assert before is not None
    assert store.snapshot("other-user", "e1") is None
    assert not store.replace_data("other-user", "e1", before, "{}")
    # Another update got in between: this one must not overwrite it.
    assert store.replace_data("u1", "e1", before, json.dumps({"v": 2}))
    assert not store.replace_data("u1", "e1", before, json.dumps({"v": 3}))
    assert store.snapshot("u1", "e1") == ("present", json.dumps({"v": 2}))


def test_the_watchdog_ends_an_extraction_nobody_works_on(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, workers=1, watchdog_quiet=60.0)
    store = SqliteStore(settings.database_path)
    long_ago, now = time.time() - 3600, time.time()
    for extraction_id, accepted in (("lost", long_ago), ("fresh", now)):
        store.add_extraction({"extraction_id": extraction_id, "trigger_user_id": "u1",
                              "extracted_data_saved": True,
                              "trigger_unix_timestamp": accepted},
                             delete_after_first_fetch=False)
    pipeline = PoolPipeline(settings, store)
    try:
        assert pipeline.close_lost() == ["lost"]
        statuses = store.latest_statuses("u1", ["lost", "fresh"])
        assert statuses["lost"]["status_type"] == "error"
        assert statuses["lost"]["message"] == LOST
        assert statuses["fresh"]["status_type"] == "not_started"  # quiet for too short
        assert pipeline.close_lost() == []  # a final status is final
    finally:
        pipeline.shutdown()


@pytest.mark.integration
def test_a_large_update_is_checked_in_a_helper_process_beside_the_service(
    tmp_path: Path, invoice_pdf: bytes,
) -> None:
    # Checking the largest updates is seconds of pure Python: in the service process it
    # held up every other request (bench/reliability.py measures how much).
    import psutil

    with LocalService(data_dir=tmp_path) as svc:
        assert svc.process is not None
        service = psutil.Process(svc.process.pid)
        api = Api(svc.base_url, svc.token)
        data = api.post("/extraction/trigger_sync", raw_trigger(invoice_pdf)).json()
        extraction_id = data["extraction_info"]["extraction_id"]
        number = _field(data, "t-invoice-number")["id"]

        def update(values: list[str]) -> requests.Response:
            return api.post(UPDATE, {"extraction_id": extraction_id, "updates": [
                {"extracted_target_id": number, "type": "field",
                 "new_extracted_values": [{"extracted_field": v} for v in values]}]})

        before = {p.pid for p in service.children()}
        small = update(["INV-77"])
        assert small.status_code == 200, small.text
        # A small update is checked in the service: no process is started for it.
        assert {p.pid for p in service.children()} == before
        values = [f"{i:03d}" + "x" * 60_000 for i in range(20)]  # 1.2 MB of JSON
        large = update(values)
        assert large.status_code == 200, large.text[:300]
        helpers = [p for p in service.children() if p.pid not in before]
        assert len(helpers) == 1
        assert [v["extracted_field"] for v in _field(large.json(), "t-invoice-number")[
            "extracted_values"]] == values
        stored = api.get(f"/extraction/result/list/{extraction_id}").json()
        assert len(_field(stored, "t-invoice-number")["extracted_values"]) == 20
        # The body and the answer went by files, removed once sent.
        assert list(Settings(data_dir=tmp_path).spool_dir.iterdir()) == []
        # Refusals made there come back as they are.
        unknown = api.post(UPDATE, {"extraction_id": "no-such-extraction", "updates": [
            {"extracted_target_id": number, "type": "field",
             "new_extracted_values": [{"extracted_field": v} for v in values]}]})
        assert unknown.status_code == 404
        assert unknown.json()["error"]["details"] == {"id": "no-such-extraction"}
