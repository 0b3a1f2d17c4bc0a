-- Characters of retrieved text an answer was given (#46): an answer set
-- whose answers rest on little or none is flagged on the Answers page,
-- in the cost table and in the report. NULL: not known (an imported file
-- or a service that reported no contexts). Existing answers are measured
-- here from their stored contexts.
ALTER TABLE answers ADD COLUMN context_chars INTEGER;
UPDATE answers SET context_chars = (
    SELECT COALESCE(SUM(length(json_extract(j.value, '$.text'))), 0) FROM json_each(answers.contexts) j)
WHERE contexts <> '[]'
   OR answer_set_id IN (SELECT id FROM answer_sets
                        WHERE method NOT IN ('imported', 'http', 'lightrag-server', 'ms-graphrag'));
