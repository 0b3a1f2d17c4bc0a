-- The chunks given to the LLM that wrote a question (issue #21), beside
-- source_chunk_ids (all the chunks its structure came from). NULL: not
-- recorded (imported questions, or generated before this column).
ALTER TABLE questions ADD COLUMN context_chunk_ids TEXT;
