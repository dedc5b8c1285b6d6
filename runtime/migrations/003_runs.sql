-- Runs are the queue: a pending row is work, a running row is leased by one worker.
CREATE TABLE runs (
  run_id uuid PRIMARY KEY,
  thread_id uuid NOT NULL REFERENCES threads ON DELETE CASCADE,
  assistant_id uuid NOT NULL,
  -- Includes `after_seconds`: a run is claimable once created_at has passed.
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'running', 'success', 'error', 'timeout', 'interrupted')),
  metadata jsonb NOT NULL DEFAULT '{}',
  kwargs jsonb NOT NULL DEFAULT '{}',
  multitask_strategy text NOT NULL DEFAULT 'enqueue',
  attempt integer NOT NULL DEFAULT 0,
  worker_id text,
  lease_expires_at timestamptz,
  cancel_action text CHECK (cancel_action IN ('interrupt', 'rollback')),
  run_started_at timestamptz,
  run_ended_at timestamptz,
  error jsonb
);
CREATE INDEX runs_pending_idx ON runs (created_at) WHERE status = 'pending';
CREATE INDEX runs_thread_idx ON runs (thread_id, created_at DESC);
CREATE INDEX runs_lease_idx ON runs (lease_expires_at) WHERE status = 'running';
-- At most one running run per thread, whatever races between workers.
CREATE UNIQUE INDEX runs_one_running_per_thread ON runs (thread_id) WHERE status = 'running';

-- Every stream event of a run, in order: replay for joins and Last-Event-ID, on any replica.
-- No foreign key: a stateless run's thread (and so the run) is deleted when it ends, while its
-- readers may still be catching up; events expire by age instead.
CREATE TABLE run_events (
  run_id uuid NOT NULL,
  seq integer NOT NULL,
  event text NOT NULL,
  data jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX run_events_created_at_idx ON run_events (created_at);
