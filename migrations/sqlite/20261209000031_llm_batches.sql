-- The batches a job sent through the Batch API (engine::llm::batch): each
-- request's custom_id and body hash (JSON), written before anything waits
-- on the batch, `read` once its output was. A resumed job follows the
-- unread ones instead of sending their requests again.
CREATE TABLE llm_batches (
    job_id   INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    batch_id TEXT    NOT NULL,
    requests TEXT    NOT NULL,
    read     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, batch_id)
);
