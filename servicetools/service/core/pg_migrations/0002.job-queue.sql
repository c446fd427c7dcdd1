-- depends: 0001.initial-schema
-- The durable job queue (core/pgqueue.py): one row per extraction that a worker still
-- has to run, claimed with FOR UPDATE SKIP LOCKED under a lease.
--   * lease_id changes at every claim: a worker's writes name the lease it was given, so
--     one whose lease was taken over (it stalled, or was thought dead) is refused;
--   * lease_expires is the database's clock, not a worker's: machines need not agree on
--     the time, and "expired" means the same thing to every claimer;
--   * a row leaves the queue in the transaction that writes its extraction's final
--     status; a synchronous trigger's row stays as 'done' with the reply until the API
--     process waiting for it takes it (the data of save_extraction=false goes nowhere
--     else).
CREATE TABLE jobs (
    extraction_id TEXT PRIMARY KEY REFERENCES extractions(extraction_id),
    job_json TEXT NOT NULL,
    -- raw input that is not in the vault (save_extraction=false): the worker needs it
    data BYTEA,
    sync BOOLEAN NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done')),
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL CHECK (max_attempts > 0),
    lease_id TEXT,
    lease_owner TEXT,
    lease_expires TIMESTAMPTZ,
    enqueued TIMESTAMPTZ NOT NULL DEFAULT now(),
    done TIMESTAMPTZ,
    reply_json TEXT);
-- What a claimer scans: the open jobs, oldest first.
CREATE INDEX jobs_open ON jobs(enqueued) WHERE state <> 'done';

-- Extractions left running by a service from before the queue have no job, so nothing
-- would ever finish them: they end as that service's own recovery would have ended them.
INSERT INTO statuses (id, extraction_id, status_type, message, ts)
    SELECT md5(random()::text || extraction_id), extraction_id, 'error',
           'interrupted: the service stopped before this extraction finished; trigger it again',
           extract(epoch FROM now())
    FROM extractions WHERE NOT finished;
UPDATE extractions SET finished = true WHERE NOT finished;
