-- A job's secrets (a method's bearer token, an API key in its body
-- template), stored apart from the parameters every reader of the job
-- sees, which hold their redactions (engine::secret). Only the runner
-- reads this column.
ALTER TABLE jobs ADD COLUMN secrets TEXT;
