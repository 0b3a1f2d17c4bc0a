-- Experiments started in the browser (the wizard, or an imported
-- manifest): the manifest, the plan with its estimate, the stage running
-- now and its job, each finished stage's job (label → job id), and when done the outcome (app::experiment::Outcome).
CREATE TABLE experiments (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name        TEXT    NOT NULL,
    manifest    TEXT    NOT NULL,
    plan        TEXT    NOT NULL,
    llm         TEXT    NOT NULL,
    offline     INTEGER NOT NULL,
    status      TEXT    NOT NULL DEFAULT 'running',
    stage       TEXT,
    job_id      INTEGER,
    jobs        TEXT    NOT NULL DEFAULT '{}',
    outcome     TEXT,
    error       TEXT,
    created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    finished_at TEXT
);
CREATE INDEX experiments_project ON experiments (project_id);
