"""The SQLite store (WAL), the embedded default: the `store.Storage` interface over files
in the data folder, for one service process and its engine workers.

It keeps users and hashed keys, vault records, extractions, their status history and
results. The engine worker processes of the embedded pipeline (pipeline_pool.py) open
their own `SqliteStore` on the same files; SQLite's locking serialises their writes.
Every change that must be atomic (first fetch with delete, a final status, an update's
compare-and-set) runs in one ``BEGIN IMMEDIATE`` transaction, and no transaction does
anything but read and write rows.

The extracted data lives in a second database file beside the first (`results_path`),
with a write lock of its own. SQLite writes a value of tens of MB in about 0.1 s, and
every other writer waits that long: with the data in the main file, another user's
triggers took 20 times as long while one user stored their largest updates
(bench/reliability.py). The main file's ``data_state`` decides whether data is there
to read; the data is written before its extraction is marked ``present`` and removed
after it is marked ``deleted``, so a crash in between leaves at worst a row nobody
can read, which `drop_unreadable` removes at start.
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

from ...wire.protocol import FINAL_STATUSES, StatusType
from .records import User, document_record, key_hash, new_id, status_object

__all__ = ["SqliteStore", "results_file"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
    hash TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id),
    prefix TEXT NOT NULL, created REAL NOT NULL, revoked REAL);
CREATE TABLE IF NOT EXISTS documents (
    document_id TEXT PRIMARY KEY, owner_id TEXT NOT NULL, document_name TEXT NOT NULL,
    document_type TEXT NOT NULL, content_type TEXT NOT NULL, num_pages INTEGER NOT NULL,
    -- sha256: the vault's key of the file (vault.object_key; the content's SHA-256
    -- alone for documents stored before keys were per owner)
    size INTEGER NOT NULL, sha256 TEXT NOT NULL, upload_ts REAL NOT NULL);
CREATE INDEX IF NOT EXISTS documents_owner ON documents(owner_id, upload_ts, document_id);
CREATE TABLE IF NOT EXISTS extractions (
    extraction_id TEXT PRIMARY KEY, info_json TEXT NOT NULL, owner_id TEXT NOT NULL,
    delete_after_first_fetch INTEGER NOT NULL, saved INTEGER NOT NULL,
    -- pending: not finished; present: stored; deleted: fetched once (D6); none: not saved
    data_state TEXT NOT NULL DEFAULT 'pending', data_json TEXT, usage_json TEXT);
CREATE INDEX IF NOT EXISTS extractions_owner ON extractions(owner_id);
CREATE TABLE IF NOT EXISTS statuses (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
    extraction_id TEXT NOT NULL REFERENCES extractions(extraction_id),
    status_type TEXT NOT NULL, message TEXT NOT NULL, ts REAL NOT NULL);
CREATE INDEX IF NOT EXISTS statuses_extraction ON statuses(extraction_id, seq);
"""
# extractions.data_json above is where the data was kept before it had a file of its
# own: `SqliteStore` moves what it finds there into this one.
_RESULTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (extraction_id TEXT PRIMARY KEY, data_json TEXT NOT NULL);
"""


def results_file(path: Path) -> Path:
    """The file of the extracted data beside the main database file `path`."""
    return path.with_name(f"{path.stem}-results{path.suffix}")


class SqliteStore:
    """One SQLite file; a connection per thread (sqlite3 connections are not shareable)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.results_path = results_file(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        # executescript manages its own transaction (and the schema is idempotent).
        self._conn().executescript(_SCHEMA)
        self._results().executescript(_RESULTS_SCHEMA)
        self._move_inline_data()

    # -- plumbing -------------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = _connect(self.path)
        return conn

    def _results(self) -> sqlite3.Connection:
        conn = getattr(self._local, "results", None)
        if conn is None:
            conn = self._local.results = _connect(self.results_path)
        return conn

    @contextmanager
    def _tx(self, conn: sqlite3.Connection | None = None) -> Iterator[sqlite3.Connection]:
        conn = conn or self._conn()
        _begin_immediate(conn)
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self._conn().execute(sql, args).fetchone()
        return row

    def close(self) -> None:
        for name in ("conn", "results"):
            conn = getattr(self._local, name, None)
            if conn is not None:
                conn.close()
                setattr(self._local, name, None)

    def _move_inline_data(self) -> None:
        """Move data kept in the main file by earlier versions into the results file,
        one extraction at a time (written there first, so a crash loses nothing)."""
        ids = [r[0] for r in self._conn().execute(
            "SELECT extraction_id FROM extractions WHERE data_json IS NOT NULL")]
        for extraction_id in ids:
            row = self._one("SELECT data_json FROM extractions WHERE extraction_id = ?",
                            extraction_id)
            if row is None or row["data_json"] is None:
                continue
            with self._tx(self._results()) as results:
                results.execute("INSERT OR REPLACE INTO results VALUES (?, ?)",
                                (extraction_id, row["data_json"]))
            with self._tx() as db:
                db.execute("UPDATE extractions SET data_json = NULL WHERE extraction_id = ?",
                           (extraction_id,))

    def _data(self, extraction_id: str) -> str | None:
        row = self._results().execute("SELECT data_json FROM results WHERE extraction_id = ?",
                                      (extraction_id,)).fetchone()
        return str(row[0]) if row else None

    def _drop_data(self, extraction_id: str) -> str | None:
        """Remove an extraction's data; the text removed (None when there was none)."""
        with self._tx(self._results()) as results:
            found = results.execute("SELECT data_json FROM results WHERE extraction_id = ?",
                                    (extraction_id,)).fetchone()
            results.execute("DELETE FROM results WHERE extraction_id = ?", (extraction_id,))
        return str(found[0]) if found else None

    def drop_unreadable(self) -> int:
        """Remove data no extraction can be read from (a crash between the two files'
        writes left it); how many. Run at start, before any extraction is triggered."""
        ids = [r[0] for r in self._results().execute("SELECT extraction_id FROM results")]
        readable: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start: start + 500]
            readable.update(r[0] for r in self._conn().execute(
                "SELECT extraction_id FROM extractions WHERE data_state = 'present'"
                f" AND extraction_id IN ({','.join('?' * len(chunk))})", chunk))
        unreadable = [i for i in ids if i not in readable]
        for extraction_id in unreadable:
            self._drop_data(extraction_id)
        return len(unreadable)

    # -- users and keys ---------------------------------------------------------------
    def ensure_user(self, name: str) -> str:
        with self._tx() as db:
            row = db.execute("SELECT id FROM users WHERE name = ?", (name,)).fetchone()
            if row:
                return str(row["id"])
            user_id = new_id()
            db.execute("INSERT INTO users VALUES (?, ?, ?)", (user_id, name, time.time()))
            return user_id

    def add_key(self, user_name: str, token: str) -> str:
        """Register ``token`` for the user (created if new); idempotent for a known token."""
        user_id = self.ensure_user(user_name)
        digest = key_hash(token)
        with self._tx() as db:
            db.execute(
                "INSERT OR IGNORE INTO api_keys VALUES (?, ?, ?, ?, NULL)",
                (digest, user_id, digest[:8], time.time()),
            )
        return digest

    def list_keys(self, user_name: str | None = None) -> list[dict[str, Any]]:
        sql = (
            "SELECT u.name AS user, k.prefix, k.created, k.revoked FROM api_keys k"
            " JOIN users u ON u.id = k.user_id"
        )
        args: tuple[Any, ...] = ()
        if user_name is not None:
            sql += " WHERE u.name = ?"
            args = (user_name,)
        rows = self._conn().execute(sql + " ORDER BY k.created", args).fetchall()
        return [dict(r) for r in rows]

    def revoke_keys(self, user_name: str, prefix: str | None = None) -> int:
        """Revoke the user's keys (those whose hash starts with ``prefix`` when given)."""
        with self._tx() as db:
            cur = db.execute(
                "UPDATE api_keys SET revoked = ? WHERE revoked IS NULL AND hash LIKE ?"
                " AND user_id = (SELECT id FROM users WHERE name = ?)",
                (time.time(), (prefix or "") + "%", user_name),
            )
            return cur.rowcount

    def user_for_token(self, token: str) -> User | None:
        digest = key_hash(token)
        row = self._one(
            "SELECT u.id, u.name FROM api_keys k JOIN users u ON u.id = k.user_id"
            " WHERE k.hash = ? AND k.revoked IS NULL",
            digest,
        )
        return User(row["id"], row["name"], digest) if row else None

    # -- vault documents ----------------------------------------------------------------
    def add_document(self, record: dict[str, Any], size: int, key: str) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record["document_id"], record["owner_id"], record["document_name"],
                    record["document_type"], record["content_type"], record["num_pages"],
                    size, key, record["upload_unix_timestamp"],
                ),
            )

    def document(self, owner_id: str, document_id: str) -> dict[str, Any] | None:
        row = self._one(
            "SELECT * FROM documents WHERE document_id = ? AND owner_id = ?", document_id, owner_id
        )
        return document_record(row) if row else None

    def document_file(self, owner_id: str, document_id: str) -> tuple[dict[str, Any], str] | None:
        """The record and the key under which the vault keeps the bytes."""
        row = self._one(
            "SELECT * FROM documents WHERE document_id = ? AND owner_id = ?", document_id, owner_id
        )
        return (document_record(row), row["sha256"]) if row else None

    def documents(self, owner_id: str) -> list[dict[str, Any]]:
        rows = self._conn().execute(
            # D7: oldest first, then by id.
            "SELECT * FROM documents WHERE owner_id = ? ORDER BY upload_ts, document_id",
            (owner_id,),
        ).fetchall()
        return [document_record(r) for r in rows]

    # -- extractions --------------------------------------------------------------------
    def add_extraction(self, info: dict[str, Any], *, delete_after_first_fetch: bool) -> None:
        """Store the extraction info with its first status, ``not_started``."""
        with self._tx() as db:
            db.execute(
                "INSERT INTO extractions (extraction_id, info_json, owner_id,"
                " delete_after_first_fetch, saved) VALUES (?, ?, ?, ?, ?)",
                (
                    info["extraction_id"], json.dumps(info), info["trigger_user_id"],
                    int(delete_after_first_fetch), int(info["extracted_data_saved"]),
                ),
            )
            _insert_status(db, info["extraction_id"], StatusType.NOT_STARTED, "",
                           info["trigger_unix_timestamp"])

    def extraction(self, owner_id: str, extraction_id: str) -> dict[str, Any] | None:
        row = self._one(
            "SELECT * FROM extractions WHERE extraction_id = ? AND owner_id = ?",
            extraction_id, owner_id,
        )
        return dict(row) if row else None

    def set_info(self, extraction_id: str, info: dict[str, Any]) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE extractions SET info_json = ? WHERE extraction_id = ?",
                (json.dumps(info), extraction_id),
            )

    def add_status(
        self, extraction_id: str, status_type: str, message: str = "", ts: float | None = None
    ) -> bool:
        """Append a status unless the extraction already ended; False when refused.

        Final statuses are terminal: a worker left over from a stopped service must not
        revive an extraction that recovery has already marked ``error``.
        """
        return self.add_statuses(extraction_id, [(status_type, message, ts)])

    def add_statuses(
        self, extraction_id: str, stages: list[tuple[str, str, float | None]]
    ) -> bool:
        """Append ``(status_type, message, ts)`` stages in one transaction, as `add_status`."""
        with self._tx() as db:
            if _latest_type(db, extraction_id) in FINAL_STATUSES:
                return False
            for status_type, message, ts in stages:
                _insert_status(db, extraction_id, status_type, message, ts)
            return True

    def finish(
        self,
        extraction_id: str,
        data: dict[str, Any] | None,
        usage: dict[str, Any],
        stages: list[tuple[str, float]],
    ) -> bool:
        """Store the result, then the closing statuses in one transaction; False (and
        nothing stored) when the extraction was already closed."""
        if data is not None:
            with self._tx(self._results()) as results:
                results.execute("INSERT OR REPLACE INTO results VALUES (?, ?)",
                                (extraction_id, json.dumps(data)))
        with self._tx() as db:
            closed = _latest_type(db, extraction_id) not in FINAL_STATUSES
            if closed:
                db.execute(
                    "UPDATE extractions SET usage_json = ?, data_state = ?"
                    " WHERE extraction_id = ?",
                    (json.dumps(usage), "present" if data is not None else "none",
                     extraction_id),
                )
                for status_type, ts in stages:
                    _insert_status(db, extraction_id, status_type, "", ts)
        if not closed and data is not None:
            self._drop_data(extraction_id)
        return closed

    def latest_statuses(self, owner_id: str, ids: list[str]) -> dict[str, dict[str, Any]]:
        """The latest status of each of ``ids`` owned by ``owner_id`` (unknown ids absent)."""
        out: dict[str, dict[str, Any]] = {}
        conn = self._conn()
        # Chunked to stay under SQLite's host-parameter limit.
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT s.*, e.owner_id FROM statuses s JOIN extractions e"
                " ON e.extraction_id = s.extraction_id"
                f" WHERE e.owner_id = ? AND s.extraction_id IN ({marks})"
                " AND s.seq = (SELECT MAX(seq) FROM statuses t"
                " WHERE t.extraction_id = s.extraction_id)",
                (owner_id, *chunk),
            ).fetchall()
            for r in rows:
                out[r["extraction_id"]] = status_object(r)
        return out

    def status_history(self, extraction_id: str) -> list[dict[str, Any]]:
        rows = self._conn().execute(
            "SELECT s.*, e.owner_id FROM statuses s JOIN extractions e"
            " ON e.extraction_id = s.extraction_id WHERE s.extraction_id = ? ORDER BY s.seq",
            (extraction_id,),
        ).fetchall()
        return [status_object(r) for r in rows]

    def take_data(self, owner_id: str, extraction_id: str) -> tuple[str, str | None]:
        """Read the data for a fetch; delete it when the extraction asked for that (D6).

        Returns ``(state, data_json)``, the stored JSON text, which a plain fetch sends
        as it is; the state is changed under the write lock, so of two concurrent first
        fetches exactly one sees ``present``.
        """
        query = ("SELECT data_state, delete_after_first_fetch FROM extractions"
                 " WHERE extraction_id = ? AND owner_id = ?")
        row = self._one(query, extraction_id, owner_id)
        if row is not None and row["data_state"] == "present" and not row[
            "delete_after_first_fetch"
        ]:
            # Kept data is only read: no write lock, so fetches never queue behind the
            # pipeline's status writes (WAL readers see a consistent snapshot).
            return "present", self._data(extraction_id)
        with self._tx() as db:
            row = db.execute(query, (extraction_id, owner_id)).fetchone()
            if row is None or row["data_state"] != "present":
                return (row["data_state"] if row else "unknown"), None
            if row["delete_after_first_fetch"]:
                db.execute("UPDATE extractions SET data_state = 'deleted' WHERE extraction_id = ?",
                           (extraction_id,))
        if not row["delete_after_first_fetch"]:
            return "present", self._data(extraction_id)
        # This fetch won: the data is read and removed at once, after (or before) any
        # update that was storing it.
        return "present", self._drop_data(extraction_id)

    def snapshot(self, owner_id: str, extraction_id: str) -> tuple[str, str | None] | None:
        """(data_state, data_json) of an extraction, read without taking a write lock.

        An update checks its values against this copy outside any transaction, then
        `replace_data` writes the result only if the copy is still what is stored.
        """
        row = self._one("SELECT data_state FROM extractions"
                        " WHERE extraction_id = ? AND owner_id = ?", extraction_id, owner_id)
        if row is None:
            return None
        state = str(row["data_state"])
        return state, self._data(extraction_id) if state == "present" else None

    def replace_data(self, owner_id: str, extraction_id: str, before: str, after: str) -> bool:
        """Store `after` if the stored data is still `before` (compare-and-set); else False.

        The results file's write lock is held for the comparison and the write alone:
        checking a large update's values inside it held every other writer up for as
        long (95 s for a million values). The main file's is not taken at all.
        """
        if self.extraction(owner_id, extraction_id) is None:
            return False
        with self._tx(self._results()) as results:
            # Compared by SQLite, in C: the stored text is not copied out to be compared.
            changed = results.execute(
                "UPDATE results SET data_json = ? WHERE extraction_id = ? AND data_json = ?",
                (after, extraction_id, before)).rowcount
        return changed == 1

    def stale_unfinished(self, quiet_for: float) -> list[str]:
        """Unfinished extractions whose latest status is older than `quiet_for` seconds."""
        rows = self._conn().execute(
            "SELECT s.extraction_id FROM statuses s WHERE s.seq = (SELECT MAX(seq)"
            " FROM statuses t WHERE t.extraction_id = s.extraction_id)"
            " AND s.status_type NOT IN ('ended', 'error') AND s.ts < ?",
            (time.time() - quiet_for,),
        ).fetchall()
        return [r["extraction_id"] for r in rows]

    def unfinished(self) -> list[str]:
        """Extractions whose latest status is not final (running when the service stopped)."""
        rows = self._conn().execute(
            "SELECT s.extraction_id FROM statuses s WHERE s.seq = (SELECT MAX(seq)"
            " FROM statuses t WHERE t.extraction_id = s.extraction_id)"
            " AND s.status_type NOT IN ('ended', 'error')"
        ).fetchall()
        return [r["extraction_id"] for r in rows]


#: Pauses between attempts to take the write lock: short, since a transaction here holds
#: it for about 50 microseconds. Then SQLite's own busy handler waits the rest.
_LOCK_PAUSES = (0.0001, 0.0002, 0.0005, 0.001, 0.002) + (0.005,) * 100
_BUSY_TIMEOUT_MS = 30_000
_BUSY_ATTEMPTS = 3


def _connect(path: Path) -> sqlite3.Connection:
    # isolation_level=None: we issue BEGIN ourselves, so each write knows its bounds.
    conn = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def _begin_immediate(conn: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE``, retried with short pauses while another process writes.

    SQLite's built-in busy handler sleeps 1, 2, 5, 10 ... 100 ms between attempts, a
    hundred times longer than our transactions hold the lock; and a writer that keeps
    losing to the engine workers' status writes waits longer and longer (measured: the
    service thread waited 3.3 ms per extraction on average, 130 ms at worst, while a
    batch ran). So the first half second is retried here, finely; after that the busy
    handler takes over (a checkpoint or a long write may really hold the lock).
    """
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        for pause in _LOCK_PAUSES:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if not _locked(exc):
                    raise
            time.sleep(pause)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
    # Then the busy handler, more than once: a status write that gives up leaves an
    # extraction unfinished, so a write waits out even a long lock, within a bound.
    for attempt in range(_BUSY_ATTEMPTS):
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if attempt == _BUSY_ATTEMPTS - 1 or not _locked(exc):
                raise


def _locked(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def _insert_status(
    db: sqlite3.Connection, extraction_id: str, status_type: str, message: str, ts: float | None
) -> None:
    db.execute(
        "INSERT INTO statuses (id, extraction_id, status_type, message, ts) VALUES (?, ?, ?, ?, ?)",
        (new_id(), extraction_id, status_type, message, time.time() if ts is None else ts),
    )


def _latest_type(db: sqlite3.Connection, extraction_id: str) -> str | None:
    row = db.execute(
        "SELECT status_type FROM statuses WHERE extraction_id = ? ORDER BY seq DESC LIMIT 1",
        (extraction_id,),
    ).fetchone()
    return str(row[0]) if row else None
