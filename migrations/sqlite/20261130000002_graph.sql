-- A project's knowledge graph, replaced whole by each finished graph job.
-- source_chunks: JSON arrays of chunk ids (provenance).
CREATE TABLE graph_nodes (
    id            INTEGER PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    job_id        INTEGER REFERENCES jobs(id) ON DELETE SET NULL,
    key           TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    type          TEXT    NOT NULL,
    description   TEXT    NOT NULL,
    source_chunks TEXT    NOT NULL,
    -- Leiden community (seeded), numbered by size: 0 is the largest.
    community     INTEGER NOT NULL DEFAULT 0,
    UNIQUE (project_id, key)
);

CREATE TABLE graph_edges (
    id            INTEGER PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    source_id     INTEGER NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
    target_id     INTEGER NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
    description   TEXT    NOT NULL,
    keywords      TEXT    NOT NULL,
    weight        REAL    NOT NULL,
    source_chunks TEXT    NOT NULL,
    UNIQUE (project_id, source_id, target_id)
);
CREATE INDEX graph_edges_project ON graph_edges(project_id);
