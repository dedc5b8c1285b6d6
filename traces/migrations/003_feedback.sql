-- Feedback on traced runs (LangSmith's feedback), per workspace. A run's feedback goes with the
-- run at retention (the sweep deletes both); run_id is not a foreign key because runs live in
-- day partitions keyed by start_time, and feedback may arrive before its run (SDK batching).
CREATE TABLE trace_feedback (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  run_id uuid NOT NULL,
  trace_id uuid,
  session_id uuid,
  key text NOT NULL,
  -- A boolean score is stored as 1 or 0.
  score double precision,
  value jsonb,
  comment text,
  correction jsonb,
  feedback_source jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  modified_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);
-- Reads by run (feedback_stats of run reads, listFeedback); the sweep's cleanup by the time the
-- store last wrote a feedback (created_at is the client's to set).
CREATE INDEX trace_feedback_run ON trace_feedback (tenant_id, run_id, key);
CREATE INDEX trace_feedback_modified ON trace_feedback (modified_at);

-- Presigned feedback tokens: whoever holds one may record feedback of one key on one run, without
-- an API key, until it expires. The id is the secret (random, looked up without a tenant).
CREATE TABLE trace_feedback_tokens (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL,
  run_id uuid NOT NULL,
  feedback_key text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX trace_feedback_tokens_expires ON trace_feedback_tokens (expires_at);
CREATE INDEX trace_feedback_tokens_run ON trace_feedback_tokens (tenant_id, run_id);
