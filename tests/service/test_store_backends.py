"""What every storage backend promises (store.Storage), checked on SQLite and PostgreSQL;
then what only the PostgreSQL one has to show: its migrations, its one indexed status
query, and a readable refusal when its database cannot be used."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from servicetools.service.core.records import new_id
from servicetools.service.core.store import Storage, StoreUnavailable
from servicetools.service.core.store_sqlite import SqliteStore

from ..support.postgres import PostgresServer
from ..support.stores import STORES


# PostgreSQL's case starts a server: an integration test (tests/conftest.py).
@pytest.fixture(params=[pytest.param(kind, marks=pytest.mark.integration)
                        if kind == "postgresql" else kind for kind in STORES])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    if request.param == "sqlite":
        opened: Storage = SqliteStore(tmp_path / "service.sqlite3")
    else:
        from servicetools.service.core.store_postgres import PgStore

        server: PostgresServer = request.getfixturevalue("postgres")
        opened = PgStore(server.new_database(), pool_size=4)
    yield opened
    opened.close()


def add_extraction(store: Storage, owner: str, *, delete_after_first_fetch: bool = False
                   ) -> str:
    extraction_id = new_id()
    store.add_extraction({"extraction_id": extraction_id, "trigger_user_id": owner,
                          "trigger_unix_timestamp": time.time(),
                          "extracted_data_saved": True},
                         delete_after_first_fetch=delete_after_first_fetch)
    return extraction_id


def finished(store: Storage, owner: str, data: dict[str, Any], **kw: bool) -> str:
    extraction_id = add_extraction(store, owner, **kw)
    now = time.time()
    assert store.finish(extraction_id, data, {"pages": 1},
                        [("extraction_ended", now), ("usage_statistics_aggregated", now),
                         ("ended", now)])
    return extraction_id


def test_keys_users_and_documents(store: Storage) -> None:
    digest = store.add_key("ann", "token-1")
    assert store.add_key("ann", "token-1") == digest  # idempotent
    user = store.user_for_token("token-1")
    assert user is not None and user.name == "ann" and user.key_hash == digest
    assert store.ensure_user("ann") == user.id
    assert [k["user"] for k in store.list_keys("ann")] == ["ann"]
    assert store.revoke_keys("ann", digest[:4]) == 1
    assert store.user_for_token("token-1") is None
    record = {"document_id": new_id(), "owner_id": user.id, "document_name": "a.pdf",
              "document_type": "in\x00voice", "content_type": "application/pdf",
              "num_pages": 2, "upload_unix_timestamp": 1.5}
    store.add_document(record, size=10, key="k" * 64)
    found = store.document_file(user.id, record["document_id"])
    assert found is not None and found[1] == "k" * 64
    assert found[0]["num_pages"] == 2 and found[0]["document_name"] == "a.pdf"
    assert store.document("someone-else", record["document_id"]) is None
    assert [d["document_id"] for d in store.documents(user.id)] == [record["document_id"]]
    # An id no row can have (PostgreSQL's text holds no NUL) is simply not found.
    assert store.document(user.id, "x\x00y") is None
    assert store.extraction(user.id, "x\x00y") is None
    assert store.latest_statuses(user.id, ["x\x00y"]) == {}


def test_no_status_after_a_final_one(store: Storage) -> None:
    extraction_id = add_extraction(store, "u1")
    assert store.add_statuses(extraction_id, [("started", "", None),
                                              ("doc_converted_to_png", "1 page", None)])
    assert store.unfinished() == [extraction_id]
    assert store.add_status(extraction_id, "error", "interrupted")
    assert not store.add_status(extraction_id, "extraction_started")
    assert not store.finish(extraction_id, {"late": True}, {}, [("ended", time.time())])
    history = [s["status_type"] for s in store.status_history(extraction_id)]
    assert history == ["not_started", "started", "doc_converted_to_png", "error"]
    assert store.unfinished() == []
    assert store.snapshot("u1", extraction_id) == ("pending", None)  # nothing stored late


def test_latest_statuses_of_many_ids_only_the_owners(store: Storage) -> None:
    mine = [add_extraction(store, "u1") for _ in range(1000)]
    theirs = add_extraction(store, "u2")
    for extraction_id in mine[::2]:
        store.add_status(extraction_id, "started")
    found = store.latest_statuses("u1", [*mine, theirs, "unknown"])
    assert set(found) == set(mine)
    assert {found[i]["status_type"] for i in mine[::2]} == {"started"}
    assert {found[i]["status_type"] for i in mine[1::2]} == {"not_started"}
    assert found[mine[0]]["trigger_user_id"] == "u1"


def test_a_delete_after_first_fetch_result_goes_to_exactly_one_of_many_fetches(
        store: Storage) -> None:
    extraction_id = finished(store, "u1", {"v": 1}, delete_after_first_fetch=True)
    results: list[tuple[str, str | None]] = []
    start = threading.Barrier(6)

    def fetch() -> None:
        start.wait()
        results.append(store.take_data("u1", extraction_id))

    threads = [threading.Thread(target=fetch) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = [data for _, data in results if data is not None]
    assert got == [json.dumps({"v": 1})]
    assert store.take_data("u1", extraction_id) == ("deleted", None)
    assert store.snapshot("u1", extraction_id) == ("deleted", None)


def test_kept_results_are_read_again_and_replaced_by_compare_and_set(store: Storage) -> None:
    extraction_id = finished(store, "u1", {"v": 1})
    assert store.take_data("u1", extraction_id) == ("present", json.dumps({"v": 1}))
    assert store.take_data("u2", extraction_id) == ("unknown", None)
    state, before = store.snapshot("u1", extraction_id) or ("", None)
    assert state == "present" and before is not None
    assert store.replace_data("u1", extraction_id, before, json.dumps({"v": 2}))
    # A second update made from the same (now stale) copy loses.
    assert not store.replace_data("u1", extraction_id, before, json.dumps({"v": 3}))
    assert not store.replace_data("u2", extraction_id, json.dumps({"v": 2}), "{}")
    assert store.take_data("u1", extraction_id) == ("present", json.dumps({"v": 2}))
    assert store.drop_unreadable() == 0


# -- PostgreSQL only ----------------------------------------------------------------------
def test_migrations_apply_once(postgres: PostgresServer) -> None:
    from servicetools.service.core.store_postgres import PgStore, upgrade_schema

    url = postgres.new_database()
    assert upgrade_schema(url) == ["0001.initial-schema", "0002.job-queue"]
    assert upgrade_schema(url) == []
    PgStore(url).close()  # a store on a database already up to date


def test_the_status_list_is_one_indexed_query(postgres: PostgresServer) -> None:
    import psycopg

    from servicetools.service.core.store_postgres import LATEST_STATUSES, PgStore

    url = postgres.new_database()
    store = PgStore(url)
    ids = [add_extraction(store, "u1") for _ in range(3000)]
    for extraction_id in ids:
        store.add_statuses(extraction_id, [("started", "", None),
                                           ("doc_converted_to_png", "", None)])
    store.close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")
        plan = conn.execute("EXPLAIN (FORMAT JSON) " + LATEST_STATUSES,
                            (ids[:1000], "u1")).fetchone()
    assert plan is not None
    scans = list(_plan_nodes(plan[0][0]["Plan"]))
    on_statuses = [kind for kind, relation in scans if relation == "statuses"]
    # Each extraction's latest status is the last entry of its index range, not a scan.
    assert on_statuses and all(kind.startswith("Index") for kind in on_statuses), scans


def _plan_nodes(node: dict[str, Any]) -> Iterator[tuple[str, str | None]]:
    yield node["Node Type"], node.get("Relation Name")
    for child in node.get("Plans", []):
        yield from _plan_nodes(child)


@pytest.mark.parametrize(("url", "says"), [
    ("postgresql:///servicetools?host=/nonexistent-socket-folder", "cannot be used"),
    ("mysql://localhost/servicetools", "is not a postgresql:// URL"),
    ("postgresql://user:secret@/db?host=/nonexistent&port=notaport", "cannot be used"),
])
def test_an_unusable_database_is_a_readable_error(url: str, says: str) -> None:
    pytest.importorskip("psycopg")
    from servicetools.service.core.store_postgres import PgStore

    with pytest.raises(StoreUnavailable) as caught:
        PgStore(url)
    message = str(caught.value)
    assert says in message and "secret" not in message and "\n" not in message
