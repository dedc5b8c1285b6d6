// Who is calling: API key authentication, workspace selection and the first-run bootstrap.
import { randomUUID } from 'node:crypto';
import { withTransaction, type Pool } from '../../common/db/index.js';
import { AppError } from '../../common/errors/index.js';
import type { Logger } from '../../common/logging/index.js';
import { digestApiKey, generateApiKey, KEY_PREFIX_LENGTH } from './keys.js';
import type { Organization, Principal, TenancyStore, Workspace } from './store.js';

/** The plan on which listeners (self-hosted compute) may be created. */
export const SELF_HOSTED_ENTERPRISE_PLAN = 'self_hosted_enterprise';
export const ALL_PERMISSIONS = ['WORKSPACES_MANAGE', 'DEPLOYMENTS_MANAGE'];

export interface BootstrapSettings {
  apiKey: string;
  organizationName: string;
  organizationPlan: string;
  workspaceId: string | undefined;
  workspaceName: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class TenancyService {
  constructor(
    private readonly pool: Pool,
    private readonly store: TenancyStore,
    private readonly logger: Logger,
  ) {}

  /**
   * Resolves the caller. A missing or unknown key is 401; `X-Tenant-Id` may only name the key's
   * own workspace.
   */
  async authenticate(apiKey: string | undefined, tenantId: string | undefined): Promise<Principal> {
    if (!apiKey) throw new AppError('UNAUTHORIZED', 'Missing X-Api-Key header');
    const principal = await this.store.principalByDigest(digestApiKey(apiKey));
    if (!principal) throw new AppError('UNAUTHORIZED', 'Invalid API key');
    return checkTenant(principal, tenantId);
  }

  /**
   * A workspace acting through a credential checked elsewhere (a deployment's trace key); 401
   * once the workspace is gone.
   */
  async workspacePrincipal(
    workspaceId: string,
    keyId: string,
    permissions: string[],
    tenantId: string | undefined,
  ): Promise<Principal> {
    const principal = await this.store.workspacePrincipal(workspaceId, keyId, permissions);
    if (!principal) throw new AppError('UNAUTHORIZED', 'Invalid API key');
    return checkTenant(principal, tenantId);
  }

  /**
   * First start: creates the organization, workspace and key from configuration. Later starts
   * only make sure the configured key exists (a rotated bootstrap key is added, never dropped).
   */
  async bootstrap(settings: BootstrapSettings): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext('graphdock:cp-bootstrap'))");
      let workspaceId = settings.workspaceId;
      if (!(await this.store.anyOrganization(client))) {
        const org = {
          id: randomUUID(),
          name: settings.organizationName,
          plan: settings.organizationPlan,
        };
        await this.store.insertOrganization(client, org);
        workspaceId ??= randomUUID();
        await this.store.insertWorkspace(client, {
          id: workspaceId,
          organization_id: org.id,
          name: settings.workspaceName,
        });
        this.logger.info({ organization: org.id, workspace: workspaceId }, 'bootstrapped tenancy');
      }
      if (!workspaceId) {
        const { rows } = await client.query<{ id: string }>(
          'SELECT id FROM cp_workspaces ORDER BY created_at, id LIMIT 1',
        );
        workspaceId = rows[0]?.id;
      }
      if (!workspaceId || !(await this.store.workspace(client, workspaceId)))
        throw new Error(`bootstrap workspace ${settings.workspaceId ?? '(first)'} does not exist`);
      await this.store.insertApiKey(client, {
        id: randomUUID(),
        workspaceId,
        digest: digestApiKey(settings.apiKey),
        prefix: settings.apiKey.slice(0, KEY_PREFIX_LENGTH),
        permissions: ALL_PERMISSIONS,
      });
    });
  }

  async createOrganization(name: string, plan: string): Promise<Organization> {
    const org = { id: randomUUID(), name, plan };
    await this.store.insertOrganization(this.pool, org);
    return org;
  }

  async createWorkspace(organizationId: string, name: string): Promise<Workspace> {
    const ws = { id: randomUUID(), organization_id: organizationId, name };
    await this.store.insertWorkspace(this.pool, ws);
    return ws;
  }

  /** Revokes a key: from then on the api refuses it, and deployed runtimes within their cache TTL. */
  revokeApiKey(key: string): Promise<boolean> {
    return this.store.revokeApiKey(digestApiKey(key));
  }

  /** Creates a key for a workspace and returns it; only its digest is kept. */
  async createApiKey(workspaceId: string, permissions = ALL_PERMISSIONS): Promise<string> {
    const key = generateApiKey();
    await this.store.insertApiKey(this.pool, {
      id: randomUUID(),
      workspaceId,
      digest: digestApiKey(key),
      prefix: key.slice(0, KEY_PREFIX_LENGTH),
      permissions,
    });
    return key;
  }
}

/** `X-Tenant-Id` may only name the key's own workspace. */
function checkTenant(principal: Principal, tenantId: string | undefined): Principal {
  if (tenantId !== undefined) {
    if (!UUID.test(tenantId))
      throw new AppError('VALIDATION', [
        {
          loc: ['header', 'x-tenant-id'],
          msg: 'Input should be a valid UUID',
          type: 'uuid_parsing',
        },
      ]);
    if (tenantId.toLowerCase() !== principal.workspace.id)
      throw new AppError('FORBIDDEN', `API key does not grant access to workspace ${tenantId}`);
  }
  return principal;
}
