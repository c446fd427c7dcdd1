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

from ..support.helpers import Api, make_invoice_pdf, raw_trigger
from ..support.postgres import PostgresServer, PostgresUnavailable

#: Starts processes of its own (tests/conftest.py: integration).
pytestmark = pytest.mark.integration

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
        log = service.log_path.read_text(errors="replace")
    assert all(s["status_type"] == "ended" for s in done.values()), done
    # The workers waited for the database; none died of its absence and was replaced.
    assert "starting another" not in log, log[-3000:]
    assert all(history(database, i).count("ended") == 1 for i in ids)
    with LocalService(tmp_path / "svc", database=database, token=token,
                      no_workers=True) as again:
        api = Api(again.base_url, token)
        for extraction_id, result in kept.items():  # acknowledged before: unchanged
            assert api.get(f"/extraction/result/get/{extraction_id}").json() == result
    assert not [code for code in seen if code >= 500 and code != 503], seen
    assert queue_rows(database) == 0


# -- a database crash while a worker's write is in flight (issue 27) ------------------------
# Each test holds a row lock from a connection of its own, so that one write of the worker
# is certainly waiting when the server crashes (``pg_ctl stop -m immediate``) and starts
# again: the crash lands inside that write, not before or after it.
class Crashable:
    """A durable server of the module's own, its database and a pure API process."""

    def __init__(self, server: PostgresServer, folder: Path) -> None:
        self.server = server
        self.database = server.new_database("crash")
        self.token = secrets.token_urlsafe(24)
        self.api_process = LocalService(folder / "api", database=self.database,
                                        no_workers=True, token=self.token).start()
        self.api = Api(self.api_process.base_url, self.token)

    def workers(self, lease: float, engine_seconds: float) -> LocalWorkers:
        return LocalWorkers(self.database, self.api_process.data_dir,
                            args=["--lease-seconds", str(lease)],
                            env={STANDIN: str(engine_seconds)})

    def trigger(self) -> str:
        answer = self.api.post("/extraction/trigger_async", raw_trigger(make_invoice_pdf()))
        assert answer.status_code == 200, answer.text
        return str(answer.json()["extraction_id"])

    def status(self, extraction_id: str) -> str:
        return str(statuses(self.api, [extraction_id])[extraction_id]["status_type"])


@pytest.fixture(scope="module")
def crashable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crashable]:
    try:
        server = PostgresServer(durable=True).start()
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))
    running = Crashable(server, tmp_path_factory.mktemp("crashable"))
    yield running
    running.api_process.stop()
    server.stop()


def lock_row(database: str, sql: str, extraction_id: str) -> Any:
    """A connection holding ``sql``'s row lock in an open transaction."""
    import psycopg

    holder = psycopg.connect(database)
    holder.execute(sql, (extraction_id,))
    return holder


def waiting_for_a_lock(database: str, text: str) -> bool:
    """Whether a statement containing ``text`` waits for a row lock."""
    import psycopg

    with psycopg.connect(database, autocommit=True) as conn:
        rows = conn.execute("SELECT query FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                            ).fetchall()
    return any(text in row[0] for row in rows)


def crash_and_start(crashable: Crashable, holder: Any) -> None:
    crashable.server.restart()
    holder.close()  # its connection died with the server, and its lock with it


def assert_ended_once(crashable: Crashable, extraction_id: str) -> list[str]:
    wait_for("the extraction to end", lambda: crashable.status(extraction_id)
             in ("ended", "error"))
    steps = history(crashable.database, extraction_id)
    assert "error" not in steps and steps.count("ended") == 1, steps
    assert steps[-1] == "ended", steps  # nothing after the final status
    result = crashable.api.get(f"/extraction/result/get/{extraction_id}")
    assert result.status_code == 200, result.text
    assert result.json()["extraction_info"]["extraction_id"] == extraction_id
    assert queue_rows(crashable.database) == 0
    return steps


def test_a_crash_during_the_first_status_write_does_not_end_the_extraction_in_error(
        crashable: Crashable) -> None:
    # The reproduction: the worker's ``started`` write waits for the row lock.
    extraction_id = crashable.trigger()
    holder = lock_row(crashable.database, "SELECT 1 FROM extractions"
                      " WHERE extraction_id = %s FOR UPDATE", extraction_id)
    with crashable.workers(lease=30, engine_seconds=0.1):
        wait_for("the started write to wait", lambda: waiting_for_a_lock(
            crashable.database, "FROM extractions WHERE extraction_id"))
        crash_and_start(crashable, holder)
        steps = assert_ended_once(crashable, extraction_id)
    # The worker kept its job through the outage: one attempt, not a take-over.
    assert steps.count("started") == 1, steps


def test_a_crash_during_finish_stores_the_result_once(crashable: Crashable) -> None:
    with crashable.workers(lease=30, engine_seconds=2):
        extraction_id = crashable.trigger()
        wait_for("the engine to run", lambda: crashable.status(extraction_id)
                 == "extraction_started")
        holder = lock_row(crashable.database, "SELECT 1 FROM extractions"
                          " WHERE extraction_id = %s FOR UPDATE", extraction_id)
        wait_for("finish to wait", lambda: waiting_for_a_lock(
            crashable.database, "FROM extractions WHERE extraction_id"))
        crash_and_start(crashable, holder)
        steps = assert_ended_once(crashable, extraction_id)
    assert steps.count("started") == 1, steps


def test_a_crash_while_an_idle_worker_looks_for_a_job_does_not_stop_it(
        crashable: Crashable) -> None:
    import psycopg

    with crashable.workers(lease=30, engine_seconds=0.1) as workers:
        # A table lock holds the worker's next look at the queue (reap or claim; both
        # skip locked rows, not a locked table) while the server crashes.
        holder = psycopg.connect(crashable.database)
        holder.execute("LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE")
        wait_for("the worker to wait for the queue", lambda: waiting_for_a_lock(
            crashable.database, "FROM jobs"))
        crash_and_start(crashable, holder)
        assert_ended_once(crashable, crashable.trigger())
        log = workers.log_path.read_text(errors="replace")
    # The same process waited for the database and went on: none died and was replaced.
    assert "starting another" not in log and "Traceback" not in log, log[-3000:]


def lease_expires(database: str, extraction_id: str) -> Any:
    import psycopg

    with psycopg.connect(database) as conn:
        row = conn.execute("SELECT lease_expires FROM jobs WHERE extraction_id = %s",
                           (extraction_id,)).fetchone()
    return row[0] if row else None


def test_the_heartbeat_survives_a_crash_and_renews_the_lease_again(
        crashable: Crashable) -> None:
    # A lease of 3 s renewed every second, and an engine that runs 25 s: the heartbeat's
    # renewal waits for the job's row lock when the server crashes. 25 s leaves room for
    # psycopg_pool's own reconnection, whose tries back off (1, 2, 4, 8 s apart) while
    # the server is down.
    with crashable.workers(lease=3, engine_seconds=25):
        extraction_id = crashable.trigger()
        wait_for("the engine to run", lambda: crashable.status(extraction_id)
                 == "extraction_started")
        holder = lock_row(crashable.database, "SELECT 1 FROM jobs"
                          " WHERE extraction_id = %s FOR UPDATE", extraction_id)
        wait_for("the heartbeat to wait", lambda: waiting_for_a_lock(
            crashable.database, "UPDATE jobs SET lease_expires"))
        crash_and_start(crashable, holder)
        before = lease_expires(crashable.database, extraction_id)
        assert before is not None
        # Renewed again after the crash, while the engine still runs (a dead heartbeat
        # would leave it as it was until the job ends and its row goes).
        renewed = wait_for("the heartbeat to renew the lease", lambda: (
            "the job ended first" if (now := lease_expires(crashable.database, extraction_id))
            is None else "renewed" if now > before else None))
        assert renewed == "renewed", (renewed, history(crashable.database, extraction_id))
        steps = assert_ended_once(crashable, extraction_id)
    assert steps.count("started") == 1, steps
