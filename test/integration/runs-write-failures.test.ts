// A run whose end cannot be written, and a stream whose log cannot be read: the clients waiting
// on them are told so at once, with an error, rather than waiting for a lease to run out or
// seeing the stream end as if the run had finished.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startServer, type RunningServer } from '../support/server.js';

const hi = (content: string) => ({ messages: [{ role: 'user', content }] });

let db: TestDatabase;
let server: RunningServer;
let admin: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  server = await startServer({
    databaseUrl: db.url,
    env: { GRAPHDOCK_UNHANDLED_REJECTION_EXIT_CODE: '86' },
  });
});
afterAll(async () => {
  await server?.stop('SIGKILL');
  await admin?.end();
  await db?.drop();
});

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
}

/** The names of an SSE body's events, in order. */
function eventNames(text: string): string[] {
  return [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]!);
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: Math.round(performance.now() - started) };
}

describe('failed writes and reads of a run', () => {
  it('answers waits and streams of a run whose end cannot be written with an error, at once', async () => {
    // Every end marker is refused: the statement that ends a run fails, whatever it holds.
    await admin.query(`CREATE FUNCTION refuse_end() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.events::text LIKE '%"__end__"%' THEN RAISE EXCEPTION 'end marker refused'; END IF;
        RETURN NEW;
      END $$`);
    await admin.query(`CREATE TRIGGER refuse_end BEFORE INSERT ON run_event_batches
      FOR EACH ROW EXECUTE FUNCTION refuse_end()`);
    try {
      const stateless = await timed(async () => {
        const res = await post('/runs/wait', { assistant_id: 'echo', input: hi('stateless') });
        return { status: res.status, body: (await res.json()) as { __error__?: unknown } };
      });
      const { thread_id } = (await (await post('/threads', {})).json()) as { thread_id: string };
      const onThread = await timed(async () => {
        const res = await post(`/threads/${thread_id}/runs/wait`, {
          assistant_id: 'echo',
          input: hi('on a thread'),
        });
        return { status: res.status, body: (await res.json()) as { __error__?: unknown } };
      });
      const streamed = await timed(async () => {
        const res = await post('/runs/stream', {
          assistant_id: 'echo',
          input: hi('streamed'),
          stream_mode: ['values'],
        });
        return eventNames(await res.text());
      });
      console.log('end not written', { stateless, onThread, streamed });
      for (const wait of [stateless, onThread]) {
        expect(wait.value.status).toBe(200);
        const error = wait.value.body.__error__ as { message?: string } | undefined;
        expect(error?.message).toContain('end marker refused');
        expect(wait.ms).toBeLessThan(10_000);
      }
      expect(streamed.value.at(-1)).toBe('error');
      expect(streamed.ms).toBeLessThan(10_000);
      // The run says it failed, and its thread takes the next run.
      const runs = (await (await fetch(`${server.url}/threads/${thread_id}/runs`)).json()) as {
        status: string;
      }[];
      expect(runs.map((r) => r.status)).toEqual(['error']);
      const thread = (await (await fetch(`${server.url}/threads/${thread_id}`)).json()) as {
        status: string;
      };
      expect(thread.status).not.toBe('busy');
    } finally {
      await admin.query('DROP TRIGGER refuse_end ON run_event_batches');
      await admin.query('DROP FUNCTION refuse_end()');
    }
    const res = await post('/runs/wait', { assistant_id: 'echo', input: hi('after') });
    const body = (await res.json()) as { messages: { content: string }[] };
    expect(body.messages.at(-1)?.content).toBe('echo: after');
    expect(server.process.exitCode).toBeNull();
  });

  it('ends a stream whose log cannot be read with an error event', async () => {
    const { thread_id } = (await (await post('/threads', {})).json()) as { thread_id: string };
    const run = (await (
      await post(`/threads/${thread_id}/runs`, { assistant_id: 'echo', input: hi('x') })
    ).json()) as { run_id: string };
    await fetch(`${server.url}/threads/${thread_id}/runs/${run.run_id}/join`);
    const join = () =>
      fetch(`${server.url}/threads/${thread_id}/runs/${run.run_id}/stream`, {
        signal: AbortSignal.timeout(20_000),
      }).then(async (r) => eventNames(await r.text()));
    expect((await join()).at(-1)).toBe('values');
    // The log's table is away: reading it fails with an error no retry cures.
    await admin.query('ALTER TABLE run_event_batches RENAME TO run_event_batches_away');
    let events: string[];
    try {
      events = await join();
    } finally {
      await admin.query('ALTER TABLE run_event_batches_away RENAME TO run_event_batches');
    }
    expect(events).toEqual(['error']);
    expect(server.process.exitCode).toBeNull();
  });
});
