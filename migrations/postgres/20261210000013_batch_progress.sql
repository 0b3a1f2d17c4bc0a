-- A batch's progress as the provider last reported it (the job page shows it).
ALTER TABLE llm_batches ADD COLUMN status TEXT NOT NULL DEFAULT 'validating';
ALTER TABLE llm_batches ADD COLUMN completed BIGINT NOT NULL DEFAULT 0;
ALTER TABLE llm_batches ADD COLUMN failed BIGINT NOT NULL DEFAULT 0;
ALTER TABLE llm_batches ADD COLUMN total BIGINT NOT NULL DEFAULT 0;
