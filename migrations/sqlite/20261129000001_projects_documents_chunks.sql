-- Projects own a corpus and everything derived from it; deleting a project
-- deletes what it owns (foreign keys are on for every connection).
CREATE TABLE projects (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    created_at    TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    chunk_tokens  INTEGER NOT NULL DEFAULT 1200,
    chunk_overlap INTEGER NOT NULL DEFAULT 100,
    tokenizer     TEXT    NOT NULL DEFAULT 'cl100k_base'
);

CREATE TABLE documents (
    id           INTEGER PRIMARY KEY,
    project_id   INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    title        TEXT    NOT NULL,
    source       TEXT    NOT NULL,
    body         TEXT    NOT NULL,
    metadata     TEXT    NOT NULL DEFAULT '{}',
    content_hash TEXT    NOT NULL,
    chars        INTEGER NOT NULL,
    tokens       INTEGER NOT NULL,
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    UNIQUE (project_id, content_hash)
);
CREATE INDEX documents_project ON documents(project_id);

-- Chunks keep their byte range in the document body; `body` repeats that
-- slice so later stages (extraction, retrieval) read a chunk in one row.
CREATE TABLE chunks (
    id          INTEGER PRIMARY KEY,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    start_byte  INTEGER NOT NULL,
    end_byte    INTEGER NOT NULL,
    tokens      INTEGER NOT NULL,
    body        TEXT    NOT NULL,
    UNIQUE (document_id, idx)
);
CREATE INDEX chunks_project ON chunks(project_id);
