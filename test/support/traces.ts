// Per-file fixture for the trace store: a fresh database and a real `graphdock api` process on
// it (no Kubernetes: the trace routes never reach the cluster), with tenancy to mint workspaces
// and keys as an admin would.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { createLogger } from '../../common/logging/index.js';
import { createPool, type Pool } from '../../common/db/index.js';
import { migrateControlPlaneDatabase, TenancyService, TenancyStore } from '../../api/index.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { ensurePythonVenv, TRACES_VENV } from './python.js';
import { REPO_ROOT, startServer, type RunningServer } from './server.js';

export const TRACES_BOOTSTRAP_KEY = 'gdk_traces_bootstrap_key_0123456789';

export interface TraceApiFixture {
  db: TestDatabase;
  api: RunningServer;
  /** `<api>/api/v1`: what LANGSMITH_ENDPOINT is set to. */
  endpoint: string;
  pool: Pool;
  tenancy: TenancyService;
  workspaceId: string;
  /** A new workspace (in a new organization) and a key of it. */
  newWorkspace(name: string): Promise<{ workspaceId: string; key: string }>;
}

type Json = Record<string, unknown>;

/**
 * A JSON request to the api's `/api/v1` as the fixture's workspace (bootstrap key); answers the
 * status and the parsed body (null when empty).
 */
export async function traceApiCall(
  api: TraceApiFixture,
  method: string,
  path: string,
  json?: unknown,
): Promise<{ status: number; body: Json & Json[] }> {
  const headers = new Headers({
    'x-api-key': TRACES_BOOTSTRAP_KEY,
    'x-tenant-id': api.workspaceId,
  });
  if (json !== undefined) headers.set('content-type', 'application/json');
  const res = await fetch(`${api.api.url}/api/v1${path}`, {
    method,
    headers,
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Json & Json[] };
}

/**
 * `env`: more settings of the api process (e.g. bulk export's key ring); a function is called
 * when the api starts, after the beforeAll hooks registered before this one.
 */
export function useTraceApi(
  options: { env?: Record<string, string> | (() => Record<string, string>) } = {},
): TraceApiFixture {
  const fixture = {} as TraceApiFixture;
  const dir = mkdtempSync(join(tmpdir(), 'graphdock-traces-'));
  beforeAll(async () => {
    fixture.db = await createTestDatabase(inject('pgAdminUrl'));
    // A cluster nobody listens at: the api's Kubernetes client is built but never used here.
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'none', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [{ name: 'none', user: { token: 'none' } }],
        contexts: [{ name: 'none', context: { cluster: 'none', user: 'none' } }],
        'current-context': 'none',
      }),
    );
    fixture.api = await startServer({
      command: 'api',
      databaseUrl: fixture.db.url,
      env: {
        KUBECONFIG: kubeconfig,
        GRAPHDOCK_BOOTSTRAP_API_KEY: TRACES_BOOTSTRAP_KEY,
        ...(typeof options.env === 'function' ? options.env() : options.env),
      },
    });
    fixture.endpoint = `${fixture.api.url}/api/v1`;
    fixture.pool = createPool({ url: fixture.db.url, max: 2 });
    await migrateControlPlaneDatabase(fixture.pool);
    fixture.tenancy = new TenancyService(
      fixture.pool,
      new TenancyStore(fixture.pool),
      createLogger({ level: 'silent' }),
    );
    const { rows } = await fixture.pool.query<{ id: string }>(
      'SELECT id FROM cp_workspaces LIMIT 1',
    );
    fixture.workspaceId = rows[0]!.id;
    fixture.newWorkspace = async (name) => {
      const org = await fixture.tenancy.createOrganization(`${name}-org`, 'enterprise');
      const ws = await fixture.tenancy.createWorkspace(org.id, name);
      return { workspaceId: ws.id, key: await fixture.tenancy.createApiKey(ws.id) };
    };
  }, 120_000);
  afterAll(async () => {
    await fixture.api?.stop();
    await fixture.pool?.end();
    await fixture.db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  return fixture;
}

/** Runs a Python script of test/python-traces in the langsmith venv; resolves to its stdout. */
export async function runTracesPython(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const python = await ensurePythonVenv(TRACES_VENV);
  return new Promise((resolve, reject) => {
    const child = spawn(python, [join(REPO_ROOT, 'test', 'python-traces', script)], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
