-- As migrations/sqlite/20261207000028_study_imports.sql.
ALTER TABLE studies ADD COLUMN imported TEXT;
