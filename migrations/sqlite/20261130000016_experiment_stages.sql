-- Experiment manifests' stages already computed (app::experiment): per
-- project, a stage's fingerprint (its kind, settings and inputs as JSON)
-- and what it made, so a re-run reuses it instead of running its job again.
CREATE TABLE experiment_stages (
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    fingerprint TEXT    NOT NULL,
    object_id   INTEGER NOT NULL,
    job_id      INTEGER REFERENCES jobs(id) ON DELETE SET NULL,
    created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (project_id, fingerprint)
);
