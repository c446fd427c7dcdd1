"""The store's write lock: taken promptly after another process lets it go, never lost."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from servicetools.service.core.store import Store, new_id


def _store_with_extraction(tmp_path: Path) -> tuple[Store, str, str]:
    store = Store(tmp_path / "service.sqlite3")
    user = store.ensure_user("analyst")
    extraction_id = new_id()
    store.add_extraction({"extraction_id": extraction_id, "trigger_user_id": user,
                          "trigger_unix_timestamp": time.time(),
                          "extracted_data_saved": True}, delete_after_first_fetch=False)
    return store, user, extraction_id


def test_a_write_waits_for_a_held_lock_then_succeeds(tmp_path: Path) -> None:
    store, user, extraction_id = _store_with_extraction(tmp_path)
    # Another connection (as another process would) holds the write lock for a while.
    other = sqlite3.connect(tmp_path / "service.sqlite3", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    held = threading.Event()
    outcome: dict[str, object] = {}

    def write() -> None:
        held.set()
        outcome["stored"] = store.add_statuses(
            extraction_id, [("started", "", None), ("doc_converted_to_png", "1 page", None)])

    writer = threading.Thread(target=write)
    writer.start()
    held.wait()
    time.sleep(0.2)  # the writer retries meanwhile (with busy_timeout 0 under the hood)
    assert writer.is_alive(), "the write must wait for the lock, not fail"
    other.execute("COMMIT")
    writer.join(10)
    assert outcome == {"stored": True}
    history = [s["status_type"] for s in store.status_history(extraction_id)]
    assert history == ["not_started", "started", "doc_converted_to_png"]
    # After the fine-grained retries, SQLite's own busy timeout is back for every query.
    assert store._conn().execute("PRAGMA busy_timeout").fetchone()[0] == 30_000
    other.close()


def test_a_write_error_that_is_not_a_lock_is_raised_at_once(tmp_path: Path) -> None:
    store, user, extraction_id = _store_with_extraction(tmp_path)
    conn = store._conn()
    conn.execute("BEGIN")  # a transaction already open: BEGIN IMMEDIATE is an error
    started = time.monotonic()
    try:
        store.add_status(extraction_id, "started")
    except sqlite3.OperationalError as exc:
        assert "within a transaction" in str(exc)
    else:
        raise AssertionError("a nested BEGIN must fail")
    assert time.monotonic() - started < 5, "not retried as if it were a lock"
    conn.execute("ROLLBACK")
    assert store.add_status(extraction_id, "started")


def test_final_statuses_stay_final_in_a_group(tmp_path: Path) -> None:
    store, user, extraction_id = _store_with_extraction(tmp_path)
    assert store.add_statuses(extraction_id, [("started", "", None), ("error", "boom", None)])
    assert not store.add_statuses(extraction_id, [("doc_converted_to_png", "", None)])
    assert [s["status_type"] for s in store.status_history(extraction_id)] == [
        "not_started", "started", "error"]


def test_a_kept_result_is_read_again_and_a_deleted_one_once(tmp_path: Path) -> None:
    store, user, kept = _store_with_extraction(tmp_path)
    assert store.finish(kept, {"a": 1}, {}, [("ended", time.time())])
    assert store.take_data(user, kept) == ("present", '{"a": 1}')
    assert store.take_data(user, kept) == ("present", '{"a": 1}')
    once = new_id()
    store.add_extraction({"extraction_id": once, "trigger_user_id": user,
                          "trigger_unix_timestamp": time.time(),
                          "extracted_data_saved": True}, delete_after_first_fetch=True)
    assert store.finish(once, {"b": 2}, {}, [("ended", time.time())])
    assert store.take_data(user, once) == ("present", '{"b": 2}')
    assert store.take_data(user, once) == ("deleted", None)
    assert store.take_data("someone-else", kept) == ("unknown", None)
