"""The store: its write lock taken promptly after another process lets it go, never lost;
the extracted data in a file of its own, moved there from older stores, never half kept."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from servicetools.service.core.records import new_id
from servicetools.service.core.store_sqlite import SqliteStore


def _store_with_extraction(tmp_path: Path) -> tuple[SqliteStore, str, str]:
    store = SqliteStore(tmp_path / "service.sqlite3")
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
    # Deleted from the results file too, not only marked deleted.
    assert [row[0] for row in store._results().execute("SELECT extraction_id FROM results")
            ] == [kept]


def test_data_is_kept_in_a_file_of_its_own_and_moved_there_from_an_older_store(
    tmp_path: Path,
) -> None:
    store, user, extraction_id = _store_with_extraction(tmp_path)
    assert store.finish(extraction_id, {"a": 1}, {}, [("ended", time.time())])
    assert store.results_path == tmp_path / "service-results.sqlite3"
    # As earlier versions stored it: the data in the extraction's row of the main file.
    store._results().execute("DELETE FROM results")
    store._conn().execute("UPDATE extractions SET data_json = '{\"old\": true}'")
    store.close()
    reopened = SqliteStore(tmp_path / "service.sqlite3")
    assert reopened.take_data(user, extraction_id) == ("present", '{"old": true}')
    assert reopened._conn().execute(
        "SELECT count(*) FROM extractions WHERE data_json IS NOT NULL").fetchone()[0] == 0


def test_data_nobody_can_read_is_dropped_and_a_refused_finish_stores_none(
    tmp_path: Path,
) -> None:
    store, user, extraction_id = _store_with_extraction(tmp_path)
    # A crash between the two files' writes: data stored, the extraction never marked.
    store._results().execute("INSERT INTO results VALUES (?, '{}')", (extraction_id,))
    assert store.snapshot(user, extraction_id) == ("pending", None)
    assert store.drop_unreadable() == 1
    # Closed meanwhile (by recovery, say): the late result is not kept.
    assert store.add_status(extraction_id, "error", "interrupted")
    assert not store.finish(extraction_id, {"a": 1}, {}, [("ended", time.time())])
    assert store._results().execute("SELECT count(*) FROM results").fetchone()[0] == 0
    assert store.drop_unreadable() == 0

