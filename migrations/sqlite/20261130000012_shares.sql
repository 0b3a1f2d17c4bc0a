-- Read-only share links to one report page: an evaluation's report or a
-- study's results. Tokens are random (192 bits) and stored as SHA-256 hashes;
-- a withdrawn or expired link answers 404.
CREATE TABLE shares (
    id         INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    token_hash TEXT    NOT NULL UNIQUE,
    -- 'evaluation' | 'study'
    page_kind  TEXT    NOT NULL,
    page_id    INTEGER NOT NULL,
    revoked    INTEGER NOT NULL DEFAULT 0,
    expires_at TEXT,
    created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX shares_project ON shares(project_id);
