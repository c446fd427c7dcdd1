"""Faults of the scaled-out service, with real processes on a real PostgreSQL: a worker
killed mid-extraction, an API process killed among two. The engine is the stand-in
(``SERVICETOOLS_STANDIN_ENGINE_SECONDS``, a test aid), so "mid-extraction" is certain;
nothing here depends on how fast the machine is, only on generous timeouts."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from servicetools import LocalService
from servicetools.client.local import LocalWorkers

from ..helpers import Api, make_invoice_pdf, raw_trigger
from ..postgres import PostgresServer, PostgresUnavailable

pytest.importorskip("psycopg")

STANDIN = "SERVICETOOLS_STANDIN_ENGINE_SECONDS"
#: Generous: a slow shared machine, not the thing under test.
TIMEOUT = 90.0


def wait_for(what: str, check: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def statuses(api: Api, ids: list[str]) -> dict[str, dict[str, Any]]:
    answer = api.post("/extraction/status/list", {"extraction_id_list": ids})
    assert answer.status_code == 200, answer.text
    found: dict[str, dict[str, Any]] = answer.json()["status_map"]
    return found


def history(database: str, extraction_id: str) -> list[str]:
    import psycopg

    with psycopg.connect(database) as conn:
        rows = conn.execute("SELECT status_type FROM statuses WHERE extraction_id = %s"
                            " ORDER BY seq", (extraction_id,)).fetchall()
    return [r[0] for r in rows]


def queue_rows(database: str) -> int:
    import psycopg

    with psycopg.connect(database) as conn:
        row = conn.execute("SELECT count(*) FROM jobs").fetchone()
    return int(row[0]) if row else -1


class Cluster:
    """One database, one pure API process (the survivor of the second test), and the
    workers that keep running once started: shared by the module's tests, since every
    process start costs seconds of imports."""

    def __init__(self, postgres: PostgresServer, folder: Path) -> None:
        self.database = postgres.new_database("faults")
        self.folder = folder
        self.token = secrets.token_urlsafe(24)
        self.api_process = LocalService(folder / "api", database=self.database,
                                        no_workers=True, token=self.token).start()
        self.api = Api(self.api_process.base_url, self.token)
        self.workers: LocalWorkers | None = None

    def steady_workers(self) -> LocalWorkers:
        if self.workers is None:
            self.workers = LocalWorkers(self.database, self.api_process.data_dir,
                                        args=LEASE, env={STANDIN: "0.1"}).start()
        return self.workers

    def stop(self) -> None:
        if self.workers is not None:
            self.workers.stop()
        self.api_process.stop()


#: A short lease, so that a killed worker's job is taken over soon.
LEASE = ["--lease-seconds", "1"]


@pytest.fixture(scope="module")
def cluster(postgres: PostgresServer, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Cluster]:
    running = Cluster(postgres, tmp_path_factory.mktemp("cluster"))
    yield running
    running.stop()


def test_a_worker_killed_mid_extraction_is_taken_over_and_ends_once(cluster: Cluster) -> None:
    api, database = cluster.api, cluster.database
    # The first worker's engine would take ten minutes: it is killed long before.
    doomed = LocalWorkers(database, cluster.api_process.data_dir, args=LEASE,
                          env={STANDIN: "600"}).start()
    try:
        extraction_id = api.post("/extraction/trigger_async",
                                 raw_trigger(make_invoice_pdf())).json()["extraction_id"]
        wait_for("the first worker to be extracting", lambda: statuses(
            api, [extraction_id])[extraction_id]["status_type"] == "extraction_started")
    finally:
        doomed.kill()
    cluster.steady_workers()
    wait_for("the job to end", lambda: statuses(
        api, [extraction_id])[extraction_id]["status_type"] in ("ended", "error"))
    steps = history(database, extraction_id)
    assert steps.count("ended") == 1 and "error" not in steps, steps
    assert steps.count("started") == 2  # two attempts, one end
    result = api.get(f"/extraction/result/get/{extraction_id}")
    assert result.status_code == 200
    assert result.json()["extraction_info"]["extraction_id"] == extraction_id
    assert queue_rows(database) == 0


def test_an_api_process_killed_loses_nothing_and_the_other_answers_the_same(
        cluster: Cluster) -> None:
    cluster.steady_workers()
    two = cluster.api
    with LocalService(cluster.folder / "api", database=cluster.database, no_workers=True,
                      token=cluster.token) as victim:
        one = Api(victim.base_url, cluster.token)
        ids = [one.post("/extraction/trigger_async", raw_trigger(make_invoice_pdf())
                        ).json()["extraction_id"] for _ in range(6)]
        assert set(statuses(two, ids)) == set(ids)  # known to both at once
        victim.kill()
    # Every extraction accepted by the dead process ends, seen on the other one; one
    # more synchronous trigger there still works.
    done = wait_for("every extraction to end", lambda: (found := statuses(two, ids)) and all(
        s["status_type"] == "ended" for s in found.values()) and found)
    assert set(done) == set(ids)
    assert all(history(cluster.database, i).count("ended") == 1 for i in ids)
    again = two.post("/extraction/trigger_sync", raw_trigger(make_invoice_pdf()))
    assert again.status_code == 200, again.text
    assert queue_rows(cluster.database) == 0


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A server of this test's own: restarting the session's would cut every other
    test's connections. Durable, as a production server is: its commits are written
    before they are acknowledged."""
    try:
        server = PostgresServer(durable=True).start()
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))
    yield server
    server.stop()


def _trigger(api: Api, seen: list[int]) -> str:
    """An async trigger, retried while the database is coming back (each answer's status
    kept): what counts is that an acknowledged trigger is never lost."""
    def attempt() -> str | None:
        answer = api.post("/extraction/trigger_async", raw_trigger(make_invoice_pdf()))
        seen.append(answer.status_code)
        return str(answer.json()["extraction_id"]) if answer.status_code == 200 else None
    found: str = wait_for("a trigger to be accepted", attempt)
    return found


def test_postgresql_restarted_under_load_loses_no_acknowledged_result(
        own_postgres: PostgresServer, tmp_path: Path) -> None:
    database = own_postgres.new_database("restart")
    token = secrets.token_urlsafe(24)
    # One serve with its own workers; each extraction takes 0.3 s of stand-in engine, so
    # some are running, some queued and some ended when the server goes down.
    with LocalService(tmp_path / "svc", database=database, token=token,
                      env={STANDIN: "0.3"}) as service:
        api = Api(service.base_url, token)
        seen: list[int] = []
        before = [_trigger(api, seen) for _ in range(8)]
        first = wait_for("a first result", lambda: [
            i for i, s in statuses(api, before).items() if s["status_type"] == "ended"])
        kept = {i: api.get(f"/extraction/result/get/{i}").json() for i in first}
        own_postgres.restart()
        after = [_trigger(api, seen) for _ in range(4)]
        ids = before + after
        done = wait_for("every extraction to end", lambda: (
            found := statuses(api, ids)) and all(
                s["status_type"] in ("ended", "error") for s in found.values()) and found)
    assert all(s["status_type"] == "ended" for s in done.values()), done
    assert all(history(database, i).count("ended") == 1 for i in ids)
    with LocalService(tmp_path / "svc", database=database, token=token,
                      no_workers=True) as again:
        api = Api(again.base_url, token)
        for extraction_id, result in kept.items():  # acknowledged before: unchanged
            assert api.get(f"/extraction/result/get/{extraction_id}").json() == result
    assert not [code for code in seen if code >= 500 and code != 503], seen
    assert queue_rows(database) == 0
