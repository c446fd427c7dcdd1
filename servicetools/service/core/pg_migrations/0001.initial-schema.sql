-- The service's tables on PostgreSQL, applied by yoyo-migrations (store_postgres.upgrade_schema).
-- The same rows as SQLite's (store_sqlite.py), with three differences:
--   * the extracted data is a table of this database, written in the same transaction
--     as the status that makes it readable (SQLite keeps it in a second file, to spare
--     other writers its one write lock; PostgreSQL locks rows, not the database);
--   * extractions.finished is set with the final status, so the status writes' check
--     ("not after a final status") is one locked row, and the unfinished extractions
--     (recovery, the watchdog) are found through a partial index, not the history;
--   * statuses.seq is an identity column (SQLite's AUTOINCREMENT).
CREATE TABLE users (
    id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, created DOUBLE PRECISION NOT NULL);

CREATE TABLE api_keys (
    hash TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id),
    prefix TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, revoked DOUBLE PRECISION);
CREATE INDEX api_keys_user ON api_keys(user_id);

CREATE TABLE documents (
    document_id TEXT PRIMARY KEY, owner_id TEXT NOT NULL, document_name TEXT NOT NULL,
    document_type TEXT NOT NULL, content_type TEXT NOT NULL, num_pages INTEGER NOT NULL,
    -- sha256: the vault's key of the file (vault.object_key), as in SQLite
    size BIGINT NOT NULL, sha256 TEXT NOT NULL, upload_ts DOUBLE PRECISION NOT NULL);
CREATE INDEX documents_owner ON documents(owner_id, upload_ts, document_id);

CREATE TABLE extractions (
    extraction_id TEXT PRIMARY KEY, info_json TEXT NOT NULL, owner_id TEXT NOT NULL,
    delete_after_first_fetch BOOLEAN NOT NULL, saved BOOLEAN NOT NULL,
    -- pending: not finished; present: stored; deleted: fetched once (D6); none: not saved
    data_state TEXT NOT NULL DEFAULT 'pending'
        CHECK (data_state IN ('pending', 'present', 'deleted', 'none')),
    usage_json TEXT,
    finished BOOLEAN NOT NULL DEFAULT false);
CREATE INDEX extractions_owner ON extractions(owner_id);
CREATE INDEX extractions_open ON extractions(extraction_id) WHERE NOT finished;

CREATE TABLE statuses (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id TEXT NOT NULL UNIQUE,
    extraction_id TEXT NOT NULL REFERENCES extractions(extraction_id),
    status_type TEXT NOT NULL, message TEXT NOT NULL, ts DOUBLE PRECISION NOT NULL);
-- The latest status of an extraction: the last entry of its part of this index.
CREATE INDEX statuses_extraction ON statuses(extraction_id, seq);

CREATE TABLE results (
    extraction_id TEXT PRIMARY KEY REFERENCES extractions(extraction_id),
    data_json TEXT NOT NULL);
