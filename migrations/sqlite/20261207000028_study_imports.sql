-- A study imported from another team's annotations (the HieraRAG
-- authors' human judging): what was read, as JSON, so the figures their
-- scripts compute are recomputed from it on every view; NULL for a study
-- raters took in Assay.
ALTER TABLE studies ADD COLUMN imported TEXT;
