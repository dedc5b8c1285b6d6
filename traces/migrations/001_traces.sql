-- The trace store: LangSmith-compatible projects (sessions) and runs, per workspace (tenant).
CREATE TABLE trace_sessions (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL,
  name text NOT NULL,
  description text,
  extra jsonb,
  reference_dataset_id uuid,
  start_time timestamptz NOT NULL DEFAULT now(),
  end_time timestamptz,
  UNIQUE (tenant_id, name)
);

-- One row per run (span), every field of LangSmith's run data format. Partitioned by day of
-- start_time (partitions are created on first use and dropped whole by retention), so the
-- primary key carries start_time; lookups by id use the (tenant_id, id) index.
CREATE TABLE trace_runs (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  session_id uuid NOT NULL,
  trace_id uuid NOT NULL,
  parent_run_id uuid,
  parent_run_ids uuid[] NOT NULL DEFAULT '{}',
  is_root boolean NOT NULL,
  dotted_order text NOT NULL,
  name text NOT NULL,
  run_type text NOT NULL,
  start_time timestamptz NOT NULL,
  end_time timestamptz,
  status text NOT NULL,
  inputs jsonb,
  outputs jsonb,
  error text,
  extra jsonb,
  events jsonb,
  tags text[] NOT NULL DEFAULT '{}',
  serialized jsonb,
  reference_example_id uuid,
  trace_tier text,
  prompt_tokens bigint,
  completion_tokens bigint,
  total_tokens bigint,
  prompt_cost numeric,
  completion_cost numeric,
  total_cost numeric,
  first_token_time timestamptz,
  -- extra.metadata.thread_id (or session_id / conversation_id), for the thread filter and view.
  thread_id text,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, start_time, id)
) PARTITION BY RANGE (start_time);
CREATE INDEX trace_runs_id ON trace_runs (tenant_id, id);
CREATE INDEX trace_runs_session ON trace_runs (tenant_id, session_id, start_time DESC);
CREATE INDEX trace_runs_trace ON trace_runs (tenant_id, trace_id, dotted_order);
CREATE INDEX trace_runs_thread ON trace_runs (tenant_id, thread_id, start_time)
  WHERE thread_id IS NOT NULL;

-- Updates that arrived before their run's create (the SDKs' batching allows it); merged into
-- the run when it arrives.
CREATE TABLE trace_pending_updates (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  seq bigserial,
  patch jsonb NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id, seq)
);

-- Per-workspace retention; workspaces without a row keep traces GRAPHDOCK_TRACES_TTL_DAYS.
CREATE TABLE trace_retention (
  tenant_id uuid PRIMARY KEY,
  ttl_days integer NOT NULL CHECK (ttl_days > 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
