-- Assistants: the current version of each, plus an append-only version log.
CREATE TABLE assistants (
  assistant_id uuid PRIMARY KEY,
  graph_id text NOT NULL,
  name text NOT NULL,
  description text,
  config jsonb NOT NULL DEFAULT '{}',
  context jsonb NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX assistants_created_at_idx ON assistants (created_at DESC, assistant_id);
CREATE INDEX assistants_graph_id_idx ON assistants (graph_id, created_at DESC);
CREATE INDEX assistants_metadata_idx ON assistants USING gin (metadata jsonb_path_ops);

CREATE TABLE assistant_versions (
  assistant_id uuid NOT NULL REFERENCES assistants ON DELETE CASCADE,
  version integer NOT NULL,
  graph_id text NOT NULL,
  name text NOT NULL,
  description text,
  config jsonb NOT NULL DEFAULT '{}',
  context jsonb NOT NULL DEFAULT '{}',
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (assistant_id, version)
);

-- Threads: the conversation container. `values` mirrors the latest checkpoint so that search
-- and listing never need to load checkpoints.
CREATE TABLE threads (
  thread_id uuid PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  state_updated_at timestamptz,
  metadata jsonb NOT NULL DEFAULT '{}',
  config jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'busy', 'interrupted', 'error')),
  "values" jsonb,
  interrupts jsonb NOT NULL DEFAULT '{}',
  error jsonb,
  ttl_minutes double precision,
  ttl_strategy text,
  expires_at timestamptz
);
CREATE INDEX threads_created_at_idx ON threads (created_at DESC, thread_id);
CREATE INDEX threads_updated_at_idx ON threads (updated_at DESC, thread_id);
CREATE INDEX threads_status_idx ON threads (status, created_at DESC);
CREATE INDEX threads_metadata_idx ON threads USING gin (metadata jsonb_path_ops);
CREATE INDEX threads_values_idx ON threads USING gin ("values" jsonb_path_ops);
CREATE INDEX threads_expires_at_idx ON threads (expires_at) WHERE expires_at IS NOT NULL;
