-- Passages a benchmark file says answer the question (GraphRAG-Bench's
-- `evidence`, MultiHop-RAG's `evidence_list` facts; issue #41), as a JSON
-- list; NULL where the question has none. Exported again for the
-- benchmark's own evaluators.
ALTER TABLE questions ADD COLUMN evidence TEXT;
