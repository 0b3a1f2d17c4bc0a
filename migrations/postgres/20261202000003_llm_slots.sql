-- As migrations/sqlite/20261202000023_llm_slots.sql.
CREATE TABLE llm_slots (
    slot       BIGINT PRIMARY KEY,
    holder     TEXT,
    expires_at TEXT COLLATE "C"
);
