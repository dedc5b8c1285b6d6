-- The webhook outbox: one row per finished run that asked for a webhook, written in the same
-- transaction that finished the run. No foreign key to runs: a stateless run's row disappears
-- with its temporary thread, while its webhook must still go out (the body is `run`).
CREATE TABLE webhook_deliveries (
  delivery_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  run_id uuid NOT NULL UNIQUE,
  thread_id uuid NOT NULL,
  url text NOT NULL,
  run jsonb NOT NULL,
  stateful boolean NOT NULL,
  status text NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'delivering', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  lease_expires_at timestamptz,
  last_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  delivered_at timestamptz
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
  WHERE status = 'pending';
CREATE INDEX webhook_deliveries_lease_idx ON webhook_deliveries (lease_expires_at)
  WHERE status = 'delivering';

-- Every attempt, for debugging: what the receiver answered and how long it took.
CREATE TABLE webhook_attempts (
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries ON DELETE CASCADE,
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  status_code integer,
  latency_ms double precision NOT NULL,
  error text,
  PRIMARY KEY (delivery_id, attempt)
);
