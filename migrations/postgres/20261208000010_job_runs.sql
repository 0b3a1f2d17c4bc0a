-- As migrations/sqlite/20261208000030_job_runs.sql.
ALTER TABLE jobs ADD COLUMN retrying BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE jobs ADD COLUMN worked_secs DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN run_started_at TEXT;
UPDATE jobs SET worked_secs = GREATEST((julianday(finished_at) - julianday(started_at)) * 86400.0, 0)
 WHERE finished_at IS NOT NULL AND started_at IS NOT NULL;
UPDATE jobs SET run_started_at = started_at WHERE finished_at IS NULL AND started_at IS NOT NULL;
