-- Bulk exports of a project's runs to a destination, and their runs: one per day partition.
-- Statuses are stored as they go on the wire (PascalCase).
CREATE TABLE bulk_exports (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL,
  bulk_export_destination_id uuid NOT NULL,
  session_id uuid NOT NULL,
  start_time timestamptz NOT NULL,
  end_time timestamptz,
  filter text,
  format text NOT NULL DEFAULT 'Parquet',
  compression text NOT NULL,
  interval_hours integer CHECK (interval_hours BETWEEN 1 AND 168),
  export_fields text[],
  status text NOT NULL,
  source_bulk_export_id uuid REFERENCES bulk_exports (id) ON DELETE SET NULL,
  -- Scheduled exports: the start of the next window to spawn.
  next_window_start timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX bulk_exports_tenant ON bulk_exports (tenant_id, created_at DESC);
CREATE INDEX bulk_exports_scheduled ON bulk_exports (next_window_start)
  WHERE status = 'IntervalScheduled';
CREATE INDEX bulk_exports_source ON bulk_exports (source_bulk_export_id)
  WHERE source_bulk_export_id IS NOT NULL;

-- Progress is committed only after an object is uploaded and verified: `cursor` is the keyset
-- position (start_time micros, run id) of the last row in a verified file, `files` the objects
-- so far. A retry starts again from `cursor` and rewrites the same file name, never a second one.
CREATE TABLE bulk_export_runs (
  id uuid PRIMARY KEY,
  bulk_export_id uuid NOT NULL REFERENCES bulk_exports (id) ON DELETE CASCADE,
  tenant_id uuid NOT NULL,
  start_time timestamptz NOT NULL,
  end_time timestamptz NOT NULL,
  status text NOT NULL,
  retry_number integer NOT NULL DEFAULT 0,
  errors jsonb NOT NULL DEFAULT '{}',
  cursor text,
  rows_written bigint NOT NULL DEFAULT 0,
  files text[] NOT NULL DEFAULT '{}',
  pending_upload jsonb,
  -- The executor holding the run (a Job pod or an in-process worker) until lease_until.
  claimed_by text,
  lease_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  UNIQUE (bulk_export_id, start_time)
);
CREATE INDEX bulk_export_runs_export ON bulk_export_runs (bulk_export_id, start_time);
CREATE INDEX bulk_export_runs_ready ON bulk_export_runs (created_at)
  WHERE status IN ('Created', 'Running');
