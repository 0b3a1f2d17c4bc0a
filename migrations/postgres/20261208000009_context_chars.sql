-- As migrations/sqlite/20261208000029_context_chars.sql.
ALTER TABLE answers ADD COLUMN context_chars BIGINT;
UPDATE answers SET context_chars = (
    SELECT COALESCE(SUM(length(e->>'text')), 0) FROM jsonb_array_elements(answers.contexts::jsonb) e)
WHERE contexts <> '[]'
   OR answer_set_id IN (SELECT id FROM answer_sets
                        WHERE method NOT IN ('imported', 'http', 'lightrag-server', 'ms-graphrag'));
