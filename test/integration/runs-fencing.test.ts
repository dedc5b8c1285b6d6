// A worker that lost its lease writes nothing more, and a retried run never reuses an event id.
// Real server processes on one PostgreSQL; a replica is frozen with SIGSTOP or killed with kill -9.
import { Client } from '@langchain/langgraph-sdk';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startServer, type RunningServer } from '../support/server.js';

type Messages = { messages: { content: string }[] };
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const contents = (values: unknown) => (values as Messages).messages.map((m) => m.content);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// A short lease, so that a frozen or dead worker's run is taken over within seconds.
const env = { GRAPHDOCK_SLOW_STEP_MS: '1500', GRAPHDOCK_RUN_LEASE_SECS: '2' };

let db: TestDatabase;
const servers: RunningServer[] = [];
beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
});
afterAll(async () => {
  for (const s of servers) s.process.kill('SIGCONT');
  await Promise.all(servers.map((s) => s.stop('SIGKILL')));
  await db.drop();
});

async function server(): Promise<{ server: RunningServer; client: Client }> {
  const s = await startServer({ databaseUrl: db.url, env });
  servers.push(s);
  return { server: s, client: new Client({ apiUrl: s.url, apiKey: null }) };
}

async function until(check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(50);
  }
  return false;
}

describe('fenced writes', () => {
  it('a worker frozen past its lease wakes up and changes nothing: the next run keeps its output', async () => {
    const a = await server();
    const thread = await a.client.threads.create();
    const first = await a.client.runs.create(thread.thread_id, 'slow', { input: hi('one') });
    await until(
      async () => (await a.client.runs.get(thread.thread_id, first.run_id)).status === 'running',
      10_000,
    );
    // Frozen mid-step: its lease lapses while it cannot renew it.
    a.server.process.kill('SIGSTOP');
    const b = await server();
    let before: Awaited<ReturnType<Client['threads']['getState']>>;
    let history: number;
    try {
      // B takes the run over (attempt 2) and runs it to its end, then runs the next one.
      await b.client.runs.join(thread.thread_id, first.run_id);
      expect((await b.client.runs.get(thread.thread_id, first.run_id)).status).toBe('success');
      await b.client.runs.wait(thread.thread_id, 'slow', { input: hi('two') });
      before = await b.client.threads.getState(thread.thread_id);
      history = (await b.client.threads.getHistory(thread.thread_id, { limit: 100 })).length;
    } finally {
      a.server.process.kill('SIGCONT');
    }
    const expected = [
      'one',
      'first: one',
      'second: first: one',
      'two',
      'first: two',
      'second: first: two',
    ];
    expect(contents(before.values)).toEqual(expected);
    // A wakes up within its step, whose writes are refused; it says so and stops.
    const noticed = await until(() => /taken over by another worker/.test(a.server.output()), 8000);
    // Long enough for A, had it carried on, to finish both of its steps.
    await sleep(noticed ? 500 : 4000);
    const after = await b.client.threads.getState(thread.thread_id);
    expect(contents(after.values)).toEqual(expected);
    expect(after.checkpoint).toEqual(before.checkpoint);
    expect((await b.client.threads.getHistory(thread.thread_id, { limit: 100 })).length).toBe(
      history,
    );
    const thread1 = await b.client.threads.get(thread.thread_id);
    expect(thread1.status).toBe('idle');
    expect(contents(thread1.values)).toEqual(expected);
    for (const run of await b.client.runs.list(thread.thread_id))
      expect(run.status).toBe('success');
    expect(noticed).toBe(true);
    // A is still a working replica.
    const thread2 = await a.client.threads.create();
    const result = await a.client.runs.wait(thread2.thread_id, 'slow', { input: hi('three') });
    expect(contents(result)).toEqual(['three', 'first: three', 'second: first: three']);
    await Promise.all([a.server.stop(), b.server.stop()]);
  }, 90_000);

  it('a retried run numbers its events past every id handed out live, so a resume misses none', async () => {
    const a = await server();
    const thread = await a.client.threads.create();
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    const seen: { id: number; event: string; data: unknown }[] = [];
    const stop = new AbortController();
    let runId = '';
    let locked = false;
    try {
      // A default stream (not resumable): its events reach this client as they are produced.
      const stream = a.client.runs.stream(thread.thread_id, 'slow', {
        input: hi('live'),
        signal: stop.signal,
        onRunCreated: ({ run_id }) => {
          runId = run_id;
        },
      });
      for await (const part of stream as AsyncIterable<{
        id?: string;
        event: string;
        data: unknown;
      }>) {
        seen.push({ id: Number(part.id), event: part.event, data: part.data });
        if (!locked) {
          // From now on nothing reaches the log: what this client gets is not durable.
          await locker.query('BEGIN');
          await locker.query('LOCK TABLE run_event_batches IN EXCLUSIVE MODE');
          locked = true;
        }
        if (part.event === 'values' && contents(part.data).includes('first: live')) break;
      }
    } finally {
      a.server.process.kill('SIGKILL');
      stop.abort();
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
    const lastSeen = Math.max(...seen.map((e) => e.id));
    expect(seen.at(-1)?.event).toBe('values');
    expect(lastSeen).toBeGreaterThan(0);

    const b = await server();
    const resumed: { id: number; event: string; data: unknown }[] = [];
    for await (const part of b.client.runs.joinStream(thread.thread_id, runId, {
      lastEventId: String(lastSeen),
    }) as AsyncIterable<{ id?: string; event: string; data: unknown }>)
      resumed.push({ id: Number(part.id), event: part.event, data: part.data });
    // The retry's own events all come after the last id this client saw, none skipped.
    expect(resumed.every((e) => e.id > lastSeen)).toBe(true);
    expect(resumed[0]).toMatchObject({ event: 'metadata', data: { attempt: 2 } });
    expect(contents(resumed.at(-1)?.data)).toEqual(['live', 'first: live', 'second: first: live']);
    expect((await b.client.runs.get(thread.thread_id, runId)).status).toBe('success');
    await b.server.stop();
  }, 90_000);
});
