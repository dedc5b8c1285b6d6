-- Attempts of a run handed back by a graceful shutdown (BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS ran
-- out): `attempt - handed_back` is the number of attempts whose worker died, which
-- BG_JOB_MAX_ATTEMPTS bounds. A planned restart never fails a run.
ALTER TABLE runs ADD COLUMN handed_back integer NOT NULL DEFAULT 0;
