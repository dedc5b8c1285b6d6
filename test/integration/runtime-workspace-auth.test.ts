// A deployed runtime accepts exactly the API keys of its workspace, as the control plane does:
// `graphdock api` and `graphdock runtime` as real processes, wired the way the operator wires
// agent pods (GRAPHDOCK_CONTROL_PLANE_URL, GRAPHDOCK_WORKSPACE_ID, GRAPHDOCK_AUTH_REQUIRED).
import { Client } from '@langchain/langgraph-sdk';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TenancyService, TenancyStore } from '../../api/index.js';
import { createPool, type Pool } from '../../common/db/index.js';
import { createLogger } from '../../common/logging/index.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { runCli, startServer, type RunningServer } from '../support/server.js';

const BOOTSTRAP_KEY = 'gdk_workspace_auth_bootstrap_0123456789';
let apiDb: TestDatabase;
let runtimeDb: TestDatabase;
let pool: Pool;
let tenancy: TenancyService;
let api: RunningServer;
let runtime: RunningServer;
let workspaceId: string;
let secondKey: string;
let otherWorkspaceKey: string;
const randomKey = 'gdk_not_a_key_anyone_has_0123456789abcdef';

function unreachableKubeconfig(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'graphdock-kc-')), 'config');
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'c', cluster: { server: 'https://127.0.0.1:9', 'insecure-skip-tls-verify': true } },
      ],
      users: [{ name: 'u', user: { token: 'x' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return path;
}

const authEnv = () => ({
  GRAPHDOCK_CONTROL_PLANE_URL: api.url,
  GRAPHDOCK_WORKSPACE_ID: workspaceId,
  GRAPHDOCK_AUTH_REQUIRED: 'true',
  GRAPHDOCK_API_KEYS: '',
  LOG_LEVEL: 'debug',
});

/** Status of an authenticated call to the runtime, the key sent as X-Api-Key. */
const status = async (key: string | undefined, server = runtime) =>
  (
    await fetch(`${server.url}/assistants/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
      body: '{}',
    })
  ).status;

beforeAll(async () => {
  [apiDb, runtimeDb] = await Promise.all([
    createTestDatabase(inject('pgAdminUrl')),
    createTestDatabase(inject('pgAdminUrl')),
  ]);
  api = await startServer({
    command: 'api',
    databaseUrl: apiDb.url,
    env: { KUBECONFIG: unreachableKubeconfig(), GRAPHDOCK_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY },
  });
  pool = createPool({ url: apiDb.url, max: 2 });
  tenancy = new TenancyService(pool, new TenancyStore(pool), createLogger({ level: 'silent' }));
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM cp_workspaces LIMIT 1');
  workspaceId = rows[0]!.id;
  secondKey = await tenancy.createApiKey(workspaceId);
  const org = await tenancy.createOrganization('other-org', 'self_hosted_enterprise');
  const other = await tenancy.createWorkspace(org.id, 'other');
  otherWorkspaceKey = await tenancy.createApiKey(other.id);
  runtime = await startServer({ databaseUrl: runtimeDb.url, env: authEnv() });
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
  await api?.stop();
  await pool?.end();
  await apiDb?.drop();
  await runtimeDb?.drop();
});

describe('a runtime wired to the control plane', () => {
  it("accepts its workspace's keys, as X-Api-Key and as Bearer, through the SDK", async () => {
    for (const apiKey of [BOOTSTRAP_KEY, secondKey]) {
      const client = new Client({ apiUrl: runtime.url, apiKey });
      const thread = await client.threads.create();
      const state = await client.runs.wait(thread.thread_id, 'echo', {
        input: { messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(JSON.stringify(state)).toContain('echo: hi');
    }
    const bearer = await fetch(`${runtime.url}/assistants/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secondKey}` },
      body: '{}',
    });
    expect(bearer.status).toBe(200);
    // Accepted because the control plane vouches for them, not because anything goes.
    expect(await status(randomKey)).toBe(401);
  });

  it("refuses another workspace's key, a random key and no key with 401", async () => {
    expect(await status(otherWorkspaceKey)).toBe(401);
    expect(await status(randomKey)).toBe(401);
    expect(await status(undefined)).toBe(401);
    // The health route stays open for probes.
    expect((await fetch(`${runtime.url}/ok?check_db=1`)).status).toBe(200);
    // The control plane agrees: the other key is valid there, for its own workspace only.
    const verify = (key: string, tenant?: string) =>
      fetch(`${api.url}/internal/v1/auth/verify`, {
        headers: { 'x-api-key': key, ...(tenant ? { 'x-tenant-id': tenant } : {}) },
      });
    expect((await verify(otherWorkspaceKey, workspaceId)).status).toBe(403);
    expect((await verify(randomKey, workspaceId)).status).toBe(401);
    expect((await verify(secondKey)).status).toBe(422);
    const ok = await verify(secondKey, workspaceId);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ workspace_id: workspaceId });
  });

  it('stops accepting a key within 30 s of its revocation in the control plane', async () => {
    const key = await tenancy.createApiKey(workspaceId);
    expect(await status(key)).toBe(200);
    expect(await tenancy.revokeApiKey(key)).toBe(true);
    const revokedAt = Date.now();
    while ((await status(key)) === 200) {
      expect(Date.now() - revokedAt).toBeLessThan(30_000);
      await new Promise((r) => setTimeout(r, 250));
    }
    const took = Date.now() - revokedAt;
    console.log(`revoked key refused by the runtime after ${took} ms`);
    expect(await status(key)).toBe(401);
    expect(await status(secondKey)).toBe(200);
  }, 40_000);

  it('never writes a key to its logs, nor does the api', () => {
    expect(runtime.output()).toContain('API keys are checked with the control plane');
    for (const key of [BOOTSTRAP_KEY, secondKey, otherWorkspaceKey, randomKey]) {
      expect(runtime.output()).not.toContain(key);
      expect(api.output()).not.toContain(key);
    }
  });

  it('refuses to start when auth is required and there is no way to check keys', async () => {
    const result = await runCli(['runtime', '--port', '0'], {
      DATABASE_URL: runtimeDb.url,
      GRAPHDOCK_AUTH_REQUIRED: 'true',
      GRAPHDOCK_API_KEYS: '',
    });
    expect(result.code).toBe(1);
    expect(result.output).toContain('GRAPHDOCK_AUTH_REQUIRED');
  });

  it('serves without a key only when the deployment opts out with GRAPHDOCK_AUTH_TYPE=noop', async () => {
    const open = await startServer({
      databaseUrl: runtimeDb.url,
      env: { ...authEnv(), GRAPHDOCK_AUTH_TYPE: 'noop' },
    });
    try {
      expect(await status(undefined, open)).toBe(200);
      expect(await status(randomKey, open)).toBe(200);
      // The same settings without the opt-out refuse it.
      expect(await status(randomKey)).toBe(401);
    } finally {
      await open.stop();
    }
  });

  it('keeps a recently accepted key while the control plane is down; an unknown key gets 503', async () => {
    expect(await status(secondKey)).toBe(200);
    await api.stop();
    // Past the positive cache's 10 s, the runtime has to ask, cannot, and uses its grace.
    await new Promise((r) => setTimeout(r, 11_000));
    expect(await status(secondKey)).toBe(200);
    expect(await status('gdk_never_seen_key_0123456789abcdefgh')).toBe(503);
    expect(await status(undefined)).toBe(401);
  }, 30_000);
});
