-- The deployment's LLM budget (PostgreSQL deployments with several
-- processes): one row per request that may be in flight at once, leased by
-- a process for a while and renewed while it uses it; a lease past its
-- expiry is free again (its process died). SQLite's single process keeps
-- its limit in memory and leaves this empty.
CREATE TABLE llm_slots (
    slot       INTEGER PRIMARY KEY,
    holder     TEXT,
    expires_at TEXT
);
