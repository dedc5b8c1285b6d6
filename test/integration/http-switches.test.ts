// The `http` switches of langgraph.json, `store.ttl` defaults and `checkpointer.ttl`, each
// through HTTP on a real server. Switches that do not interact share one server.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT, runCli } from '../support/server.js';

const GRAPHS = {
  echo: `${join(REPO_ROOT, 'examples', 'graphs', 'echo.ts')}:graph`,
  slow: `${join(REPO_ROOT, 'examples', 'graphs', 'slow.ts')}:graph`,
  headers: `${join(REPO_ROOT, 'test', 'fixtures', 'switches', 'headers.ts')}:graph`,
};

function configFile(config: Record<string, unknown>): string {
  const path = join(mkdtempSync(join(tmpdir(), 'gd-switches-')), 'langgraph.json');
  writeFileSync(path, JSON.stringify({ graphs: GRAPHS, ...config }));
  return path;
}

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const seen = (values: unknown) => (values as { seen: Record<string, string> }).seen;

describe('mount_prefix, disable_assistants, disable_store, disable_meta, cors, configurable_headers', () => {
  const rt = useRuntime({
    okPath: '/api/ok',
    config: configFile({
      http: {
        mount_prefix: '/api/',
        disable_assistants: true,
        disable_store: true,
        disable_meta: true,
        cors: {
          allow_origins: ['https://app.example'],
          allow_origin_regex: 'https://[a-z0-9]+\\.preview\\.example',
          allow_methods: ['GET', 'POST'],
          allow_headers: ['x-api-key', 'content-type'],
          allow_credentials: true,
          expose_headers: ['x-trace'],
          max_age: 600,
        },
        configurable_headers: {
          includes: ['x-user-*', 'authorization'],
          excludes: ['x-user-secret'],
        },
      },
    }),
  });
  const api = () => new Client({ apiUrl: `${rt.url}/api`, apiKey: null });

  it('serves every route under the prefix and nothing outside it', async () => {
    const thread = await api().threads.create({ metadata: { where: 'prefixed' } });
    expect((await api().threads.get(thread.thread_id)).metadata).toEqual({ where: 'prefixed' });
    expect((await rt.http(`/threads/${thread.thread_id}`)).status).toBe(404);
    expect(await (await rt.http('/api/ok')).json()).toEqual({ ok: true });
    expect((await rt.http('/ok')).status).toBe(404);
    const result = await api().runs.wait(thread.thread_id, 'echo', {
      input: { messages: [{ role: 'user', content: 'hi' }] },
    });
    expect((result as { messages: { content: string }[] }).messages.at(-1)?.content).toBe(
      'echo: hi',
    );
  });

  it('removes the assistants, store and meta routes, keeping /ok without checks', async () => {
    const gone = [
      rt.http('/api/assistants/search', { method: 'POST', json: {} }),
      rt.http('/api/assistants/echo'),
      rt.http('/api/store/items', {
        method: 'PUT',
        json: { namespace: ['a'], key: 'k', value: {} },
      }),
      rt.http('/api/store/items/search', { method: 'POST', json: {} }),
      rt.http('/api/store/namespaces', { method: 'POST', json: {} }),
      rt.http('/api/info'),
      rt.http('/api/metrics'),
      rt.http('/api/openapi.json'),
      rt.http('/api/docs'),
    ];
    expect((await Promise.all(gone)).map((r) => r.status)).toEqual(Array(gone.length).fill(404));
    const ok = await rt.http('/api/ok?check_db=1');
    expect(ok.status).toBe(200);
    // Threads and runs stay.
    expect((await rt.http('/api/threads/search', { method: 'POST', json: {} })).status).toBe(200);
  });

  it('answers CORS preflights for allowed origins only, with the configured policy', async () => {
    const preflight = (origin: string) =>
      rt.http('/api/threads/search', {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-api-key',
        },
      });
    const allowed = await preflight('https://app.example');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    expect(allowed.headers.get('access-control-allow-methods')).toBe('GET, POST');
    expect(allowed.headers.get('access-control-allow-headers')).toBe('x-api-key, content-type');
    expect(allowed.headers.get('access-control-max-age')).toBe('600');

    const byRegex = await preflight('https://pr42.preview.example');
    expect(byRegex.headers.get('access-control-allow-origin')).toBe('https://pr42.preview.example');
    const refused = await preflight('https://evil.example');
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const lookalike = await preflight('https://pr42.preview.example.evil.test');
    expect(lookalike.headers.get('access-control-allow-origin')).toBeNull();

    const simple = await rt.http('/api/threads/search', {
      method: 'POST',
      json: {},
      headers: { origin: 'https://app.example' },
    });
    expect(simple.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const exposed = simple.headers.get('access-control-expose-headers')?.split(/,\s*/) ?? [];
    expect(exposed).toEqual(expect.arrayContaining(['x-trace', 'x-pagination-total']));
  });

  it('copies only the included, not excluded, request headers into configurable', async () => {
    const client = new Client({
      apiUrl: `${rt.url}/api`,
      apiKey: null,
      defaultHeaders: {
        'x-user-id': 'ada',
        'x-user-role': 'admin',
        'x-user-secret': 'hunter2',
        'x-other': 'nope',
        authorization: 'Bearer t',
        'user-agent': 'switch-test',
      },
    });
    const result = await client.runs.wait(null, 'headers', {
      input: {},
      config: { configurable: { 'x-user-role': 'from-body' } },
    });
    // The body's explicit configurable wins over a header of the same name.
    expect(seen(result)).toEqual({
      'x-user-id': 'ada',
      'x-user-role': 'from-body',
      authorization: 'Bearer t',
    });
  });
});

describe('disable_threads, store.ttl defaults, default CORS and configurable headers', () => {
  const rt = useRuntime({
    config: configFile({
      http: { disable_threads: true },
      store: { ttl: { default_ttl: 0.02, refresh_on_read: false, sweep_interval_minutes: 0.01 } },
    }),
  });

  it('removes the thread routes and keeps the rest', async () => {
    expect((await rt.http('/threads', { method: 'POST', json: {} })).status).toBe(404);
    expect((await rt.http('/threads/search', { method: 'POST', json: {} })).status).toBe(404);
    expect((await rt.http('/assistants/search', { method: 'POST', json: {} })).status).toBe(200);
    expect((await rt.http('/info')).status).toBe(200);
    const result = await rt.client.runs.wait(null, 'echo', {
      input: { messages: [{ role: 'user', content: 'still here' }] },
    });
    expect((result as { messages: { content: string }[] }).messages.at(-1)?.content).toBe(
      'echo: still here',
    );
  });

  it('expires items after store.ttl.default_ttl, reads not refreshing them; ttl null never expires', async () => {
    const ns = ['defaults', crypto.randomUUID().slice(0, 8)];
    await rt.client.store.putItem(ns, 'default', { v: 1 });
    await rt.client.store.putItem(ns, 'never', { v: 2 }, { ttl: null });
    await rt.client.store.putItem(ns, 'long', { v: 3 }, { ttl: 60 });
    expect((await rt.client.store.getItem(ns, 'default'))?.value).toEqual({ v: 1 });
    const gone = await eventually(
      async () => {
        // Reading does not push the expiry back: refresh_on_read is false here.
        return rt.client.store.getItem(ns, 'default');
      },
      (item) => item === null,
    );
    expect(gone).toBeNull();
    const left = await rt.client.store.searchItems(ns);
    expect(left.items.map((i) => i.key).sort()).toEqual(['long', 'never']);
  });

  it('allows every origin by default and exposes the pagination headers', async () => {
    const res = await rt.http('/assistants/search', {
      method: 'POST',
      json: {},
      headers: { origin: 'https://anywhere.example' },
    });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toContain('x-pagination-total');
  });

  it('copies x-* headers but credentials, and user-agent, by default', async () => {
    const client = new Client({
      apiUrl: rt.url,
      apiKey: null,
      defaultHeaders: {
        'x-request-source': 'test',
        'x-tenant-id': 'secret-tenant',
        'x-service-key': 'secret-service',
        authorization: 'Bearer not-copied',
        'user-agent': 'switch-test',
      },
    });
    const result = await client.runs.wait(null, 'headers', { input: {} });
    expect(seen(result)).toEqual({ 'x-request-source': 'test', 'user-agent': 'switch-test' });
  });
});

describe('disable_runs, checkpointer.ttl, and MOUNT_PREFIX from the environment', () => {
  const rt = useRuntime({
    env: { MOUNT_PREFIX: '/v1' },
    okPath: '/v1/ok',
    config: configFile({
      http: { disable_runs: true },
      checkpointer: {
        ttl: { strategy: 'delete', default_ttl: 0.03, sweep_interval_minutes: 0.01 },
      },
    }),
  });
  const api = () => new Client({ apiUrl: `${rt.url}/v1`, apiKey: null });

  async function checkpointRows(threadId: string): Promise<number> {
    const client = new pg.Client({ connectionString: rt.db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM checkpoints WHERE thread_id = $1',
        [threadId],
      );
      return rows[0]?.n ?? 0;
    } finally {
      await client.end();
    }
  }

  const said = (content: string) => ({
    updates: [{ values: { messages: [{ role: 'user', content }] }, as_node: '__start__' }],
  });

  /** A thread with checkpoints (written by supersteps: runs are disabled here). */
  async function withState(ttl?: unknown, steps = 1): Promise<string> {
    const res = await rt.http('/v1/threads', {
      method: 'POST',
      json: {
        metadata: { graph_id: 'echo' },
        ...(ttl ? { ttl } : {}),
        supersteps: Array.from({ length: steps }, (_, i) => said(`step ${i}`)),
      },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { thread_id: string }).thread_id;
  }

  const ttlOf = async (threadId: string) =>
    ((await (await rt.http(`/v1/threads/${threadId}?include=ttl`)).json()) as { ttl: unknown }).ttl;

  it('mounts every route under the environment prefix and removes the run routes', async () => {
    expect((await rt.http('/ok')).status).toBe(404);
    const thread = await api().threads.create();
    const statuses = await Promise.all([
      rt.http('/v1/runs/wait', { method: 'POST', json: { assistant_id: 'echo', input: {} } }),
      rt.http(`/v1/threads/${thread.thread_id}/runs`, {
        method: 'POST',
        json: { assistant_id: 'echo' },
      }),
      rt.http(`/v1/threads/${thread.thread_id}/runs`),
    ]);
    expect(statuses.map((r) => r.status)).toEqual([404, 404, 404]);
  });

  it('gives new threads the default TTL and sweeps expired ones with their checkpoints', async () => {
    const expiring = await withState();
    const kept = await withState(60);
    expect(await checkpointRows(expiring)).toBeGreaterThan(0);
    expect(await ttlOf(expiring)).toMatchObject({ ttl: 0.03, strategy: 'delete' });

    const status = await eventually(
      async () => (await rt.http(`/v1/threads/${expiring}`)).status,
      (s) => s === 404,
    );
    expect(status).toBe(404);
    expect(await checkpointRows(expiring)).toBe(0);
    // A thread with its own, longer TTL is untouched.
    expect((await api().threads.get(kept)).thread_id).toBe(kept);
    expect(await checkpointRows(kept)).toBeGreaterThan(0);
  });

  it('prunes an expired keep_latest thread to its latest checkpoint and keeps it', async () => {
    const thread = await withState({ ttl: 0.03, strategy: 'keep_latest' }, 3);
    const before = await api().threads.getState(thread);
    expect(await checkpointRows(thread)).toBeGreaterThan(1);

    const ttl = await eventually(
      () => ttlOf(thread),
      (t) => (t as { expires_at?: unknown } | null)?.expires_at === null,
    );
    expect(ttl).toMatchObject({ strategy: 'keep_latest', expires_at: null });
    expect(await checkpointRows(thread)).toBe(1);
    const after = await api().threads.getState(thread);
    expect(after.values).toEqual(before.values);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
  });
});

describe('start-up with bad switches', () => {
  it('stops with a message naming the key, before touching the database', async () => {
    const typo = await runCli(
      ['runtime', '--config', configFile({ http: { cors: { allow_origin: ['*'] } } })],
      { DATABASE_URL: 'postgres://nowhere.invalid/x' },
    );
    expect(typo.code).toBe(1);
    expect(typo.output).toContain('http.cors.allow_origin');
    const provider = await runCli(
      ['runtime', '--config', join(REPO_ROOT, 'test', 'fixtures', 'store-bad', 'langgraph.json')],
      { DATABASE_URL: 'postgres://nowhere.invalid/x' },
    );
    expect(provider.code).toBe(1);
    expect(provider.output).toContain('store.index.embed: "openai:text-embedding-3-small"');
  });
});

describe('checkpointer.ttl and a run in flight', () => {
  const rt = useRuntime({
    env: { GRAPHDOCK_SLOW_STEP_MS: '1500' },
    config: configFile({
      checkpointer: {
        ttl: { strategy: 'delete', default_ttl: 0.02, sweep_interval_minutes: 0.01 },
      },
    }),
  });

  it('sweeps a thread that expires while its run executes once the run has ended', async () => {
    const thread = await rt.client.threads.create();
    // The thread expires 1.2 s in, halfway through the run's first step.
    const result = (await rt.client.runs.wait(thread.thread_id, 'slow', {
      input: { messages: [{ role: 'user', content: 'late' }] },
    })) as { messages?: { content: string }[] };
    expect(result.messages?.map((m) => m.content)).toEqual([
      'late',
      'first: late',
      'second: first: late',
    ]);
    const gone = await eventually(
      async () => (await rt.http(`/threads/${thread.thread_id}`)).status,
      (status) => status === 404,
    );
    expect(gone).toBe(404);
  });
});
