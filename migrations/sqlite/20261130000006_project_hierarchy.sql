-- A project's own question-category hierarchy (seed 004), as JSON in the
-- layout of engine/data/hierarchy.json; NULL: the shipped default.
ALTER TABLE projects ADD COLUMN question_hierarchy TEXT;
