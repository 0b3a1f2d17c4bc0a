-- As migrations/sqlite/20261202000022_job_queue.sql.
CREATE TABLE job_queue (
    job_id    BIGINT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    phase     TEXT   COLLATE "C" NOT NULL,
    key       TEXT   COLLATE "C" NOT NULL,
    seq       BIGINT NOT NULL,
    worker    TEXT,
    heartbeat TEXT   COLLATE "C",
    PRIMARY KEY (job_id, key)
);
CREATE INDEX job_queue_order ON job_queue (job_id, phase, seq);
CREATE INDEX job_queue_worker ON job_queue (worker);

CREATE TABLE job_phases (
    job_id BIGINT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    phase  TEXT   COLLATE "C" NOT NULL,
    llm    TEXT   NOT NULL,
    PRIMARY KEY (job_id, phase)
);
