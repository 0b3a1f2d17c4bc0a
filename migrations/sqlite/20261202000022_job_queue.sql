-- The items of a job that several processes run (PostgreSQL deployments,
-- `assay worker`): one row per item not yet finished, claimed by one
-- process at a time. A claim whose heartbeat is older than the timeout is
-- free again (its process died). A job runs in phases (an evaluation's
-- alignment, then its judging), each queued once: `job_phases` says which
-- were, and with which LLM (a process with another does not join).
-- SQLite's in-process runner leaves both empty.
CREATE TABLE job_queue (
    job_id    INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    phase     TEXT    NOT NULL,
    key       TEXT    NOT NULL,
    seq       INTEGER NOT NULL,
    worker    TEXT,
    heartbeat TEXT,
    PRIMARY KEY (job_id, key)
);
CREATE INDEX job_queue_order ON job_queue (job_id, phase, seq);
CREATE INDEX job_queue_worker ON job_queue (worker);

CREATE TABLE job_phases (
    job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    phase  TEXT    NOT NULL,
    llm    TEXT    NOT NULL,
    PRIMARY KEY (job_id, phase)
);
