"""The PostgreSQL store (psycopg 3): the `store.Storage` interface for any number of
service processes on one database (``--database``, the ``scale`` extra).

The rows are SQLite's (store_sqlite.py); the schema lives in ``pg_migrations/`` and is brought
up to date by yoyo-migrations (`upgrade_schema`) when the service starts, under yoyo's
lock, so processes starting together apply it once.

What SQLite's store gets from its single write lock, this one gets from row locks:

- a status is appended only while the extraction is unfinished: its ``extractions`` row
  is locked (``FOR UPDATE``) for the check and the insert, so writes to one extraction
  queue and writes to others do not;
- the data is written in the same transaction as the statuses that make it readable,
  and removed in the same transaction as the fetch that deletes it: nothing is ever
  half stored, so `drop_unreadable` has nothing to do (SQLite needs it because its data
  lives in a second file);
- an update's compare-and-set is one ``UPDATE ... WHERE data_json = before``: a
  concurrent update waits for the row and then re-checks the condition on what was
  committed (READ COMMITTED's rule for updated rows), so exactly one of two wins.

Connections come from a pool per process (`POOL_SIZE`), in autocommit mode: a read is
one statement, and a write opens its transaction explicitly.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from ...wire.protocol import FINAL_STATUSES, StatusType
from .records import User, document_record, key_hash, new_id, status_object
from .store import StoreUnavailable

__all__ = ["LATEST_STATUSES", "MIGRATIONS", "POOL_SIZE", "PgStore", "safe_url", "upgrade_schema"]

#: The schema's migrations (plain SQL files, applied in name order).
MIGRATIONS = Path(__file__).with_name("pg_migrations")
#: Connections per process at most: the service's request threads share them (a
#: statement takes well under a millisecond), each engine worker needs one.
POOL_SIZE = 8
#: Seconds to wait for the server when none is given in the URL: libpq's default is
#: to wait for ever on an address that does not answer.
CONNECT_TIMEOUT = 10
_SCHEMES = ("postgresql", "postgres")
#: The latest status of each extraction of a list (parameters: the ids, the owner).
LATEST_STATUSES = (
    "SELECT s.id, s.status_type, s.message, s.ts, s.extraction_id, e.owner_id"
    " FROM extractions e CROSS JOIN LATERAL (SELECT * FROM statuses t"
    " WHERE t.extraction_id = e.extraction_id ORDER BY t.seq DESC LIMIT 1) s"
    " WHERE e.extraction_id = ANY(%s) AND e.owner_id = %s")

Conn = psycopg.Connection[DictRow]


def safe_url(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


def conninfo(url: str) -> str:
    """The libpq connection string for a ``postgresql://`` URL, with a connect timeout;
    `StoreUnavailable` for anything else."""
    if urlsplit(url).scheme not in _SCHEMES:
        raise StoreUnavailable(f"The database address {safe_url(url)!r} is not a "
                               "postgresql:// URL.")
    try:
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise StoreUnavailable(f"The database address {safe_url(url)!r} is malformed: "
                               f"{_first_line(exc)}") from None
    params.setdefault("connect_timeout", CONNECT_TIMEOUT)
    return " ".join(f"{k}={_quote(str(v))}" for k, v in params.items() if v is not None)


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def upgrade_schema(url: str) -> list[str]:
    """Bring the database's schema up to date; the ids of the migrations applied."""
    from yoyo import get_backend, read_migrations

    params = conninfo_to_dict(conninfo(url))
    dbname = params.pop("dbname", "") or ""
    # yoyo connects with the URL's query as keyword arguments: every libpq parameter
    # (a socket folder as host, sslmode, ...) passes through unchanged that way.
    backend = get_backend(urlunsplit(("postgresql+psycopg", "", f"/{dbname}",
                                      urlencode({k: str(v) for k, v in params.items()}), "")))
    try:
        with backend.lock(timeout=60):
            pending = backend.to_apply(read_migrations(str(MIGRATIONS)))
            backend.apply_migrations(pending)
    finally:
        backend.connection.close()
    return [m.id for m in pending]


class PgStore:
    """The service's rows in a PostgreSQL database; one pool of connections per process."""

    def __init__(self, url: str, *, migrate: bool = True, pool_size: int = POOL_SIZE) -> None:
        self.url = url
        info = conninfo(url)
        try:
            if migrate:
                upgrade_schema(url)
            self._pool: ConnectionPool[Conn] = ConnectionPool(
                info, min_size=1, max_size=pool_size, open=False, name="servicetools",
                kwargs={"autocommit": True, "row_factory": dict_row},
                # After a restart of the server every pooled connection is dead; checking
                # each one as it is taken (one round trip) replaces it instead of failing
                # the request that drew it.
                check=ConnectionPool.check_connection)
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT + 5)
        except (psycopg.Error, PoolTimeout) as exc:
            raise StoreUnavailable(f"The database at {safe_url(url)} cannot be used: "
                                   f"{_first_line(exc)}") from None

    # -- plumbing -------------------------------------------------------------------------
    @contextmanager
    def _connection(self) -> Iterator[Conn]:
        """A pooled connection; a database that is away (down, restarting, the network)
        is `StoreUnavailable`, which the service answers with a 503, not a 500."""
        try:
            with self._pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise StoreUnavailable(f"The database at {safe_url(self.url)} cannot be "
                                   f"reached: {_first_line(exc)}") from exc

    @contextmanager
    def transaction(self) -> Iterator[Conn]:
        """A connection in a transaction, committed at the end (the job queue's writes
        share the status rows' transactions through this)."""
        with self._connection() as conn, conn.transaction():
            yield conn

    _tx = transaction

    def _one(self, sql: str, *args: Any) -> DictRow | None:
        with self._connection() as conn:
            return conn.execute(sql, args).fetchone()

    def _all(self, sql: str, *args: Any) -> list[DictRow]:
        with self._connection() as conn:
            return conn.execute(sql, args).fetchall()

    def close(self) -> None:
        self._pool.close()

    def drop_unreadable(self) -> int:
        """Nothing to drop: data and state change in one transaction (see the module)."""
        return 0

    # -- users and keys ---------------------------------------------------------------------
    def ensure_user(self, name: str) -> str:
        with self._tx() as db:
            db.execute("INSERT INTO users VALUES (%s, %s, %s) ON CONFLICT (name) DO NOTHING",
                       (new_id(), name, time.time()))
            row = db.execute("SELECT id FROM users WHERE name = %s", (name,)).fetchone()
        assert row is not None
        return str(row["id"])

    def add_key(self, user_name: str, token: str) -> str:
        """Register ``token`` for the user (created if new); idempotent for a known token."""
        user_id = self.ensure_user(user_name)
        digest = key_hash(token)
        with self._tx() as db:
            db.execute("INSERT INTO api_keys VALUES (%s, %s, %s, %s, NULL)"
                       " ON CONFLICT (hash) DO NOTHING",
                       (digest, user_id, digest[:8], time.time()))
        return digest

    def list_keys(self, user_name: str | None = None) -> list[dict[str, Any]]:
        sql = ("SELECT u.name AS user, k.prefix, k.created, k.revoked FROM api_keys k"
               " JOIN users u ON u.id = k.user_id")
        args: tuple[Any, ...] = ()
        if user_name is not None:
            sql += " WHERE u.name = %s"
            args = (user_name,)
        return [dict(r) for r in self._all(sql + " ORDER BY k.created", *args)]

    def revoke_keys(self, user_name: str, prefix: str | None = None) -> int:
        """Revoke the user's keys (those whose hash starts with ``prefix`` when given)."""
        with self._tx() as db:
            cur = db.execute(
                "UPDATE api_keys SET revoked = %s WHERE revoked IS NULL"
                " AND starts_with(hash, %s) AND user_id = (SELECT id FROM users WHERE name = %s)",
                (time.time(), _text(prefix or ""), _text(user_name)))
            return cur.rowcount

    def user_for_token(self, token: str) -> User | None:
        digest = key_hash(token)
        row = self._one("SELECT u.id, u.name FROM api_keys k JOIN users u ON u.id = k.user_id"
                        " WHERE k.hash = %s AND k.revoked IS NULL", digest)
        return User(row["id"], row["name"], digest) if row else None

    # -- vault documents --------------------------------------------------------------------
    def add_document(self, record: dict[str, Any], size: int, key: str) -> None:
        with self._tx() as db:
            db.execute(
                "INSERT INTO documents VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (record["document_id"], record["owner_id"], _text(record["document_name"]),
                 _text(record["document_type"]), record["content_type"], record["num_pages"],
                 size, key, record["upload_unix_timestamp"]))

    def document(self, owner_id: str, document_id: str) -> dict[str, Any] | None:
        found = self.document_file(owner_id, document_id)
        return found[0] if found else None

    def document_file(self, owner_id: str, document_id: str
                      ) -> tuple[dict[str, Any], str] | None:
        """The record and the key under which the vault keeps the bytes."""
        if not _findable(document_id):
            return None
        row = self._one("SELECT * FROM documents WHERE document_id = %s AND owner_id = %s",
                        document_id, owner_id)
        return (document_record(row), row["sha256"]) if row else None

    def documents(self, owner_id: str) -> list[dict[str, Any]]:
        # D7: oldest first, then by id.
        rows = self._all("SELECT * FROM documents WHERE owner_id = %s"
                         " ORDER BY upload_ts, document_id", owner_id)
        return [document_record(r) for r in rows]

    # -- extractions ------------------------------------------------------------------------
    def add_extraction(self, info: dict[str, Any], *, delete_after_first_fetch: bool) -> None:
        """Store the extraction info with its first status, ``not_started``."""
        with self._tx() as db:
            write_extraction(db, info, delete_after_first_fetch=delete_after_first_fetch)

    def extraction(self, owner_id: str, extraction_id: str) -> dict[str, Any] | None:
        if not _findable(extraction_id):
            return None
        row = self._one("SELECT * FROM extractions WHERE extraction_id = %s AND owner_id = %s",
                        extraction_id, owner_id)
        return dict(row) if row else None

    def set_info(self, extraction_id: str, info: dict[str, Any]) -> None:
        with self._tx() as db:
            db.execute("UPDATE extractions SET info_json = %s WHERE extraction_id = %s",
                       (json.dumps(info), extraction_id))

    def add_status(self, extraction_id: str, status_type: str, message: str = "",
                   ts: float | None = None) -> bool:
        """Append a status unless the extraction already ended; False when refused."""
        return self.add_statuses(extraction_id, [(status_type, message, ts)])

    def add_statuses(self, extraction_id: str, stages: list[tuple[str, str, float | None]]
                     ) -> bool:
        """Append ``(status_type, message, ts)`` stages in one transaction, as `add_status`."""
        with self._tx() as db:
            return write_statuses(db, extraction_id, stages)

    def finish(self, extraction_id: str, data: dict[str, Any] | None, usage: dict[str, Any],
               stages: list[tuple[str, float]]) -> bool:
        """Store the result and the closing statuses in one transaction; False (and
        nothing stored) when the extraction was already closed."""
        with self._tx() as db:
            return write_finish(db, extraction_id, data, usage, stages)

    def latest_statuses(self, owner_id: str, ids: list[str]) -> dict[str, dict[str, Any]]:
        """The latest status of each of ``ids`` owned by ``owner_id`` (unknown ids absent).

        One statement for any number of ids: each extraction is found by its primary key
        and its latest status as the last entry of ``statuses_extraction`` for it.
        """
        wanted = [i for i in ids if _findable(i)]
        if not wanted:
            return {}
        rows = self._all(LATEST_STATUSES, wanted, owner_id)
        return {r["extraction_id"]: status_object(r) for r in rows}

    def status_history(self, extraction_id: str) -> list[dict[str, Any]]:
        if not _findable(extraction_id):
            return []
        rows = self._all(
            "SELECT s.*, e.owner_id FROM statuses s JOIN extractions e"
            " ON e.extraction_id = s.extraction_id WHERE s.extraction_id = %s ORDER BY s.seq",
            extraction_id)
        return [status_object(r) for r in rows]

    def take_data(self, owner_id: str, extraction_id: str) -> tuple[str, str | None]:
        """Read the data for a fetch; delete it when the extraction asked for that (D6).

        Returns ``(state, data_json)``. A deleting fetch marks the extraction ``deleted``
        only while it is ``present``, under its row lock: of two concurrent first fetches
        the second waits, then finds it deleted.
        """
        if not _findable(extraction_id):
            return "unknown", None
        row = self._one(
            "SELECT e.data_state, e.delete_after_first_fetch,"
            " CASE WHEN NOT e.delete_after_first_fetch THEN r.data_json END AS data_json"
            " FROM extractions e LEFT JOIN results r ON r.extraction_id = e.extraction_id"
            " WHERE e.extraction_id = %s AND e.owner_id = %s", extraction_id, owner_id)
        if row is None or row["data_state"] != "present":
            return (row["data_state"] if row else "unknown"), None
        if not row["delete_after_first_fetch"]:
            return "present", row["data_json"]
        with self._tx() as db:
            won = db.execute("UPDATE extractions SET data_state = 'deleted'"
                             " WHERE extraction_id = %s AND owner_id = %s"
                             " AND data_state = 'present' RETURNING 1",
                             (extraction_id, owner_id)).fetchone()
            if won is None:
                return "deleted", None
            taken = db.execute("DELETE FROM results WHERE extraction_id = %s"
                               " RETURNING data_json", (extraction_id,)).fetchone()
        return "present", taken["data_json"] if taken else None

    def snapshot(self, owner_id: str, extraction_id: str) -> tuple[str, str | None] | None:
        """(data_state, data_json) of an extraction, read without locking anything; an
        update checks its values against this copy, then `replace_data` stores them."""
        if not _findable(extraction_id):
            return None
        row = self._one(
            "SELECT e.data_state, r.data_json FROM extractions e LEFT JOIN results r"
            " ON r.extraction_id = e.extraction_id"
            " WHERE e.extraction_id = %s AND e.owner_id = %s", extraction_id, owner_id)
        if row is None:
            return None
        state = str(row["data_state"])
        return state, row["data_json"] if state == "present" else None

    def replace_data(self, owner_id: str, extraction_id: str, before: str, after: str) -> bool:
        """Store `after` if the stored data is still `before` (compare-and-set); else False."""
        if not _findable(extraction_id):
            return False
        with self._tx() as db:
            changed = db.execute(
                "UPDATE results r SET data_json = %s FROM extractions e"
                " WHERE r.extraction_id = %s AND e.extraction_id = r.extraction_id"
                " AND e.owner_id = %s AND e.data_state = 'present' AND r.data_json = %s",
                (after, extraction_id, owner_id, before)).rowcount
        return changed == 1

    def stale_unfinished(self, quiet_for: float) -> list[str]:
        """Unfinished extractions whose latest status is older than `quiet_for` seconds."""
        rows = self._all(
            "SELECT e.extraction_id FROM extractions e CROSS JOIN LATERAL (SELECT t.ts"
            " FROM statuses t WHERE t.extraction_id = e.extraction_id"
            " ORDER BY t.seq DESC LIMIT 1) s WHERE NOT e.finished AND s.ts < %s",
            time.time() - quiet_for)
        return [r["extraction_id"] for r in rows]

    def unfinished(self) -> list[str]:
        """Extractions whose latest status is not final (running when the service stopped)."""
        return [r["extraction_id"] for r in
                self._all("SELECT extraction_id FROM extractions WHERE NOT finished")]


def _findable(key: str) -> bool:
    """Whether a row could have this key: PostgreSQL text holds no NUL character (SQLite's
    does), and a query with one fails instead of finding nothing."""
    return "\x00" not in key


def _text(value: str) -> str:
    """Text from a request as PostgreSQL can store it: NUL, which its text type cannot
    hold, becomes U+FFFD (the names the vault keeps are cleaned of control characters
    already; a doctype is kept as sent)."""
    return value.replace("\x00", "\ufffd")


def write_extraction(db: Conn, info: dict[str, Any], *, delete_after_first_fetch: bool
                     ) -> None:
    """`PgStore.add_extraction` inside the caller's transaction ``db``."""
    db.execute(
        "INSERT INTO extractions (extraction_id, info_json, owner_id,"
        " delete_after_first_fetch, saved) VALUES (%s, %s, %s, %s, %s)",
        (info["extraction_id"], json.dumps(info), info["trigger_user_id"],
         delete_after_first_fetch, bool(info["extracted_data_saved"])))
    insert_statuses(db, info["extraction_id"],
                    [(StatusType.NOT_STARTED, "", info["trigger_unix_timestamp"])])


def write_finish(db: Conn, extraction_id: str, data: dict[str, Any] | None,
                 usage: dict[str, Any], stages: list[tuple[str, float]],
                 ids: list[str] | None = None) -> bool:
    """`PgStore.finish` inside the caller's transaction ``db`` (``ids``: the statuses'
    own, when the caller chose them)."""
    if not lock_unfinished(db, extraction_id):
        return False
    if data is not None:
        db.execute("INSERT INTO results VALUES (%s, %s) ON CONFLICT (extraction_id)"
                   " DO UPDATE SET data_json = excluded.data_json",
                   (extraction_id, json.dumps(data)))
    db.execute("UPDATE extractions SET usage_json = %s, data_state = %s, finished = %s"
               " WHERE extraction_id = %s",
               (json.dumps(usage), "present" if data is not None else "none",
                any(s in FINAL_STATUSES for s, _ in stages), extraction_id))
    insert_statuses(db, extraction_id, [(s, "", ts) for s, ts in stages], ids)
    return True


def write_statuses(db: Conn, extraction_id: str,
                   stages: list[tuple[str, str, float | None]],
                   ids: list[str] | None = None) -> bool:
    """`PgStore.add_statuses` inside the caller's transaction ``db`` (``ids`` as in
    `write_finish`)."""
    if not lock_unfinished(db, extraction_id):
        return False
    insert_statuses(db, extraction_id, stages, ids)
    if any(s[0] in FINAL_STATUSES for s in stages):
        db.execute("UPDATE extractions SET finished = true WHERE extraction_id = %s",
                   (extraction_id,))
    return True


def lock_unfinished(db: Conn, extraction_id: str) -> bool:
    """Lock the extraction's row for this transaction; whether it exists and is unfinished.

    Final statuses are terminal: a worker left over from a stopped service must not revive
    an extraction that recovery has already marked ``error``.
    """
    row = db.execute("SELECT finished FROM extractions WHERE extraction_id = %s FOR UPDATE",
                     (extraction_id,)).fetchone()
    return row is not None and not row["finished"]


def insert_statuses(db: Conn, extraction_id: str,
                    stages: list[tuple[str, str, float | None]],
                    ids: list[str] | None = None) -> None:
    with db.cursor() as cur:
        cur.executemany(
            "INSERT INTO statuses (id, extraction_id, status_type, message, ts)"
            " VALUES (%s, %s, %s, %s, %s)",
            [(status_id, extraction_id, str(status_type), _text(message),
              time.time() if ts is None else ts) for status_id, (status_type, message, ts)
             in zip(ids or [new_id() for _ in stages], stages, strict=True)])
