// `auth.path`: a project's Auth module (test/fixtures/auth/auth.ts, as written for the official
// JS server) on two replicas sharing one PostgreSQL database. Alice works on one replica, Bob
// on the other; neither sees, counts, changes or streams what the other owns.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { REPO_ROOT, runCli, startServer, type RunningServer } from '../support/server.js';
import { DEV_TRACES_TENANT } from '../../traces/index.js';

const CONFIG = join(REPO_ROOT, 'test', 'fixtures', 'auth', 'langgraph.json');
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });

let db: TestDatabase;
const servers: RunningServer[] = [];
let alice: Client;
let bob: Client;
let reader: Client;
const as = (server: RunningServer, token: string) =>
  new Client({
    apiUrl: server.url,
    apiKey: null,
    defaultHeaders: { Authorization: `Bearer ${token}` },
  });
const raw = (server: RunningServer, path: string, init: RequestInit & { token?: string } = {}) =>
  fetch(`${server.url}${path}`, {
    ...init,
    headers: {
      'content-type': 'application/json',
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
  });
const status = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (err: unknown) => (err as { status?: number }).status ?? -1,
  );

beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  // The second replica starts once the first migrated the database.
  servers.push(await startServer({ databaseUrl: db.url, config: CONFIG }));
  servers.push(await startServer({ databaseUrl: db.url, config: CONFIG }));
  alice = as(servers[0]!, 'token-alice');
  bob = as(servers[1]!, 'token-bob');
  reader = as(servers[1]!, 'token-reader');
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await db?.drop();
});

describe('authenticate', () => {
  it('answers its HTTPException with its status, message and headers; /ok stays open', async () => {
    const [a] = servers;
    const none = await raw(a!, '/threads/search', { method: 'POST', body: '{}' });
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ detail: 'Invalid or missing token' });
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    // The API-key check is replaced, not added to: a bearer token the module accepts is enough.
    const ok = await raw(a!, '/threads/search', { method: 'POST', body: '{}', token: 'token-bob' });
    expect(ok.status).toBe(200);
    expect((await raw(a!, '/ok')).status).toBe(200);
    expect(
      (await raw(a!, '/assistants/search', { method: 'POST', body: '{}', token: 'nope' })).status,
    ).toBe(401);
  });

  it('lets UI assets through without a token, as script tags send none; not the UI HTML', async () => {
    const [a] = servers;
    const asset = await raw(a!, '/ui/whoami/entrypoint.js');
    expect(asset.status).toBe(200);
    expect(await asset.text()).toMatch(/^var __LGUI_whoami=/);
    const html = (token?: string) =>
      raw(a!, '/ui/whoami', {
        method: 'POST',
        body: '{"name":"weather"}',
        ...(token ? { token } : {}),
      });
    expect((await html()).status).toBe(401);
    expect((await html('token-bob')).status).toBe(200);
  });

  it('documents the security of auth.openapi', async () => {
    const doc = (await (
      await raw(servers[0]!, '/openapi.json', { token: 'token-alice' })
    ).json()) as {
      components: { securitySchemes: unknown };
      security: unknown;
    };
    expect(doc.components.securitySchemes).toEqual({ bearer: { type: 'http', scheme: 'bearer' } });
    expect(doc.security).toEqual([{ bearer: [] }]);
  });
});

describe('start-up', () => {
  it('stops when auth.path cannot be loaded, naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-auth-'));
    const cases = [
      { path: './nowhere.ts:auth' },
      { path: `${join(REPO_ROOT, 'test', 'fixtures', 'auth', 'whoami.ts')}:graph` },
    ];
    await Promise.all(
      cases.map(async (auth, i) => {
        const config = join(dir, `${i}.json`);
        writeFileSync(config, JSON.stringify({ graphs: {}, auth }));
        const { code, output } = await runCli(['runtime', '--config', config], {
          DATABASE_URL: 'postgres://nowhere.invalid/x',
        });
        expect(code).toBe(1);
        expect(output).toContain(`Failed to load auth.path "${auth.path}"`);
      }),
    );
  }, 120_000);
});

describe('threads', () => {
  it('are owned: metadata added on create, every other action filtered across replicas', async () => {
    const mine = await alice.threads.create({ metadata: { topic: 'a' } });
    expect(mine.metadata).toEqual({ topic: 'a', owner: 'alice' });
    const id = mine.thread_id;
    expect(await status(bob.threads.get(id))).toBe(404);
    expect((await alice.threads.get(id)).metadata).toMatchObject({ owner: 'alice' });
    expect(await bob.threads.search({ metadata: { topic: 'a' } })).toEqual([]);
    expect(await bob.threads.search({ ids: [id] })).toEqual([]);
    expect(await bob.threads.count({ metadata: { topic: 'a' } })).toBe(0);
    expect(await alice.threads.count({ metadata: { topic: 'a' } })).toBe(1);
    expect(await status(bob.threads.update(id, { metadata: { owner: 'bob' } }))).toBe(404);
    expect(await status(bob.threads.getState(id))).toBe(404);
    expect(await status(bob.threads.getHistory(id))).toBe(404);
    expect(await status(bob.threads.copy(id))).toBe(404);
    expect(await status(bob.threads.delete(id))).toBe(404);
    // Bob cannot take the id over either.
    expect(await status(bob.threads.create({ threadId: id, ifExists: 'do_nothing' }))).toBe(409);
    const pruned = await raw(servers[1]!, '/threads/prune', {
      method: 'POST',
      token: 'token-bob',
      body: JSON.stringify({ thread_ids: [id] }),
    });
    expect(pruned.status).toBe(200);
    expect((await alice.threads.get(id)).metadata).toEqual({ topic: 'a', owner: 'alice' });
  });

  it('an HTTPException from an on handler is its status; a reader may not create', async () => {
    const refused = await raw(servers[1]!, '/threads', {
      method: 'POST',
      token: 'token-reader',
      body: '{}',
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ detail: 'write permission required' });
    expect(await reader.threads.search()).toEqual([]);
  });
});

describe('thread protocol', () => {
  it('commands and event streams of another user’s thread are hidden', async () => {
    const { thread_id: id } = await alice.threads.create();
    const command = (token: string, method: string, params: object) =>
      raw(servers[1]!, `/threads/${id}/commands`, {
        method: 'POST',
        token,
        body: JSON.stringify({ id: 1, method, params }),
      });
    expect((await command('token-bob', 'state.get', {})).status).toBe(404);
    const start = { assistant_id: 'echo', input: hi('not yours') };
    expect((await command('token-bob', 'run.start', start)).status).toBe(404);
    const events = await raw(servers[1]!, `/threads/${id}/stream/events`, {
      method: 'POST',
      token: 'token-bob',
      body: JSON.stringify({ channels: ['values'] }),
    });
    expect(events.status).toBe(404);
    expect((await command('token-alice', 'state.get', {})).status).toBe(200);
    expect(await alice.runs.list(id)).toEqual([]);
  });
});

describe('runs', () => {
  it('carry the user in config.configurable; other users cannot create, read, join or cancel them', async () => {
    const thread = await alice.threads.create();
    const result = (await alice.runs.wait(thread.thread_id, 'whoami', { input: {} })) as {
      who: { user: Record<string, unknown>; user_id: string; permissions: string[] };
    };
    expect(result.who.user_id).toBe('alice');
    expect(result.who.permissions).toEqual(['read', 'write']);
    expect(result.who.user).toMatchObject({
      identity: 'alice',
      display_name: 'alice',
      is_authenticated: true,
      team: 'qa',
      seen_method: 'POST',
      seen_path: `/threads/${thread.thread_id}/runs/wait`,
    });
    const [run] = await alice.runs.list(thread.thread_id);
    expect(run?.metadata).toMatchObject({ owner: 'alice' });
    const tid = thread.thread_id;
    const rid = run!.run_id;
    expect(await status(bob.runs.create(tid, 'echo', { input: hi('x') }))).toBe(404);
    expect(await status(bob.runs.wait(tid, 'echo', { input: hi('x') }))).toBe(404);
    // The filter is applied by the statements that create the run: each of their paths (one
    // statement, a missing thread to create, a strategy that needs a transaction, a stream)
    // refuses alike and leaves the thread as it was.
    const before = await alice.threads.get(tid);
    const fromBob = (extra: object) => ({ input: hi('x'), ...extra });
    expect(await status(bob.runs.create(tid, 'echo', fromBob({ ifNotExists: 'create' })))).toBe(
      404,
    );
    expect(
      await status(bob.runs.create(tid, 'echo', fromBob({ multitaskStrategy: 'reject' }))),
    ).toBe(404);
    const streamed = await raw(servers[1]!, `/threads/${tid}/runs/stream`, {
      method: 'POST',
      token: 'token-bob',
      body: JSON.stringify({ assistant_id: 'echo', input: hi('x') }),
    });
    expect(streamed.status).toBe(404);
    const after = await alice.threads.get(tid);
    expect([after.status, after.metadata, after.updated_at]).toEqual([
      before.status,
      before.metadata,
      before.updated_at,
    ]);
    expect(await alice.runs.list(tid)).toHaveLength(1);
    expect(await status(bob.runs.list(tid))).toBe(404);
    expect(await status(bob.runs.get(tid, rid))).toBe(404);
    expect(await status(bob.runs.join(tid, rid))).toBe(404);
    expect(await status(bob.runs.cancel(tid, rid))).toBe(404);
    expect(await status(bob.runs.delete(tid, rid))).toBe(404);
    const joined = await raw(servers[1]!, `/threads/${tid}/runs/${rid}/stream`, {
      token: 'token-bob',
    });
    expect(joined.status).toBe(404);
    const byRun = await raw(servers[1]!, `/runs/${rid}/stream`, { token: 'token-bob' });
    expect(byRun.status).toBe(404);
    const threadStream = await raw(servers[1]!, `/threads/${tid}/stream`, { token: 'token-bob' });
    expect(threadStream.status).toBe(404);
    expect(await status(alice.runs.get(tid, rid))).toBe(200);
  });

  it('a thread a run creates belongs to the run creator', async () => {
    const id = randomUUID();
    const chunks = [];
    for await (const chunk of bob.runs.stream(id, 'echo', {
      input: hi('new'),
      ifNotExists: 'create',
      streamMode: 'values',
    }))
      chunks.push(chunk.event);
    expect(chunks).toContain('values');
    expect((await bob.threads.get(id)).metadata).toMatchObject({ owner: 'bob', graph_id: 'echo' });
    expect(await status(alice.threads.get(id))).toBe(404);
    // Stateless runs too: their kept thread is the caller's.
    const res = await raw(servers[1]!, '/runs', {
      method: 'POST',
      token: 'token-bob',
      body: JSON.stringify({ assistant_id: 'echo', input: hi('s'), on_completion: 'keep' }),
    });
    const stateless = (await res.json()) as { thread_id: string; run_id: string };
    await bob.runs.join(stateless.thread_id, stateless.run_id);
    expect(await status(alice.threads.get(stateless.thread_id))).toBe(404);
    expect((await bob.threads.get(stateless.thread_id)).metadata).toMatchObject({ owner: 'bob' });
  });

  it('bulk cancel is limited to the caller’s threads', async () => {
    const thread = await alice.threads.create();
    const run = await alice.runs.create(thread.thread_id, 'slow', { input: hi('long') });
    const res = await raw(servers[1]!, '/runs/cancel', {
      method: 'POST',
      token: 'token-bob',
      body: JSON.stringify({ thread_id: thread.thread_id, run_ids: [run.run_id] }),
    });
    expect(res.status).toBe(404);
    const all = await raw(servers[1]!, '/runs/cancel', {
      method: 'POST',
      token: 'token-bob',
      body: JSON.stringify({ status: 'all' }),
    });
    expect(all.status).toBe(403);
    await alice.runs.join(thread.thread_id, run.run_id);
    expect((await alice.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
  });
});

describe('crons', () => {
  it('are owned and filtered', async () => {
    const thread = await alice.threads.create();
    const cron = await alice.crons.createForThread(thread.thread_id, 'echo', {
      schedule: '0 0 1 1 *',
      input: hi('yearly'),
    });
    expect(cron.metadata).toMatchObject({ owner: 'alice' });
    expect((await alice.crons.search({})).map((c) => c.cron_id)).toContain(cron.cron_id);
    expect(await bob.crons.search({})).toEqual([]);
    expect(await bob.crons.count({})).toBe(0);
    expect(await status(bob.crons.delete(cron.cron_id))).toBe(404);
    expect(
      await status(bob.crons.createForThread(thread.thread_id, 'echo', { schedule: '0 0 1 1 *' })),
    ).toBe(404);
    expect(await alice.crons.count({})).toBe(1);
  });
});

describe('assistants', () => {
  it('are owned on create, filtered on search and update; a handler returning false is 403', async () => {
    const mine = await alice.assistants.create({ graphId: 'echo', name: 'alice-bot' });
    expect(mine.metadata).toMatchObject({ owner: 'alice' });
    expect((await alice.assistants.search({})).map((a) => a.assistant_id)).toEqual([
      mine.assistant_id,
    ]);
    expect(await bob.assistants.search({})).toEqual([]);
    expect(await bob.assistants.count({})).toBe(0);
    expect(await status(bob.assistants.update(mine.assistant_id, { name: 'taken' }))).toBe(404);
    expect(await status(alice.assistants.delete(mine.assistant_id))).toBe(403);
    expect((await alice.assistants.get(mine.assistant_id)).name).toBe('alice-bot');
  });
});

describe('store', () => {
  it('items live under the user’s namespace as the handler rewrote it', async () => {
    await alice.store.putItem(['notes'], 'k', { text: 'alice secret' });
    expect((await alice.store.getItem(['notes'], 'k'))?.value).toEqual({ text: 'alice secret' });
    expect(await bob.store.getItem(['notes'], 'k').catch(() => null)).toBeNull();
    expect((await bob.store.searchItems(['notes'])).items).toEqual([]);
    expect((await alice.store.searchItems(['notes'])).items.map((i) => i.namespace)).toEqual([
      ['alice', 'notes'],
    ]);
    expect((await bob.store.listNamespaces()).namespaces).toEqual([]);
    await bob.store.deleteItem(['notes'], 'k');
    expect((await alice.store.getItem(['notes'], 'k'))?.value).toEqual({ text: 'alice secret' });
  });
});

describe('A2A', () => {
  const rpc = (server: RunningServer, token: string, method: string, params: unknown) =>
    raw(server, '/a2a/echo', {
      method: 'POST',
      token,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });

  it('tasks belong to their sender', async () => {
    const sent = await rpc(servers[0]!, 'token-alice', 'message/send', {
      message: { role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text: 'hi' }] },
    });
    const task = ((await sent.json()) as { result: { id: string; contextId: string } }).result;
    expect(task.id).toBeTruthy();
    expect((await alice.threads.get(task.contextId)).metadata).toMatchObject({ owner: 'alice' });
    const mine = await rpc(servers[1]!, 'token-alice', 'tasks/get', { id: task.id });
    expect(((await mine.json()) as { result: { id: string } }).result.id).toBe(task.id);
    expect((await rpc(servers[1]!, 'token-bob', 'tasks/get', { id: task.id })).status).toBe(404);
    expect((await rpc(servers[1]!, 'token-bob', 'tasks/cancel', { id: task.id })).status).toBe(404);
    const intoAlice = await rpc(servers[1]!, 'token-bob', 'message/send', {
      message: {
        role: 'user',
        messageId: randomUUID(),
        contextId: task.contextId,
        parts: [{ kind: 'text', text: 'let me in' }],
      },
    });
    expect(intoAlice.status).toBe(404);
    expect((await rpc(servers[0]!, '', 'tasks/get', { id: task.id })).status).toBe(401);
  });
});

describe("graphdock dev's trace store", () => {
  // A database of its own: the file's runtime replicas would claim these runs and not trace them.
  let traced: TestDatabase;
  beforeAll(async () => {
    traced = await createTestDatabase(inject('pgAdminUrl'));
  });
  afterAll(async () => {
    await traced?.drop();
  });
  const runAs = async (server: RunningServer, token: string, prefix = '') => {
    const client = new Client({
      apiUrl: `${server.url}${prefix}`,
      apiKey: null,
      defaultHeaders: { Authorization: `Bearer ${token}` },
    });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'echo', { input: hi('traced') });
    await client.runs.join(thread.thread_id, run.run_id);
    return run.run_id;
  };
  /** The stored runs of a trace, once its root has ended (traces are sent in the background). */
  const storedRuns = async (traceId: string) => {
    const pool = new pg.Pool({ connectionString: traced.url, max: 1 });
    try {
      for (const deadline = Date.now() + 45_000; ;) {
        const { rows } = await pool.query<{ n: number; ended: boolean }>(
          `SELECT count(*)::int AS n, bool_or(id = trace_id AND end_time IS NOT NULL) AS ended
             FROM trace_runs WHERE trace_id = $1`,
          [traceId],
        );
        if (rows[0]!.ended || Date.now() > deadline) return rows[0]!.n;
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      await pool.end();
    }
  };

  /** A presigned feedback token of the dev trace store, made in its database (no key needed). */
  const presignedToken = async () => {
    const pool = new pg.Pool({ connectionString: traced.url, max: 1 });
    try {
      const id = randomUUID();
      await pool.query(
        `INSERT INTO trace_feedback_tokens (id, tenant_id, run_id, feedback_key, expires_at)
           VALUES ($1, $2, $3, 'thumbs', now() + interval '1 hour')`,
        [id, DEV_TRACES_TENANT, randomUUID()],
      );
      return id;
    } finally {
      await pool.end();
    }
  };

  it("keeps the runs' traces: the app's users neither guard nor read it, API keys do", async () => {
    const keyed = await startServer({
      command: 'dev',
      databaseUrl: traced.url,
      config: CONFIG,
      env: { GRAPHDOCK_API_KEYS: 'trace-reader-key' },
    });
    const keyless = await startServer({ command: 'dev', databaseUrl: traced.url, config: CONFIG });
    try {
      // Without a configured key the runtime's tracer has one of its own.
      expect(await storedRuns(await runAs(keyless, 'token-alice'))).toBeGreaterThan(1);
      const runId = await runAs(keyed, 'token-alice');
      expect(await storedRuns(runId)).toBeGreaterThan(1);
      const read = (headers: Record<string, string>) =>
        fetch(`${keyed.url}/api/v1/runs/${runId}`, { headers }).then((r) => r.status);
      expect(await read({ 'x-api-key': 'trace-reader-key' })).toBe(200);
      expect(await read({ authorization: 'Bearer token-alice' })).toBe(401);
      expect(await read({})).toBe(401);
      // The key opens the trace store only: the app's routes still ask the app.
      const threads = await fetch(`${keyed.url}/threads/search`, {
        method: 'POST',
        headers: { 'x-api-key': 'trace-reader-key', 'content-type': 'application/json' },
        body: '{}',
      });
      expect(threads.status).toBe(401);
      // A presigned feedback token, made with the key, is used without any.
      const made = await fetch(`${keyed.url}/api/v1/feedback/tokens`, {
        method: 'POST',
        headers: { 'x-api-key': 'trace-reader-key', 'content-type': 'application/json' },
        body: JSON.stringify({ run_id: runId, feedback_key: 'thumbs' }),
      });
      const token = (await made.json()) as { id: string; url: string };
      expect(token.url).toBe(`${keyed.url}/api/v1/feedback/tokens/${token.id}`);
      expect((await fetch(`${token.url}?score=1`)).status).toBe(200);
      expect((await fetch(`${keyed.url}/api/v1/feedback?run=${runId}`)).status).toBe(401);
    } finally {
      await Promise.all([keyed.stop(), keyless.stop()]);
    }
  });

  it('keeps them behind a custom app that authenticates first, and under a mount prefix', async () => {
    const fixtures = join(REPO_ROOT, 'test', 'fixtures', 'custom-app');
    const authFirst = await startServer({
      command: 'dev',
      databaseUrl: traced.url,
      config: join(fixtures, 'auth.json'),
    });
    const prefixed = await startServer({
      command: 'dev',
      databaseUrl: traced.url,
      config: join(fixtures, 'open-routes.json'),
      okPath: '/api/ok',
    });
    try {
      expect(await storedRuns(await runAs(authFirst, 'token-alice'))).toBeGreaterThan(1);
      expect(await storedRuns(await runAs(prefixed, 'token-bob', '/api'))).toBeGreaterThan(1);
      const read = await fetch(`${authFirst.url}/api/v1/runs/query`, {
        method: 'POST',
        headers: { authorization: 'Bearer token-alice', 'content-type': 'application/json' },
        body: '{}',
      });
      expect(read.status).toBe(401);
      // A presigned feedback token's URL needs no credential, there and under the prefix.
      const use = async (base: string) =>
        (await fetch(`${base}/v1/feedback/tokens/${await presignedToken()}?score=1`)).status;
      expect(await use(`${authFirst.url}/api`)).toBe(200);
      expect(await use(`${prefixed.url}/api/api`)).toBe(200);
      expect((await fetch(`${prefixed.url}/api/api/v1/feedback`)).status).toBe(401);
    } finally {
      await Promise.all([authFirst.stop(), prefixed.stop()]);
    }
  });
});
