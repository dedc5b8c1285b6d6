-- Crons: a schedule plus the run payload it creates. `next_run_date` is the one due time; the
-- scheduler of any replica claims a due row FOR UPDATE SKIP LOCKED, creates the run and moves
-- `next_run_date` on in the same transaction, so each due time yields exactly one run.
CREATE TABLE crons (
  cron_id uuid PRIMARY KEY,
  assistant_id uuid NOT NULL REFERENCES assistants ON DELETE CASCADE,
  -- NULL for a stateless cron (a new thread per firing).
  thread_id uuid REFERENCES threads ON DELETE CASCADE,
  user_id text,
  schedule text NOT NULL,
  timezone text,
  end_time timestamptz,
  enabled boolean NOT NULL DEFAULT true,
  on_run_completed text CHECK (on_run_completed IN ('delete', 'keep')),
  payload jsonb NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  -- NULL once the schedule has no time left before `end_time`.
  next_run_date timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX crons_due_idx ON crons (next_run_date) WHERE enabled AND next_run_date IS NOT NULL;
CREATE INDEX crons_assistant_idx ON crons (assistant_id);
CREATE INDEX crons_thread_idx ON crons (thread_id);
CREATE INDEX crons_created_at_idx ON crons (created_at DESC, cron_id);
CREATE INDEX crons_metadata_idx ON crons USING gin (metadata jsonb_path_ops);
