-- Answer sets: one method instance's answers to one question set (made by
-- a job with a built-in method, or imported from another system), and the
-- community reports GraphRAG-style methods read.
CREATE TABLE answer_sets (
    id              INTEGER PRIMARY KEY,
    project_id      INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    question_set_id INTEGER NOT NULL REFERENCES question_sets(id) ON DELETE CASCADE,
    job_id          INTEGER REFERENCES jobs(id) ON DELETE SET NULL,
    name            TEXT    NOT NULL,
    -- bm25 | lightrag | fastgraphrag | graphrag-local | graphrag-global | imported
    method          TEXT    NOT NULL,
    parameters      TEXT    NOT NULL DEFAULT '{}',
    created_at      TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX answer_sets_project ON answer_sets(project_id);

CREATE TABLE answers (
    id                INTEGER PRIMARY KEY,
    answer_set_id     INTEGER NOT NULL REFERENCES answer_sets(id) ON DELETE CASCADE,
    question_id       INTEGER NOT NULL REFERENCES questions(id) ON DELETE CASCADE,
    answer            TEXT    NOT NULL,
    -- the retrieved context: a JSON list of {kind, id, score, text}
    contexts          TEXT    NOT NULL DEFAULT '[]',
    -- accounting; NULL when an imported file did not say
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    cost_usd          REAL,
    llm_calls         INTEGER,
    cached_calls      INTEGER,
    retrieval_ms      REAL,
    query_ms          REAL,
    target_words      INTEGER,
    UNIQUE (answer_set_id, question_id)
);
CREATE INDEX answers_question ON answers(question_id);

CREATE TABLE community_reports (
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    community  INTEGER NOT NULL,
    job_id     INTEGER REFERENCES jobs(id) ON DELETE SET NULL,
    title      TEXT    NOT NULL,
    summary    TEXT    NOT NULL,
    rating     REAL    NOT NULL,
    PRIMARY KEY (project_id, community)
);
