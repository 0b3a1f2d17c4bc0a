-- A job's runs (#46). `retrying`: the current run retries failed items,
-- so every process working on it (a worker that joins on a shared
-- database) asks the model again instead of reading the cache.
-- `worked_secs`: wall time of the runs that ended; `run_started_at`: when
-- the current (or last, unended) run began. A job's elapsed time is the
-- work, not the time between a run and its resumption.
ALTER TABLE jobs ADD COLUMN retrying INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN worked_secs REAL NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN run_started_at TEXT;
UPDATE jobs SET worked_secs = MAX((julianday(finished_at) - julianday(started_at)) * 86400.0, 0)
 WHERE finished_at IS NOT NULL AND started_at IS NOT NULL;
UPDATE jobs SET run_started_at = started_at WHERE finished_at IS NULL AND started_at IS NOT NULL;
