-- Tenancy of the control plane: organizations (with a plan) own workspaces; API keys belong to a
-- workspace and are stored only as SHA-256 digests.
CREATE TABLE cp_organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  plan text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE cp_workspaces (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES cp_organizations (id) ON DELETE CASCADE,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cp_workspaces_organization ON cp_workspaces (organization_id);

CREATE TABLE cp_api_keys (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES cp_workspaces (id) ON DELETE CASCADE,
  key_digest bytea NOT NULL UNIQUE,
  -- The first characters, so an operator can tell keys apart without seeing them.
  key_prefix text NOT NULL,
  permissions text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
