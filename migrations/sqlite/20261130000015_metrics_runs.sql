-- Reference-based metrics runs (seed 004): a question set's answer sets
-- scored against its reference answers by a job (one item per batch of
-- questions of one answer set); the report, computed from the items when
-- the job finishes, is kept as JSON so the page, its downloads and share
-- links read it without scoring again.
CREATE TABLE metrics_runs (
    id              INTEGER PRIMARY KEY,
    project_id      INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    question_set_id INTEGER NOT NULL REFERENCES question_sets(id) ON DELETE CASCADE,
    job_id          INTEGER REFERENCES jobs(id) ON DELETE SET NULL,
    -- JSON [id, ...]
    answer_sets     TEXT    NOT NULL,
    k               INTEGER NOT NULL,
    bins            INTEGER NOT NULL,
    -- app::metrics::Report as JSON, once the job is done
    report          TEXT,
    created_at      TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX metrics_runs_project ON metrics_runs(project_id);

-- Embeddings of texts scored (answers, references), computed once per text
-- and model and reused by every later run. Keyed by the SHA-256 of the
-- text; little-endian f32s.
CREATE TABLE text_vectors (
    model  TEXT NOT NULL,
    hash   TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, hash)
);
