-- The items of a job that several processes run (PostgreSQL deployments,
-- `assay worker`): one row per item not yet finished, claimed by one
-- process at a time. A claim whose heartbeat is older than the timeout is
-- free again (its process died). SQLite's in-process runner leaves it empty.
CREATE TABLE job_queue (
    job_id    INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    key       TEXT    NOT NULL,
    seq       INTEGER NOT NULL,
    worker    TEXT,
    heartbeat TEXT,
    PRIMARY KEY (job_id, key)
);
CREATE INDEX job_queue_order ON job_queue (job_id, seq);
CREATE INDEX job_queue_worker ON job_queue (worker);
