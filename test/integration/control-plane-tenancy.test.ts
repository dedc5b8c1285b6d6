// `graphdock api` without a reachable cluster: start-up, bootstrap, authentication and request
// validation, which never need the Kubernetes API; and a clear 503 for what does.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { runCli, startServer, type RunningServer } from '../support/server.js';

const KEY = 'gdk_first_bootstrap_key_0123456789';
const ROTATED = 'gdk_second_bootstrap_key_0123456789';
let db: TestDatabase;
let kubeconfig: string;
let api: RunningServer;

/** Points at a port nothing listens on: every Kubernetes call fails to connect. */
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

const startApi = (env: Record<string, string>) =>
  startServer({ command: 'api', databaseUrl: db.url, env: { KUBECONFIG: kubeconfig, ...env } });

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${api.url}${path}`, { headers });

beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  kubeconfig = unreachableKubeconfig();
  api = await startApi({ GRAPHDOCK_BOOTSTRAP_API_KEY: KEY });
});

afterAll(async () => {
  await api?.stop();
  await db?.drop();
});

describe('graphdock api', () => {
  it('refuses to start with an empty DATABASE_URL or a too short bootstrap key', async () => {
    const noDb = await runCli(['api', '--port', '0'], { DATABASE_URL: '' });
    expect(noDb.code).toBe(1);
    expect(noDb.output).toContain('DATABASE_URL');
    const shortKey = await runCli(['api', '--port', '0'], {
      DATABASE_URL: db.url,
      GRAPHDOCK_BOOTSTRAP_API_KEY: 'short',
    });
    expect(shortKey.code).toBe(1);
    expect(shortKey.output).toContain('GRAPHDOCK_BOOTSTRAP_API_KEY');
  });

  it('stores the bootstrap key only as a digest, with one organization and workspace', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const keys = await client.query<{ key_digest: Buffer; key_prefix: string }>(
        'SELECT key_digest, key_prefix FROM cp_api_keys',
      );
      expect(keys.rows).toHaveLength(1);
      expect(keys.rows[0]!.key_digest.length).toBe(32);
      expect(keys.rows[0]!.key_prefix).toBe(KEY.slice(0, 10));
      const dump = JSON.stringify(
        (await client.query('SELECT * FROM cp_api_keys')).rows.map(
          (r: Record<string, unknown>) => ({
            ...r,
            key_digest: (r.key_digest as Buffer).toString('hex'),
          }),
        ),
      );
      expect(dump).not.toContain(KEY);
      const orgs = await client.query<{ plan: string }>('SELECT plan FROM cp_organizations');
      expect(orgs.rows).toEqual([{ plan: 'self_hosted_enterprise' }]);
    } finally {
      await client.end();
    }
  });

  it('401 without a key or with an unknown one', async () => {
    const missing = await get('/v2/deployments');
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ detail: 'Missing X-Api-Key header' });
    const unknown = await get('/v2/deployments', { 'x-api-key': 'gdk_unknown_0000000000000000' });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toEqual({ detail: 'Invalid API key' });
    expect((await get('/ok')).status).toBe(200);
  });

  it('accepts the key as Authorization: Bearer too, the same keys as X-Api-Key', async () => {
    // Authenticated: the cluster is what is missing (503), not the key (401).
    expect((await get('/v2/listeners', { authorization: `Bearer ${KEY}` })).status).toBe(503);
    const unknown = await get('/v2/listeners', {
      authorization: 'Bearer gdk_unknown_000000000000',
    });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toEqual({ detail: 'Invalid API key' });
    expect((await get('/v2/listeners', { authorization: `Basic ${KEY}` })).status).toBe(401);
  });

  it('X-Tenant-Id: 422 when not a UUID, 403 for another workspace', async () => {
    const bad = await get('/v2/listeners', { 'x-api-key': KEY, 'x-tenant-id': 'nope' });
    expect(bad.status).toBe(422);
    expect(await bad.json()).toEqual({
      detail: [
        {
          loc: ['header', 'x-tenant-id'],
          msg: 'Input should be a valid UUID',
          type: 'uuid_parsing',
        },
      ],
    });
    const foreign = await get('/v2/listeners', {
      'x-api-key': KEY,
      'x-tenant-id': '00000000-0000-4000-8000-000000000000',
    });
    expect(foreign.status).toBe(403);
  });

  it('validates requests before touching the cluster (422 with loc/msg/type)', async () => {
    const res = await fetch(`${api.url}/v2/listeners`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ compute_type: 'k8s', compute_config: {} }),
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [{ loc: ['body', 'compute_id'], msg: 'Field required', type: 'missing' }],
    });
    expect((await get('/v2/deployments/not-a-uuid', { 'x-api-key': KEY })).status).toBe(422);
  });

  it('422 at the field for impossible values: scale ranges, limits, namespace names', async () => {
    const send = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status, path).toBe(422);
      return ((await res.json()) as { detail: { loc: unknown[]; msg: string }[] }).detail;
    };
    const deployment = (resourceSpec: object, namespace = 'agents') => ({
      name: 'x',
      source: 'external_docker',
      source_config: {
        listener_id: '00000000-0000-4000-8000-000000000000',
        listener_config: { k8s_namespace: namespace },
        resource_spec: resourceSpec,
      },
      source_revision_config: { image_uri: 'registry.local/agent:1' },
      secrets: [],
    });
    expect(
      await send('POST', '/v2/deployments', deployment({ min_scale: 3, max_scale: 2 })),
    ).toEqual([
      {
        loc: ['body', 'source_config', 'resource_spec', 'min_scale'],
        msg: "'min_scale' (3) must not be greater than 'max_scale' (2)",
        type: 'value_error',
      },
    ]);
    const limit = await send(
      'POST',
      '/v2/deployments',
      deployment({ memory_mb: 2048, memory_limit_mb: 1024 }),
    );
    expect(limit.map((d) => d.loc)).toEqual([
      ['body', 'source_config', 'resource_spec', 'memory_mb'],
    ]);
    const badNamespace = await send('POST', '/v2/deployments', deployment({}, 'Not_A_Namespace'));
    expect(badNamespace.map((d) => d.loc)).toEqual([
      ['body', 'source_config', 'listener_config', 'k8s_namespace'],
    ]);
    expect(badNamespace[0]!.msg).toContain('not a valid Kubernetes namespace name');
    const listener = {
      compute_type: 'k8s',
      compute_id: 'c',
      compute_config: { k8s_namespaces: ['good', '-bad-'] },
    };
    for (const [method, path] of [
      ['POST', '/v2/listeners'],
      ['PUT', '/v2/listeners/00000000-0000-4000-8000-000000000000'],
      ['PATCH', '/v2/listeners/00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const detail = await send(method, path, listener);
      expect(detail.map((d) => d.loc)).toEqual([['body', 'compute_config', 'k8s_namespaces', 1]]);
    }
  });

  it('503 with a clear detail when the Kubernetes API cannot be reached', async () => {
    const res = await get('/v2/listeners', { 'x-api-key': KEY });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ detail: 'The Kubernetes API is unavailable' });
  });

  it('a restart with a rotated bootstrap key keeps the old key and adds the new one', async () => {
    await api.stop();
    api = await startApi({ GRAPHDOCK_BOOTSTRAP_API_KEY: ROTATED });
    for (const key of [KEY, ROTATED]) {
      const res = await get('/v2/listeners', { 'x-api-key': key });
      expect(res.status, key).toBe(503); // authenticated; the cluster is what is missing
    }
  });

  it('serves its OpenAPI document without a key', async () => {
    const doc = (await (await get('/openapi.json')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v2/listeners',
        '/v2/listeners/{listener_id}',
        '/v2/deployments',
        '/v2/deployments/{deployment_id}/revisions/{revision_id}/redeploy',
      ]),
    );
  });
});
