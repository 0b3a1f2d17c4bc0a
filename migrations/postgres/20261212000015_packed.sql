-- Long text stored compressed (issue #45: an offline seed-000 run's
-- database was half of it): a job item's result, a distinct prompt and an
-- answer's retrieved context longer than 512 bytes are kept as a zstd
-- frame in the `_z` column, the text column then NULL (results) or empty
-- (prompts, contexts). Older rows keep their text; readers take whichever
-- is set (app::ssr::store::packed).
ALTER TABLE job_items ADD COLUMN result_z BYTEA;
ALTER TABLE llm_messages ADD COLUMN messages_z BYTEA;
ALTER TABLE answers ADD COLUMN contexts_z BYTEA;
