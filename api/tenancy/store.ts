// SQL for organizations, workspaces and API keys.
import type { Pool, PoolClient } from '../../common/db/index.js';

export interface Organization {
  id: string;
  name: string;
  plan: string;
}

export interface Workspace {
  id: string;
  organization_id: string;
  name: string;
}

/** What an authenticated request acts as. */
export interface Principal {
  keyId: string;
  workspace: Workspace;
  organization: Organization;
  permissions: string[];
}

type Queryable = Pick<Pool, 'query'> | PoolClient;

export class TenancyStore {
  constructor(private readonly pool: Pool) {}

  async insertOrganization(db: Queryable, org: Organization): Promise<void> {
    await db.query('INSERT INTO cp_organizations (id, name, plan) VALUES ($1, $2, $3)', [
      org.id,
      org.name,
      org.plan,
    ]);
  }

  async insertWorkspace(db: Queryable, ws: Workspace): Promise<void> {
    await db.query('INSERT INTO cp_workspaces (id, organization_id, name) VALUES ($1, $2, $3)', [
      ws.id,
      ws.organization_id,
      ws.name,
    ]);
  }

  /** Inserts a key unless one with the same digest exists; true when inserted. */
  async insertApiKey(
    db: Queryable,
    key: { id: string; workspaceId: string; digest: Buffer; prefix: string; permissions: string[] },
  ): Promise<boolean> {
    const { rowCount } = await db.query(
      `INSERT INTO cp_api_keys (id, workspace_id, key_digest, key_prefix, permissions)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key_digest) DO NOTHING`,
      [key.id, key.workspaceId, key.digest, key.prefix, key.permissions],
    );
    return rowCount === 1;
  }

  /** Marks the key with this digest revoked; true when a live key was found. */
  async revokeApiKey(digest: Buffer): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      'UPDATE cp_api_keys SET revoked_at = now() WHERE key_digest = $1 AND revoked_at IS NULL',
      [digest],
    );
    return rowCount === 1;
  }

  async anyOrganization(db: Queryable): Promise<boolean> {
    const { rowCount } = await db.query('SELECT 1 FROM cp_organizations LIMIT 1');
    return (rowCount ?? 0) > 0;
  }

  async workspace(db: Queryable, id: string): Promise<Workspace | undefined> {
    const { rows } = await db.query<Workspace>(
      'SELECT id, organization_id, name FROM cp_workspaces WHERE id = $1',
      [id],
    );
    return rows[0];
  }

  /** A workspace as a principal without a key row (a deployment's trace key). */
  async workspacePrincipal(
    workspaceId: string,
    keyId: string,
    permissions: string[],
  ): Promise<Principal | undefined> {
    const { rows } = await this.pool.query<{
      ws_name: string;
      org_id: string;
      org_name: string;
      plan: string;
    }>(
      `SELECT w.name AS ws_name, o.id AS org_id, o.name AS org_name, o.plan
         FROM cp_workspaces w JOIN cp_organizations o ON o.id = w.organization_id
        WHERE w.id = $1`,
      [workspaceId],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      keyId,
      permissions,
      workspace: { id: workspaceId, organization_id: row.org_id, name: row.ws_name },
      organization: { id: row.org_id, name: row.org_name, plan: row.plan },
    };
  }

  async principalByDigest(digest: Buffer): Promise<Principal | undefined> {
    const { rows } = await this.pool.query<{
      key_id: string;
      permissions: string[];
      ws_id: string;
      ws_name: string;
      org_id: string;
      org_name: string;
      plan: string;
    }>(
      `SELECT k.id AS key_id, k.permissions, w.id AS ws_id, w.name AS ws_name,
              o.id AS org_id, o.name AS org_name, o.plan
         FROM cp_api_keys k
         JOIN cp_workspaces w ON w.id = k.workspace_id
         JOIN cp_organizations o ON o.id = w.organization_id
        WHERE k.key_digest = $1 AND k.revoked_at IS NULL`,
      [digest],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      keyId: row.key_id,
      permissions: row.permissions,
      workspace: { id: row.ws_id, organization_id: row.org_id, name: row.ws_name },
      organization: { id: row.org_id, name: row.org_name, plan: row.plan },
    };
  }
}
