// The server as a process: meta endpoints, API keys, restarts, start-up failures, migrations.
import { join } from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT, exampleGraphIds, runCli, startServer } from '../support/server.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures');
const databases: TestDatabase[] = [];
async function freshDatabase() {
  const db = await createTestDatabase(inject('pgAdminUrl'));
  databases.push(db);
  return db;
}
afterAll(async () => {
  for (const db of databases) await db.drop();
});

describe('meta endpoints', () => {
  const rt = useRuntime();

  it('answers /ok, with and without a database check', async () => {
    expect(await (await rt.http('/ok')).json()).toEqual({ ok: true });
    expect(await (await rt.http('/ok?check_db=1')).json()).toEqual({ ok: true });
  });

  it('reports version and flags on /info', async () => {
    const info = (await (await rt.http('/info')).json()) as Record<string, unknown>;
    expect(info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(info.langgraph_js_version).toMatch(/^\d+\.\d+\.\d+/);
    expect(info.flags).toMatchObject({ assistants: true });
  });

  it('publishes an OpenAPI document generated from the schemas, and its viewer', async () => {
    const doc = (await (await rt.http('/openapi.json')).json()) as {
      openapi: string;
      paths: Record<string, Record<string, { requestBody?: unknown }>>;
    };
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/threads',
        '/threads/search',
        '/assistants/search',
        '/threads/{thread_id}/history',
      ]),
    );
    expect(JSON.stringify(doc.paths['/threads/search']?.post?.requestBody)).toContain('sort_by');
    const docs = await rt.http('/docs');
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('<html');
  });

  it('exposes request counts and latency histograms by route and status on /metrics', async () => {
    await rt.client.threads.search({ limit: 1 });
    await rt.http(`/threads/${crypto.randomUUID()}`);
    const text = await (await rt.http('/metrics')).text();
    expect(text).toMatch(
      /graphdock_http_requests_total\{method="POST",route="\/threads\/search",status="200"\} \d+/,
    );
    expect(text).toMatch(
      /graphdock_http_requests_total\{method="GET",route="\/threads\/:thread_id",status="404"\} 1/,
    );
    expect(text).toMatch(
      /graphdock_http_request_duration_seconds_bucket\{le="0\.005",method="POST",route="\/threads\/search"/,
    );
    expect(text).toContain('graphdock_process_resident_memory_bytes');
  });

  it('answers unknown routes with a JSON 404', async () => {
    const res = await rt.http('/nope');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: 'Not found: GET /nope' });
  });
});

describe('API keys', () => {
  const rt = useRuntime({ env: { GRAPHDOCK_API_KEYS: 'key-one,key-two' } });

  it('requires a valid X-Api-Key on every route but /ok', async () => {
    expect((await rt.http('/ok')).status).toBe(200);
    const missing = await rt.http('/threads/search', { method: 'POST', json: {} });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ detail: 'Missing X-Api-Key header' });
    const wrong = await rt.http('/info', { headers: { 'x-api-key': 'key-three' } });
    expect(wrong.status).toBe(401);
    const right = await rt.http('/info', { headers: { 'x-api-key': 'key-two' } });
    expect(right.status).toBe(200);
  });

  it('accepts the same keys as Authorization: Bearer', async () => {
    const bearer = await rt.http('/info', { headers: { authorization: 'Bearer key-one' } });
    expect(bearer.status).toBe(200);
    const lower = await rt.http('/info', { headers: { authorization: 'bearer key-two' } });
    expect(lower.status).toBe(200);
    const wrong = await rt.http('/info', { headers: { authorization: 'Bearer key-three' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ detail: 'Invalid API key' });
    const basic = await rt.http('/info', { headers: { authorization: 'Basic key-one' } });
    expect(basic.status).toBe(401);
  });

  it('lets the SDK in with its apiKey option and keeps others out', async () => {
    const thread = await rt.client.threads.create({ metadata: { who: 'sdk' } });
    expect(thread.metadata).toEqual({ who: 'sdk' });
    const stranger = new Client({ apiUrl: rt.url, apiKey: 'not-a-key' });
    await expect(stranger.threads.get(thread.thread_id)).rejects.toThrow(/401/);
  });
});

describe('restarts and replicas', () => {
  it('keeps every thread, checkpoint and assistant across a restart', async () => {
    const db = await freshDatabase();
    let server = await startServer({ databaseUrl: db.url });
    const client = new Client({ apiUrl: server.url, apiKey: null });
    const assistant = await client.assistants.create({ graphId: 'echo', name: 'kept' });
    const thread = await client.threads.create({
      graphId: 'echo',
      supersteps: [
        {
          updates: [
            {
              values: { messages: [{ role: 'user', content: 'persist me' }] },
              asNode: '__start__',
            },
          ],
        },
      ],
    });
    const before = await client.threads.getState(thread.thread_id);
    expect(await server.stop()).toBe(0);

    server = await startServer({ databaseUrl: db.url });
    const again = new Client({ apiUrl: server.url, apiKey: null });
    expect((await again.assistants.get(assistant.assistant_id)).name).toBe('kept');
    expect(await again.threads.getState(thread.thread_id)).toEqual(before);
    expect(await again.assistants.count({ metadata: { created_by: 'system' } })).toBe(
      exampleGraphIds().length,
    );
    await server.stop();
  });

  it('lets two replicas start on one empty database at once', async () => {
    const db = await freshDatabase();
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    // Every table, whichever migrations exist: the database is as empty as a new one.
    await admin.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    const [a, b] = await Promise.all([
      startServer({ databaseUrl: db.url }),
      startServer({ databaseUrl: db.url }),
    ]);
    const { rows } = await admin.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM graphdock_migrations WHERE area = 'runtime'",
    );
    expect(rows[0]?.n).toBeGreaterThan(0);
    const created = await new Client({ apiUrl: a.url, apiKey: null }).threads.create({
      metadata: { via: 'a' },
    });
    expect(
      (await new Client({ apiUrl: b.url, apiKey: null }).threads.get(created.thread_id)).metadata,
    ).toEqual({ via: 'a' });
    await admin.end();
    await Promise.all([a.stop(), b.stop()]);
  });

  it('runs migrations alone with `graphdock migrate`, once', async () => {
    const db = await freshDatabase();
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    await admin.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
    const env = { DATABASE_URL: db.url, LOG_LEVEL: 'info' };
    const first = await runCli(['migrate'], env);
    expect(first.code).toBe(0);
    expect(first.output).toMatch(/migrations applied/);
    const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM threads');
    expect(rows[0]?.n).toBe(0);
    const second = await runCli(['migrate'], env);
    expect(second.code).toBe(0);
    expect(second.output).toMatch(/already up to date/);
    await admin.end();
  });
});

describe('start-up', () => {
  it('fails on a broken graph file, naming the file and the cause', async () => {
    const db = await freshDatabase();
    const result = await runCli(
      ['runtime', '--config', join(FIXTURES, 'broken', 'langgraph.json'), '--port', '0'],
      {
        DATABASE_URL: db.url,
      },
    );
    expect(result.code).toBe(1);
    expect(result.output).toContain(join(FIXTURES, 'broken', 'graph.ts'));
    expect(result.output).toContain('boom: the graph module failed to initialise');
  });

  it('fails on a config file with an unknown key, naming the key', async () => {
    const result = await runCli(['runtime', '--config', join(FIXTURES, 'bad-config.json')], {
      DATABASE_URL: 'postgres://x',
    });
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/http\.disable_everything/);
  });

  it('requires DATABASE_URL for `runtime`', async () => {
    const result = await runCli(
      ['runtime', '--config', join(REPO_ROOT, 'examples', 'langgraph.json')],
      {
        DATABASE_URL: undefined,
      },
    );
    expect(result.code).toBe(1);
    expect(result.output).toContain('DATABASE_URL is required');
  });

  it('applies the env file and resolves relative imports inside graph files', async () => {
    const db = await freshDatabase();
    const server = await startServer({
      databaseUrl: db.url,
      config: join(FIXTURES, 'envgraph', 'langgraph.json'),
    });
    try {
      const client = new Client({ apiUrl: server.url, apiKey: null });
      const thread = await client.threads.create({ graphId: 'env' });
      await client.threads.updateState(thread.thread_id, {
        values: { greeting: 'x' },
        asNode: 'hello_from_the_env_file',
      });
      expect((await client.threads.getState(thread.thread_id)).values).toEqual({ greeting: 'x' });
      const schemas = await client.assistants.getSchemas('env');
      expect(Object.keys((schemas.state_schema as { properties: object }).properties)).toEqual([
        'greeting',
      ]);
      const drawing = await client.assistants.getGraph('env');
      expect(drawing.nodes.map((n) => n.id)).toContain('hello_from_the_env_file');
    } finally {
      await server.stop();
    }
  });
});
