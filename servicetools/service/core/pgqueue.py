"""The durable job queue in PostgreSQL: the ``jobs`` table (pg_migrations/0002), claimed
with ``FOR UPDATE SKIP LOCKED`` under leases.

- `PgQueue.enqueue` writes the extraction, its ``not_started`` status and its job in one
  transaction: no extraction exists without a job to run it, none is run twice.
- `claim` takes the oldest queued job, or one whose lease expired (its worker died or
  stalled), sets a new ``lease_id`` and counts the attempt. SKIP LOCKED: two claimers
  never wait for, nor get, the same row.
- Every write of a run (`stages`, `finish`) first renews the lease with ``UPDATE ... WHERE
  lease_id = mine`` and then writes the statuses in the same transaction: a worker whose
  job was taken over is refused, so a result is stored once. `extend` is the heartbeat.
- The final status removes the job (or, for a synchronous trigger, leaves its reply for
  the waiting API process) in that same transaction.
- `reap` ends in ``error``, with the reason, the jobs whose lease expired after their
  last allowed attempt.

The database may be away (a crash, a restart, the network) at any of these steps, even
in the middle of one. Every method then raises `Unrecorded` ("nothing was recorded"),
never a status of its own: an extraction ends in ``error`` for a reason of its document
or the engine, or after its last attempt, not because the database blinked. A run's
writes (`stages`, `finish`) are retried with backoff for as long as the lease is still
this worker's by its own clock, so a short outage costs nothing; past that, the job is
left to be taken over after its lease. A retried write carries the status ids of its
first try: when that try was committed and only its answer lost, the retry finds them
and writes nothing twice.

Why not procrastinate: its jobs live in its own tables and change state in its own
transactions, so "the status row changes in the same transaction as the job" would need
a second bookkeeping of our own beside it; its workers are asyncio tasks, where ours are
processes for a CPU-bound engine. The guarantees here take a handful of statements.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg

from ...wire.protocol import FINAL_STATUSES, StatusType
from .pipeline import Job, Unrecorded
from .records import new_id
from .store import StoreUnavailable
from .store_postgres import Conn, PgStore, write_extraction, write_finish, write_statuses

__all__ = ["Lease", "PgQueue", "gave_up"]

log = logging.getLogger("servicetools.worker")

#: How long a synchronous trigger's reply waits for the API process that asked for it
#: (which may have died) before `reap` removes it.
REPLY_KEPT_SECONDS = 3600
#: Seconds before the first retry of a run's write while the database is away, and the
#: most between two (the wait doubles): a restart of the server takes a second or two.
RETRY_FIRST = 0.1
RETRY_MOST = 2.0


def gave_up(attempts: int, owner: str | None) -> str:
    """The error message of a job whose every allowed attempt was abandoned."""
    return (f"abandoned: {attempts} worker(s) took this extraction and stopped before "
            f"finishing it (the last was {owner or 'unknown'}); it is not tried again")


@dataclass
class Lease:
    """A claimed job, held by one worker until its lease expires or it ends."""

    job: Job
    lease_id: str
    attempt: int
    #: When the lease runs out by this worker's clock (`time.monotonic`), as of the last
    #: renewal known to be committed: counted from before the statement, so never later
    #: than the database's own ``lease_expires``.
    expires: float = 0.0
    #: Set when a renewal was refused: another worker has the job now.
    lost: threading.Event = field(default_factory=threading.Event)

    @property
    def extraction_id(self) -> str:
        return self.job.extraction_id

    def renewed(self, at: float, seconds: float) -> None:
        # The heartbeat and the run both renew; a late answer must not shorten it.
        self.expires = max(self.expires, at + seconds)


def _job_json(job: Job) -> str:
    fields = asdict(job)
    fields.pop("data")  # in its own BYTEA column
    return json.dumps(fields)


class PgQueue:
    """The job queue on a `PgStore`'s database; ``owner`` names this worker in the rows
    (for people reading them: the lease id, not the owner, decides who may write)."""

    def __init__(self, store: PgStore, *, owner: str = "", lease_seconds: float = 30.0,
                 max_attempts: int = 3) -> None:
        self.store = store
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.max_attempts = max_attempts

    # -- API process side -------------------------------------------------------------------
    def enqueue(self, job: Job, *, delete_after_first_fetch: bool) -> None:
        """Store a new extraction, its first status and its job, in one transaction."""
        # Bytes the vault already keeps are read from there by the worker.
        data = job.data if not job.document_storage_id else None
        with self.store.transaction() as db:
            write_extraction(db, job.info, delete_after_first_fetch=delete_after_first_fetch)
            db.execute("INSERT INTO jobs (extraction_id, job_json, data, sync, max_attempts)"
                       " VALUES (%s, %s, %s, %s, %s)",
                       (job.extraction_id, _job_json(job), data,
                        job.info.get("trigger_type") == "sync", self.max_attempts))

    def take_replies(self, ids: list[str]) -> dict[str, tuple[str | None, str]]:
        """The ended synchronous jobs among ``ids``, removed: ``{id: (data_json or None,
        final status message)}``."""
        if not ids:
            return {}
        with _recording("taking synchronous replies"), self.store.transaction() as db:
            rows = db.execute("DELETE FROM jobs WHERE extraction_id = ANY(%s)"
                              " AND state = 'done' RETURNING extraction_id, reply_json",
                              (ids,)).fetchall()
            done = [r["extraction_id"] for r in rows]
            messages = {r["extraction_id"]: r["message"] for r in db.execute(
                "SELECT DISTINCT ON (extraction_id) extraction_id, message FROM statuses"
                " WHERE extraction_id = ANY(%s) ORDER BY extraction_id, seq DESC",
                (done,)).fetchall()} if done else {}
        return {r["extraction_id"]: (r["reply_json"], messages.get(r["extraction_id"], ""))
                for r in rows}

    # -- worker side ------------------------------------------------------------------------
    def claim(self) -> Lease | None:
        """The oldest job nobody holds (queued, or its lease expired with attempts left),
        now leased to this worker; None when there is none."""
        lease_id = uuid.uuid4().hex
        asked = time.monotonic()
        with _recording("claiming a job"), self.store.transaction() as db:
            row = db.execute(
                "WITH next AS (SELECT extraction_id FROM jobs WHERE state = 'queued'"
                " OR (state = 'running' AND lease_expires < now() AND attempts < max_attempts)"
                " ORDER BY enqueued LIMIT 1 FOR UPDATE SKIP LOCKED)"
                " UPDATE jobs j SET state = 'running', lease_id = %s, lease_owner = %s,"
                " lease_expires = now() + make_interval(secs => %s), attempts = attempts + 1"
                " FROM next WHERE j.extraction_id = next.extraction_id"
                " RETURNING j.job_json, j.data, j.attempts",
                (lease_id, self.owner, self.lease_seconds)).fetchone()
        if row is None:
            return None
        job = Job(**json.loads(row["job_json"]))
        job.data = bytes(row["data"]) if row["data"] is not None else None
        lease = Lease(job, lease_id, row["attempts"])
        lease.renewed(asked, self.lease_seconds)
        return lease

    def _hold(self, db: Conn, lease: Lease) -> bool | None:
        """Renew the lease inside ``db``; whether the job is synchronous, or None (and
        ``lease.lost`` set) when this worker no longer holds it."""
        row = db.execute("UPDATE jobs SET lease_expires = now() + make_interval(secs => %s)"
                         " WHERE extraction_id = %s AND lease_id = %s AND state = 'running'"
                         " RETURNING sync",
                         (self.lease_seconds, lease.extraction_id, lease.lease_id)).fetchone()
        if row is None:
            lease.lost.set()
            return None
        return bool(row["sync"])

    def extend(self, lease: Lease) -> bool:
        """The heartbeat: renew the lease; False when another worker holds the job now.
        One try: the heartbeat itself comes back a third of a lease later."""
        asked = time.monotonic()
        with _recording(f"renewing the lease of {lease.extraction_id}"), \
                self.store.transaction() as db:
            held = self._hold(db, lease) is not None
        if held:
            lease.renewed(asked, self.lease_seconds)
        return held

    def stages(self, lease: Lease, stages: list[tuple[str, str, float | None]]) -> bool:
        """Append statuses while holding the job; a final one ends the job."""
        ids = [new_id() for _ in stages]

        def write(db: Conn) -> bool:
            sync = self._hold(db, lease)
            if sync is None or not write_statuses(db, lease.extraction_id, stages, ids):
                return False
            if any(s[0] in FINAL_STATUSES for s in stages):
                _end(db, lease.extraction_id, sync, None)
            return True

        return self._through_lease(lease, ids, write)

    def finish(self, lease: Lease, data: dict[str, Any] | None, usage: dict[str, Any],
               stages: list[tuple[str, float]], reply: dict[str, Any]) -> bool:
        """Store the result and the closing statuses while holding the job, and end it
        (``reply``: what a synchronous trigger answers, saved or not)."""
        ids = [new_id() for _ in stages]

        def write(db: Conn) -> bool:
            sync = self._hold(db, lease)
            if sync is None or not write_finish(db, lease.extraction_id, data, usage,
                                                stages, ids):
                return False
            _end(db, lease.extraction_id, sync, reply)
            return True

        return self._through_lease(lease, ids, write)

    def _through_lease(self, lease: Lease, ids: list[str], write: Callable[[Conn], bool]
                       ) -> bool:
        """Run ``write`` (which renews the lease first) in one transaction; while the
        database cannot be reached, try again with backoff until the lease runs out by
        this worker's clock, then `Unrecorded`. ``ids``: the statuses ``write`` adds; a
        retry that finds them knows the try before was committed."""
        wait = RETRY_FIRST
        first = True
        while True:
            asked = time.monotonic()
            try:
                with self.store.transaction() as db:
                    if not first and _written(db, ids):
                        return True
                    done = write(db)
                if not lease.lost.is_set():
                    lease.renewed(asked, self.lease_seconds)
                return done
            except StoreUnavailable as exc:
                if time.monotonic() + wait >= lease.expires:
                    raise Unrecorded(f"the lease of {lease.extraction_id} ran out while the "
                                     f"database was away: {exc}") from exc
                log.warning("extraction %s: the database is away, writing again in %.1f s"
                            " (%s)", lease.extraction_id, wait, exc)
            except psycopg.Error as exc:  # not an outage: trying again would fail again
                raise Unrecorded(str(exc)) from exc
            time.sleep(wait)
            wait, first = min(2 * wait, RETRY_MOST), False

    def reap(self) -> list[str]:
        """End in error the jobs abandoned after their last attempt; their ids. Also drop
        synchronous replies nobody came for."""
        ended = []
        with _recording("ending abandoned jobs"), self.store.transaction() as db:
            rows = db.execute(
                "SELECT extraction_id, attempts, lease_owner, sync FROM jobs"
                " WHERE state = 'running' AND lease_expires < now()"
                " AND attempts >= max_attempts FOR UPDATE SKIP LOCKED").fetchall()
            for row in rows:
                if write_statuses(db, row["extraction_id"], [
                        (StatusType.ERROR, gave_up(row["attempts"], row["lease_owner"]), None)]):
                    ended.append(row["extraction_id"])
                _end(db, row["extraction_id"], row["sync"], None)
            db.execute("DELETE FROM jobs WHERE state = 'done'"
                       " AND done < now() - make_interval(secs => %s)", (REPLY_KEPT_SECONDS,))
        return ended

    def counts(self) -> dict[str, int]:
        """Jobs per state (health checks, the bench)."""
        rows = self.store._all("SELECT state, count(*) AS n FROM jobs GROUP BY state")
        return {r["state"]: int(r["n"]) for r in rows}


@contextmanager
def _recording(what: str) -> Iterator[None]:
    """Any failure of the database inside is `Unrecorded`: nothing of ``what`` was
    recorded, and the caller tries again later (the store's own `StoreUnavailable` for an
    outage is a `RuntimeError`, not a `psycopg.Error`)."""
    try:
        yield
    except (StoreUnavailable, psycopg.Error) as exc:
        raise Unrecorded(f"{what}: {exc}") from exc


def _written(db: Conn, ids: list[str]) -> bool:
    """Whether the statuses ``ids`` are stored (a try whose commit's answer was lost)."""
    return db.execute("SELECT 1 FROM statuses WHERE id = ANY(%s) LIMIT 1",
                      (ids,)).fetchone() is not None


def _end(db: Conn, extraction_id: str, sync: bool, reply: dict[str, Any] | None) -> None:
    if sync:
        db.execute("UPDATE jobs SET state = 'done', done = now(), data = NULL, lease_id = NULL,"
                   " reply_json = %s WHERE extraction_id = %s",
                   (json.dumps(reply) if reply is not None else None, extraction_id))
    else:
        db.execute("DELETE FROM jobs WHERE extraction_id = %s", (extraction_id,))
