// `http.app`: a Hono app written for the official JS server, mounted in front of the API on two
// replicas of one database: its routes (JSON, a body, SSE), a route shadowing a built-in one, a
// middleware adding a header to built-in answers (streams included), `/ok` that cannot be
// shadowed; custom auth on custom routes with `enable_custom_route_auth` and `auth_first`, and
// off by default with `mount_prefix`.
import { join } from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT, startServer, type RunningServer } from '../support/server.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'custom-app');
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('a custom Hono app on two replicas', () => {
  let db: TestDatabase;
  const servers: RunningServer[] = [];
  beforeAll(async () => {
    db = await createTestDatabase(inject('pgAdminUrl'));
    for (let i = 0; i < 2; i++)
      servers.push(
        await startServer({ databaseUrl: db.url, config: join(FIXTURES, 'langgraph.json') }),
      );
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await db?.drop();
  });
  const url = (i: number) => servers[i]!.url;

  it('serves its routes: JSON, a JSON body, and a server-sent stream', async () => {
    const hello = await fetch(`${url(0)}/custom/hello`);
    expect(hello.status).toBe(200);
    expect(await hello.json()).toEqual({ hello: 'world', user: null });
    expect(hello.headers.get('x-custom-middleware')).toBe('seen');

    const echo = await fetch(`${url(1)}/custom/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: [1, 2] }),
    });
    expect(await echo.json()).toEqual({ received: { a: [1, 2] } });

    const events = await fetch(`${url(0)}/custom/events`);
    expect(events.headers.get('content-type')).toMatch(/text\/event-stream/);
    const text = await events.text();
    expect(text.match(/event: tick/g)).toHaveLength(3);
  });

  it('shadows a built-in route but not /ok', async () => {
    const client = new Client({ apiUrl: url(0), apiKey: null });
    expect(await client.assistants.search()).toEqual([
      { assistant_id: 'shadowed', name: 'from the custom app' },
    ]);
    expect(await (await fetch(`${url(1)}/ok`)).json()).toEqual({ ok: true });
  });

  it('its middleware wraps the built-in API, streams included, across replicas', async () => {
    const created = await fetch(`${url(0)}/threads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { via: 'a' } }),
    });
    expect(created.status).toBe(200);
    expect(created.headers.get('x-custom-middleware')).toBe('seen');
    const thread = (await created.json()) as { thread_id: string };

    const b = new Client({ apiUrl: url(1), apiKey: null });
    expect((await b.threads.get(thread.thread_id)).metadata).toMatchObject({ via: 'a' });
    const parts: string[] = [];
    for await (const part of b.runs.stream(thread.thread_id, 'echo', {
      input: hi('through the bridge'),
      streamMode: 'values',
    }))
      parts.push(part.event);
    expect(parts[0]).toBe('metadata');
    expect(parts).toContain('values');

    const streamed = await fetch(`${url(0)}/threads/${thread.thread_id}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'echo', input: hi('raw'), stream_mode: ['values'] }),
    });
    expect(streamed.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(streamed.headers.get('x-custom-middleware')).toBe('seen');
    expect(await streamed.text()).toContain('echo: raw');

    const a = new Client({ apiUrl: url(0), apiKey: null });
    const state = await a.threads.getState<{ messages: { content: string }[] }>(thread.thread_id);
    expect(state.values.messages.map((m) => m.content)).toContain('echo: through the bridge');
    expect(await a.runs.wait(null, 'echo', { input: hi('stateless') })).toMatchObject({
      messages: [{ content: 'stateless' }, { content: 'echo: stateless' }],
    });
  });
});

describe('custom auth on custom routes, before the middleware', () => {
  const rt = useRuntime({ config: join(FIXTURES, 'auth.json') });

  it('authenticates custom routes and runs the middleware only once authenticated', async () => {
    const anonymous = await fetch(`${rt.url}/custom/hello`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    expect(anonymous.headers.get('x-custom-middleware')).toBeNull();

    const alice = await fetch(`${rt.url}/custom/hello`, { headers: bearer('token-alice') });
    expect(await alice.json()).toEqual({ hello: 'world', user: 'alice' });

    const refused = await fetch(`${rt.url}/threads/search`, { method: 'POST' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-custom-middleware')).toBeNull();

    const client = new Client({
      apiUrl: rt.url,
      apiKey: null,
      defaultHeaders: bearer('token-alice'),
    });
    const thread = await client.threads.create();
    expect(thread.metadata).toMatchObject({ owner: 'alice' });
    const bob = new Client({ apiUrl: rt.url, apiKey: null, defaultHeaders: bearer('token-bob') });
    await expect(bob.threads.get(thread.thread_id)).rejects.toThrow(/404/);
  });
});

describe('custom auth with custom routes left open, under a mount prefix', () => {
  const rt = useRuntime({ config: join(FIXTURES, 'open-routes.json'), okPath: '/api/ok' });

  it('serves custom routes to anyone, the API only when authenticated, middleware first', async () => {
    const open = await fetch(`${rt.url}/api/custom/hello`);
    expect(open.status).toBe(200);
    expect(await open.json()).toEqual({ hello: 'world', user: null });

    const refused = await fetch(`${rt.url}/api/threads/search`, { method: 'POST' });
    expect(refused.status).toBe(401);
    // The middleware runs before authentication, so it sees the refusal too.
    expect(refused.headers.get('x-custom-middleware')).toBe('seen');

    const client = new Client({
      apiUrl: `${rt.url}/api`,
      apiKey: null,
      defaultHeaders: bearer('token-alice'),
    });
    const thread = await client.threads.create();
    expect((await client.threads.get(thread.thread_id)).thread_id).toBe(thread.thread_id);
  });
});
