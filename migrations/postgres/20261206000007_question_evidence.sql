-- As migrations/sqlite/20261206000027_question_evidence.sql.
ALTER TABLE questions ADD COLUMN evidence TEXT;
