-- Each distinct prompt stored once: judging sends the same messages many
-- times (every trial and repeat of a question in one order), and logging
-- them whole per call made an offline seed-000 experiment's database
-- 1.3 GB. New calls keep `messages` empty and point to their prompt by
-- the SHA-256 of its JSON; older rows keep theirs inline.
CREATE TABLE llm_messages (
    hash     TEXT PRIMARY KEY,
    messages TEXT NOT NULL
);
ALTER TABLE llm_calls ADD COLUMN messages_hash TEXT;
