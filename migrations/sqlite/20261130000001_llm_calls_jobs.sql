-- The LLM cache: one reply per content address (see engine::llm::cache_key;
-- the address includes the request's `sample` index).
CREATE TABLE llm_cache (
    key               TEXT    PRIMARY KEY,
    provider          TEXT    NOT NULL,
    model             TEXT    NOT NULL,
    reply             TEXT    NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at        TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- Background jobs: a stage's run over many items (extraction, questions,
-- answers, judging).
CREATE TABLE jobs (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER REFERENCES projects(id) ON DELETE CASCADE,
    kind        TEXT    NOT NULL,
    parameters  TEXT    NOT NULL DEFAULT '{}',
    -- queued | running | done | failed | cancelled | interrupted
    status      TEXT    NOT NULL DEFAULT 'queued',
    total       INTEGER NOT NULL DEFAULT 0,
    done        INTEGER NOT NULL DEFAULT 0,
    failed      INTEGER NOT NULL DEFAULT 0,
    tokens      INTEGER NOT NULL DEFAULT 0,
    cost_usd    REAL    NOT NULL DEFAULT 0,
    error       TEXT,
    created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    started_at  TEXT,
    finished_at TEXT,
    -- While running: the runner's process id and its last sign of life, so
    -- a job whose process died is shown as interrupted.
    runner_pid  INTEGER,
    heartbeat   TEXT
);
CREATE INDEX jobs_project ON jobs(project_id, id);

-- One row per finished item of a job (done or failed).
CREATE TABLE job_items (
    job_id      INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    key         TEXT    NOT NULL,
    status      TEXT    NOT NULL,  -- done | failed
    result      TEXT,
    error       TEXT,
    tokens      INTEGER NOT NULL,
    cost_usd    REAL    NOT NULL,
    finished_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (job_id, key)
);

-- Every LLM call, cached or not, succeeded or failed.
CREATE TABLE llm_calls (
    id                INTEGER PRIMARY KEY,
    job_id            INTEGER REFERENCES jobs(id) ON DELETE CASCADE,
    item              TEXT,
    purpose           TEXT    NOT NULL,
    provider          TEXT    NOT NULL,
    base_url          TEXT    NOT NULL,
    model             TEXT    NOT NULL,
    sample            INTEGER NOT NULL,
    cache_key         TEXT    NOT NULL,
    prompt_hash       TEXT,
    messages          TEXT    NOT NULL,
    reply             TEXT,
    error             TEXT,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_usd          REAL    NOT NULL,
    latency_ms        INTEGER NOT NULL,
    attempts          INTEGER NOT NULL,
    cached            INTEGER NOT NULL,
    created_at        TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX llm_calls_job ON llm_calls(job_id, item);

-- Settings saved from the web interface (JSON values by key). `llm` holds
-- the provider configuration, including an API key when one was entered in
-- the browser: the database file must be protected like the key itself.
CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
