-- Prompt tokens the provider read from its prefix cache (its usage's
-- prompt_tokens_details.cached_tokens), priced at its cached-input rate.
ALTER TABLE llm_calls ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
