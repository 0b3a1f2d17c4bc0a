-- Question sets (one per generation job, or imported) and their questions,
-- each with its provenance: the sampled graph structure by node keys (keys
-- survive a rebuild of the graph better than row ids), source chunk ids,
-- prompt hash and seed.
CREATE TABLE question_sets (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    job_id      INTEGER REFERENCES jobs(id) ON DELETE SET NULL,
    -- graph | summary | hierarchical | imported
    kind        TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    parameters  TEXT    NOT NULL DEFAULT '{}',
    created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX question_sets_project ON question_sets(project_id);

CREATE TABLE questions (
    id               INTEGER PRIMARY KEY,
    set_id           INTEGER NOT NULL REFERENCES question_sets(id) ON DELETE CASCADE,
    idx              INTEGER NOT NULL,
    question         TEXT    NOT NULL,
    -- node | edge | subgraph (graph sets)
    level            TEXT,
    -- a category path such as "QC/complex/comparative_synthesis_concepts" (hierarchical sets)
    category         TEXT,
    expertise        TEXT,
    reference_answer TEXT,
    source_chunk_ids TEXT    NOT NULL DEFAULT '[]',
    nodes            TEXT    NOT NULL DEFAULT '[]',
    edges            TEXT    NOT NULL DEFAULT '[]',
    walk             TEXT    NOT NULL DEFAULT '[]',
    generator        TEXT    NOT NULL,
    prompt_hash      TEXT,
    seed             INTEGER,
    UNIQUE (set_id, idx)
);
