"""The job queue (core/pgqueue.py) on a real PostgreSQL: claims, leases, take-overs,
the attempt cap. A lease is made to expire by moving its expiry into the past in the
database (what waiting out the lease would do, without a test that depends on time)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from servicetools.service.core.records import new_id

from ..support.pgproxy import CommitDropper
from ..support.postgres import PostgresServer

pytest.importorskip("psycopg")

from servicetools.service.core.pgqueue import Lease, PgQueue  # noqa: E402
from servicetools.service.core.pipeline import Job  # noqa: E402
from servicetools.service.core.store_postgres import PgStore  # noqa: E402

ENDED = [("extraction_ended", 1.0), ("usage_statistics_aggregated", 1.0), ("ended", 1.0)]


@pytest.fixture
def store(postgres: PostgresServer) -> Iterator[PgStore]:
    opened = PgStore(postgres.new_database(), pool_size=6)
    yield opened
    opened.close()


def queue(store: PgStore, **kw: Any) -> PgQueue:
    return PgQueue(store, owner=kw.pop("owner", "test"), **kw)


def enqueue(q: PgQueue, *, trigger_type: str = "async", data: bytes | None = None) -> str:
    extraction_id = new_id()
    info = {"extraction_id": extraction_id, "trigger_user_id": "u1",
            "trigger_unix_timestamp": time.time(), "extracted_data_saved": True,
            "trigger_type": trigger_type}
    q.enqueue(Job(extraction_id=extraction_id, owner_id="u1", info=info,
                  configuration={"name": "c", "extraction_targets": []}, classifier=None,
                  save=True, data=data),
              delete_after_first_fetch=False)
    return extraction_id


def expire(store: PgStore, lease: Lease) -> None:
    with store.transaction() as db:
        db.execute("UPDATE jobs SET lease_expires = now() - interval '1 second'"
                   " WHERE extraction_id = %s", (lease.extraction_id,))


def history(store: PgStore, extraction_id: str) -> list[str]:
    return [s["status_type"] for s in store.status_history(extraction_id)]


def test_the_extraction_and_its_job_are_stored_together(store: PgStore) -> None:
    q = queue(store)
    extraction_id = enqueue(q, data=b"%PDF-raw")
    assert history(store, extraction_id) == ["not_started"]
    lease = q.claim()
    assert lease is not None and lease.extraction_id == extraction_id and lease.attempt == 1
    assert lease.job.data == b"%PDF-raw" and lease.job.info["trigger_type"] == "async"
    assert q.claim() is None  # held, not expired
    assert q.counts() == {"running": 1}


def test_two_claimers_never_get_the_same_job(store: PgStore) -> None:
    ids = {enqueue(queue(store)) for _ in range(40)}
    claimed: list[list[str]] = [[] for _ in range(4)]
    start = threading.Barrier(4)

    def claim_all(mine: list[str]) -> None:
        q = queue(store)
        start.wait()
        while (lease := q.claim()) is not None:
            mine.append(lease.extraction_id)

    threads = [threading.Thread(target=claim_all, args=(c,)) for c in claimed]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for c in claimed for i in c]
    assert sorted(every) == sorted(ids)  # each job once, none left


def test_an_expired_lease_is_taken_over_and_the_stale_worker_is_refused(
        store: PgStore) -> None:
    first, second = queue(store, owner="first"), queue(store, owner="second")
    extraction_id = enqueue(first)
    stale = first.claim()
    assert stale is not None and first.stages(stale, [("started", "", None)])
    expire(store, stale)
    fresh = second.claim()
    assert fresh is not None and fresh.extraction_id == extraction_id and fresh.attempt == 2
    # The first worker wakes up: its heartbeat, stages and result are all refused.
    assert not first.extend(stale) and stale.lost.is_set()
    assert not first.stages(stale, [("extraction_started", "", None)])
    assert not first.finish(stale, {"by": "first"}, {}, ENDED, {"by": "first"})
    assert second.extend(fresh)
    assert second.finish(fresh, {"by": "second"}, {}, ENDED, {"by": "second"})
    assert history(store, extraction_id) == ["not_started", "started", "extraction_ended",
                                             "usage_statistics_aggregated", "ended"]
    assert store.take_data("u1", extraction_id) == ("present", '{"by": "second"}')
    assert q_empty(store)
    # Once ended, not even the holder of the last lease writes again.
    assert not second.stages(fresh, [("error", "late", None)])


def q_empty(store: PgStore) -> bool:
    return queue(store).counts() == {}


def test_the_attempt_cap_ends_the_extraction_in_error_with_the_reason(
        store: PgStore) -> None:
    q = queue(store, owner="host:123", max_attempts=2)
    extraction_id = enqueue(q)
    for attempt in (1, 2):
        lease = q.claim()
        assert lease is not None and lease.attempt == attempt
        expire(store, lease)
    assert q.claim() is None  # no attempt left
    assert q.reap() == [extraction_id]
    status = store.status_history(extraction_id)[-1]
    assert status["status_type"] == "error"
    assert "2 worker(s)" in status["message"] and "host:123" in status["message"]
    assert q_empty(store) and q.reap() == []


def test_a_synchronous_job_leaves_its_reply_for_the_waiting_api(store: PgStore) -> None:
    q = queue(store)
    ok, failed = enqueue(q, trigger_type="sync"), enqueue(q, trigger_type="sync")
    leases = {lease.extraction_id: lease for lease in (q.claim(), q.claim()) if lease}
    assert q.take_replies([ok, failed]) == {}  # still running
    # save_extraction=false: nothing stored, and the reply still carries the data.
    assert q.finish(leases[ok], None, {}, ENDED, {"v": 1})
    assert q.stages(leases[failed], [("error", "the document cannot be read", None)])
    assert q.take_replies([ok, failed]) == {ok: ('{"v": 1}', ""),
                                            failed: (None, "the document cannot be read")}
    assert q.take_replies([ok, failed]) == {} and q_empty(store)
    assert store.snapshot("u1", ok) == ("none", None)


# -- a write whose commit was done but whose answer was lost --------------------------------
@pytest.fixture
def dropper(postgres: PostgresServer) -> Iterator[CommitDropper]:
    proxy = CommitDropper(postgres.socket_path)
    yield proxy
    proxy.close()


def test_a_write_whose_commit_answer_is_lost_is_tried_again_and_stored_once(
        postgres: PostgresServer, dropper: CommitDropper) -> None:
    # The retry finds the statuses of the try before and writes nothing twice: a second
    # insert of the same status ids would fail, and a second finish would find its job
    # gone and call the run taken over.
    store = PgStore(dropper.url(postgres.new_database()), pool_size=2)
    try:
        q = queue(store)
        extraction_id = enqueue(q)
        lease = q.claim()
        assert lease is not None
        dropper.drop_next_commit()
        assert q.stages(lease, [("started", "", None)]) is True
        dropper.drop_next_commit()
        assert q.finish(lease, {"data": 1}, {"pages": 1}, ENDED, {"data": 1}) is True
        assert dropper.dropped == 2
        assert history(store, extraction_id) == [
            "not_started", "started", *(status for status, _ in ENDED)]
        assert not lease.lost.is_set() and q.counts() == {}
        assert store.take_data("u1", extraction_id) == ("present", '{"data": 1}')
    finally:
        store.close()
