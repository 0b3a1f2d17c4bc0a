-- As migrations/sqlite/20261205000026_foreign_chunks.sql.
ALTER TABLE chunks ADD COLUMN external_id TEXT;
CREATE INDEX chunks_external ON chunks(project_id, external_id) WHERE external_id IS NOT NULL;

-- Where a project's graph came from when it was imported: the format, the
-- version the reader recognised, the files it read and the tally that
-- accounts for every entity, relation and chunk (engine::graph::foreign::Tally).
-- Replacing the graph deletes the row.
CREATE TABLE graph_imports (
    project_id BIGINT NOT NULL PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    format     TEXT   NOT NULL,
    version    TEXT   NOT NULL,
    report     TEXT   NOT NULL,
    created_at TEXT   NOT NULL DEFAULT strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
);
