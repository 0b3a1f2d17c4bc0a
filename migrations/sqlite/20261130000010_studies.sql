-- Human studies: raters score a sample of generated questions on Likert
-- dimensions (seed 000 §V-C) at a link, with no account.
CREATE TABLE studies (
    id             INTEGER PRIMARY KEY,
    project_id     INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name           TEXT    NOT NULL,
    intro          TEXT    NOT NULL DEFAULT '',
    corpus_summary TEXT    NOT NULL DEFAULT '',
    -- engine::study::Dimension list as JSON
    dimensions     TEXT    NOT NULL,
    -- what was drawn: JSON [{"set_id", "count"}], and the draw's seed
    draws          TEXT    NOT NULL,
    seed           INTEGER NOT NULL,
    target_raters  INTEGER,
    is_open        INTEGER NOT NULL DEFAULT 1,
    created_at     TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX studies_project ON studies(project_id);

-- The items every rater sees (in an order of their own): drawn questions
-- (their text copied, so editing the set later does not change the study)
-- and attention checks (with the score they ask for).
CREATE TABLE study_items (
    id          INTEGER PRIMARY KEY,
    study_id    INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    question_id INTEGER REFERENCES questions(id) ON DELETE SET NULL,
    text        TEXT    NOT NULL,
    source      TEXT    NOT NULL,
    level       TEXT,
    attention   INTEGER
);
CREATE INDEX study_items_study ON study_items(study_id, idx);

-- Links raters open. Tokens are random (192 bits) and stored as SHA-256
-- hashes. 'open': one link for everyone, a rater per browser; 'rater': one
-- rater's own link.
CREATE TABLE study_links (
    id         INTEGER PRIMARY KEY,
    study_id   INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
    token_hash TEXT    NOT NULL UNIQUE,
    kind       TEXT    NOT NULL,
    label      TEXT,
    revoked    INTEGER NOT NULL DEFAULT 0,
    expires_at TEXT,
    created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- One rater: a browser at an open link, or the holder of a rater link
-- (then token_hash is the link's own).
CREATE TABLE raters (
    id          INTEGER PRIMARY KEY,
    study_id    INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
    link_id     INTEGER NOT NULL REFERENCES study_links(id) ON DELETE CASCADE,
    token_hash  TEXT    NOT NULL UNIQUE,
    order_seed  INTEGER NOT NULL,
    started_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    finished_at TEXT
);
CREATE INDEX raters_study ON raters(study_id);

CREATE TABLE ratings (
    rater_id  INTEGER NOT NULL REFERENCES raters(id) ON DELETE CASCADE,
    item_id   INTEGER NOT NULL REFERENCES study_items(id) ON DELETE CASCADE,
    dimension INTEGER NOT NULL,
    score     INTEGER NOT NULL CHECK (score BETWEEN 1 AND 5),
    rated_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (rater_id, item_id, dimension)
);
