-- A reply cut by max_tokens (finish_reason "length") is recorded as such,
-- in the call log and in the cache (a cached reply stays cut).
ALTER TABLE llm_calls ADD COLUMN truncated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE llm_cache ADD COLUMN truncated INTEGER NOT NULL DEFAULT 0;
-- An answer whose reply was cut at its budget says so on the Answers page.
ALTER TABLE answers ADD COLUMN truncated INTEGER NOT NULL DEFAULT 0;
