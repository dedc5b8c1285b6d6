// Per-file fixture for the control plane: a local Kubernetes control plane with the graphdock
// CRDs installed, a PostgreSQL server, and a real `graphdock api` process wired to both.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createLogger } from '../../common/logging/index.js';
import {
  createPool,
  startPostgresServer,
  type Pool,
  type PostgresServer,
} from '../../common/db/index.js';
import {
  CONTROL_PLANE_API_EXPORT_RULES,
  CONTROL_PLANE_API_RULES,
  migrateControlPlaneDatabase,
  TenancyService,
  TenancyStore,
} from '../../api/index.js';
import { installCrds } from '../cluster/crds.js';
import { startCluster, type Cluster, type ClusterOptions } from '../cluster/index.js';
import { startServer, type RunningServer } from './server.js';

export const BOOTSTRAP_KEY = 'gdk_bootstrap_key_for_tests_0123456789';

const API_USER = 'graphdock-api';

function apiRbac() {
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: API_USER },
        // The export rules are a Role in the jobs namespace in the chart; here, everywhere.
        rules: [...CONTROL_PLANE_API_RULES, ...CONTROL_PLANE_API_EXPORT_RULES],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: API_USER },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: API_USER },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: API_USER }],
      },
    ],
  };
}

export interface ControlPlaneFixture {
  cluster: Cluster;
  api: RunningServer;
  url: string;
  /** Creates organizations, workspaces and keys in the api's database, as an admin would. */
  tenancy: TenancyService;
  /** The bootstrap workspace (self-hosted enterprise organization). */
  workspaceId: string;
  /** Raw HTTP with the bootstrap key unless `headers` say otherwise. */
  http(
    path: string,
    init?: RequestInit & { json?: unknown; key?: string | null },
  ): Promise<Response>;
  kubectlJson<T = unknown>(args: string[]): Promise<T>;
  /** Admin URL of the fixture's PostgreSQL server (the operator creates databases there). */
  pgUrl: string;
}

export function useControlPlane(
  options: {
    namespaces?: string[];
    cluster?: ClusterOptions;
    apiEnv?: Record<string, string>;
  } = {},
): ControlPlaneFixture {
  const fixture = {} as ControlPlaneFixture;
  let postgres: PostgresServer | undefined;
  let pool: Pool | undefined;
  let pgDir: string | undefined;
  beforeAll(async () => {
    pgDir = mkdtempSync(join(tmpdir(), 'graphdock-cp-pg-'));
    const [cluster, pg] = await Promise.all([
      startCluster(options.cluster ?? { nodes: 1 }),
      startPostgresServer({ dataDir: join(pgDir, 'data'), ephemeral: true }),
    ]);
    fixture.cluster = cluster;
    postgres = pg;
    fixture.pgUrl = pg.url;
    await installCrds(cluster);
    for (const ns of options.namespaces ?? ['agents'])
      await cluster.kubectl(['create', 'namespace', ns]);

    // The api runs as its own user holding only CONTROL_PLANE_API_RULES, so every test also
    // proves those permissions are enough.
    await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(apiRbac()) });
    fixture.api = await startServer({
      command: 'api',
      databaseUrl: pg.url,
      env: {
        KUBECONFIG: await cluster.userKubeconfig(API_USER),
        GRAPHDOCK_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
        ...options.apiEnv,
      },
    });
    fixture.url = fixture.api.url;
    pool = createPool({ url: pg.url, max: 2 });
    await migrateControlPlaneDatabase(pool);
    fixture.tenancy = new TenancyService(
      pool,
      new TenancyStore(pool),
      createLogger({ level: 'silent' }),
    );
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM cp_workspaces LIMIT 1');
    fixture.workspaceId = rows[0]!.id;

    fixture.http = (path, init = {}) => {
      const { json, key, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key !== null) headers.set('x-api-key', key ?? BOOTSTRAP_KEY);
      if (json !== undefined) headers.set('content-type', 'application/json');
      return fetch(`${fixture.url}${path}`, {
        ...rest,
        headers,
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
    };
    fixture.kubectlJson = async <T>(args: string[]) =>
      JSON.parse(await cluster.kubectl([...args, '-o', 'json'])) as T;
  });
  afterAll(async () => {
    await fixture.api?.stop();
    await pool?.end();
    await fixture.cluster?.stop();
    await postgres?.stop();
    if (pgDir) rmSync(pgDir, { recursive: true, force: true });
  });
  return fixture;
}

/** A workspace in a new organization on `plan`, and a key for it. */
export async function otherTenant(tenancy: TenancyService, plan = 'self_hosted_enterprise') {
  const org = await tenancy.createOrganization(`org-${plan}`, plan);
  const workspace = await tenancy.createWorkspace(org.id, 'ws');
  return { workspaceId: workspace.id, key: await tenancy.createApiKey(workspace.id) };
}
