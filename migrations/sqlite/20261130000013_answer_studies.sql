-- Answer-validation studies (seed 004 §2.5): raters read a question, an
-- answer (a reference answer or a method's) and the source passage, rate
-- correctness 0–3, hallucination 0–2 and answerability 0–3, and pick the
-- question's category among its level's categories.
ALTER TABLE studies ADD COLUMN kind TEXT NOT NULL DEFAULT 'questions';
-- Where the answers came from: 'reference', or 'answers:ID' (an answer set).
ALTER TABLE studies ADD COLUMN answer_source TEXT;

ALTER TABLE study_items ADD COLUMN answer TEXT;
-- The source passage raters judge against.
ALTER TABLE study_items ADD COLUMN context TEXT;
-- The generator's category path, and the choices offered: JSON
-- [{"path", "definition"}].
ALTER TABLE study_items ADD COLUMN category TEXT;
ALTER TABLE study_items ADD COLUMN choices TEXT;

-- Scales may start at 0 now, and a category pick is stored as the index of
-- the choice: the 1–5 check becomes 0–20 (each dimension's own range is
-- checked by app::study before anything is stored).
CREATE TABLE ratings_new (
    rater_id  INTEGER NOT NULL REFERENCES raters(id) ON DELETE CASCADE,
    item_id   INTEGER NOT NULL REFERENCES study_items(id) ON DELETE CASCADE,
    dimension INTEGER NOT NULL,
    score     INTEGER NOT NULL CHECK (score BETWEEN 0 AND 20),
    rated_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (rater_id, item_id, dimension)
);
INSERT INTO ratings_new (rater_id, item_id, dimension, score, rated_at)
    SELECT rater_id, item_id, dimension, score, rated_at FROM ratings;
DROP TABLE ratings;
ALTER TABLE ratings_new RENAME TO ratings;
