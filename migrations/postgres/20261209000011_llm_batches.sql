-- As migrations/sqlite/20261209000031_llm_batches.sql.
CREATE TABLE llm_batches (
    job_id   BIGINT  NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    batch_id TEXT    NOT NULL,
    requests TEXT    NOT NULL,
    read     BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (job_id, batch_id)
);
