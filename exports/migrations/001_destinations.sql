-- Bulk export destinations: where a workspace's exports write. The credentials are one AES-256-GCM
-- sealed JSON object; credentials_key_id names the key that sealed it, so keys rotate while old
-- rows stay readable. Only the names of the stored fields are kept in clear, for responses.
CREATE TABLE bulk_export_destinations (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL,
  destination_type text NOT NULL,
  display_name text NOT NULL,
  config jsonb NOT NULL,
  credentials_key_id text,
  credentials_sealed bytea,
  credentials_keys text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((credentials_key_id IS NULL) = (credentials_sealed IS NULL))
);
CREATE INDEX bulk_export_destinations_tenant ON bulk_export_destinations (tenant_id, created_at);
