-- Evaluations: a question set's answer sets compared in pairs by a judge
-- under the unbiased protocol, the legacy one, or both. The judgments are
-- the evaluation job's items (one per aligned pair, per question and
-- trial, per legacy verdict); the report is computed from them.
CREATE TABLE evaluations (
    id              INTEGER PRIMARY KEY,
    project_id      INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    question_set_id INTEGER NOT NULL REFERENCES question_sets(id) ON DELETE CASCADE,
    job_id          INTEGER REFERENCES jobs(id) ON DELETE SET NULL,
    name            TEXT    NOT NULL,
    -- engine::judge::eval::Settings as JSON
    settings        TEXT    NOT NULL,
    -- the compared answer sets, and the pairs judged: JSON [[a, b], ...]
    answer_sets     TEXT    NOT NULL,
    pairs           TEXT    NOT NULL,
    -- who judged, as the report states it ("offline rubric (no LLM)", ...)
    judge           TEXT    NOT NULL,
    created_at      TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX evaluations_project ON evaluations(project_id);
