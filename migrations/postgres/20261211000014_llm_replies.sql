-- A free call's reply (the offline provider's, the simulated judge's) is
-- stored once by the SHA-256 of its text: such replies are made again, not
-- cached, and repeat — an offline judge answers a trial's 25 repeats of
-- one order alike — so writing each whole per call was a third of an
-- offline seed-000 run's call log. Such calls also keep no cache key (no
-- cache is read for them). Paid replies stay inline, as do older rows.
CREATE TABLE llm_replies (
    hash  TEXT PRIMARY KEY,
    reply TEXT NOT NULL
);
ALTER TABLE llm_calls ADD COLUMN reply_hash TEXT;
