// PostgreSQL restarted under two replicas with runs in flight: no replica dies (an unhandled
// rejection would end it with code 86), runs retry their writes or are handed back, waiting
// clients get their result or a clear error, new requests succeed as soon as the database is
// back, each process keeps exactly one listening connection, and cross-replica cancel and
// streams work afterwards. Each experiment prints its counts.
import { randomUUID } from 'node:crypto';
import { Client } from '@langchain/langgraph-sdk';
import pg from 'pg';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../support/server.js';
import {
  startRestartablePostgres,
  type RestartablePostgres,
} from '../support/restartable-postgres.js';

const UNHANDLED_EXIT = 86;
const STEP_MS = 500;
const env = {
  GRAPHDOCK_UNHANDLED_REJECTION_EXIT_CODE: String(UNHANDLED_EXIT),
  GRAPHDOCK_SLOW_STEP_MS: String(STEP_MS),
  BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS: '2',
  // Longer than the longest outage here: handing a run over by lease expiry while its worker
  // still runs it is the lease fencing's case, not this file's.
  GRAPHDOCK_RUN_LEASE_SECS: '60',
  // Load that meets the database away sees statuses of its own making (refused, retried):
  // `refusedWhileDown` checks what a client is told, the suite's status check need not.
  GRAPHDOCK_RESPONSE_LOG: undefined,
  LOG_LEVEL: 'info',
};
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
type Messages = { messages: { type?: string; content: string }[] };

interface Replica {
  name: string;
  server: RunningServer;
  client: Client;
}

let db: RestartablePostgres;
const replicas: Replica[] = [];

beforeAll(async () => {
  db = await startRestartablePostgres();
  const started = await Promise.all(
    ['a', 'b'].map(async (name) => {
      const server = await startServer({ databaseUrl: db.url, env });
      const client = new Client({
        apiUrl: server.url,
        apiKey: null,
        callerOptions: { maxRetries: 0 },
      });
      return { name, server, client };
    }),
  );
  replicas.push(...started);
});
afterAll(async () => {
  await Promise.all(replicas.map((r) => r.server.stop('SIGKILL')));
  await db?.destroy();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(r: Replica): string {
  const { exitCode, signalCode } = r.server.process;
  if (exitCode === null && signalCode === null) return 'alive';
  return `exited with ${exitCode ?? signalCode}:\n${r.server.output().slice(-3000)}`;
}

/** Listening connections per process, as PostgreSQL sees them. */
async function listeners(): Promise<number> {
  const client = new pg.Client({ connectionString: db.adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'graphdock-listen'`,
    );
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

/** Waits for one listening connection per replica, then checks that it stays exactly that. */
async function expectOneListenerEach(): Promise<number[]> {
  const seen: number[] = [];
  const deadline = Date.now() + 20_000;
  for (;;) {
    const n = await listeners();
    seen.push(n);
    if (n === replicas.length) break;
    if (Date.now() > deadline) throw new Error(`listening connections: ${seen.join(', ')}`);
    await sleep(200);
  }
  for (let i = 0; i < 5; i++) {
    await sleep(300);
    seen.push(await listeners());
  }
  expect(seen.slice(-5)).toEqual(Array(5).fill(replicas.length));
  return seen;
}

/** Time until a new run succeeds on every replica (POST /runs/wait, no client retries). */
async function timeToFirstRun(since: number): Promise<Record<string, number>> {
  const times: Record<string, number> = {};
  await Promise.all(
    replicas.map(async (r) => {
      for (let i = 0; ; i++) {
        try {
          const res = await fetch(`${r.server.url}/runs/wait`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ assistant_id: 'echo', input: hi(`probe ${i}`) }),
          });
          const body = (await res.json()) as Messages;
          if (res.ok && body.messages?.at(-1)?.content === `echo: probe ${i}`) break;
        } catch {
          // not yet
        }
        if (performance.now() - since > 30_000)
          throw new Error(
            `${r.name}: no run succeeded (${alive(r)})\n${r.server.output().slice(-4000)}`,
          );
        await sleep(25);
      }
      times[r.name] = Math.round(performance.now() - since);
    }),
  );
  return times;
}

interface Load {
  stop(): Promise<void>;
  accepted: { thread: string; run: string; content: string }[];
  refused: number;
  waits: { ok: number; errors: number; wrong: number; maxMs: number };
  /** `refused`: no stream opened; `errorEvents`: it ended with an `error` event. */
  streams: { ok: number; refused: number; errorEvents: number; silent: number; maxMs: number };
}

/** Background runs on `threads` threads through both replicas, and waits and streams beside them. */
async function startLoad(tag: string, threads: number): Promise<Load> {
  const ids: string[] = [];
  for (let i = 0; i < threads; i++)
    ids.push((await replicas[i % 2]!.client.threads.create()).thread_id);
  let stopping = false;
  const load: Load = {
    stop: async () => undefined,
    accepted: [],
    refused: 0,
    waits: { ok: 0, errors: 0, wrong: 0, maxMs: 0 },
    streams: { ok: 0, refused: 0, errorEvents: 0, silent: 0, maxMs: 0 },
  };
  const creators = ids.map(async (thread, t) => {
    for (let n = 0; !stopping; n++) {
      const content = `${tag} t${t} r${n}`;
      try {
        const run = await replicas[(t + n) % 2]!.client.runs.create(thread, 'slow', {
          input: hi(content),
        });
        load.accepted.push({ thread, run: run.run_id, content });
      } catch {
        load.refused++;
      }
      await sleep(900);
    }
  });
  const waiters = replicas.map(async (r, w) => {
    for (let n = 0; !stopping; n++) {
      const content = `${tag} wait ${w} ${n}`;
      const started = performance.now();
      try {
        const result = (await r.client.runs.wait(null, 'echo', { input: hi(content) })) as Messages;
        if (result.messages?.at(-1)?.content === `echo: ${content}`) load.waits.ok++;
        else load.waits.wrong++;
      } catch {
        load.waits.errors++;
        await sleep(200);
      }
      load.waits.maxMs = Math.max(load.waits.maxMs, performance.now() - started);
    }
  });
  const streamers = replicas.map(async (r, w) => {
    for (let n = 0; !stopping; n++) {
      const content = `${tag} stream ${w} ${n}`;
      const started = performance.now();
      let opened = false;
      let values = false;
      let error = false;
      try {
        for await (const part of r.client.runs.stream(null, 'slow', { input: hi(content) })) {
          opened = true;
          if (part.event === 'values') values = true;
          if (part.event === 'error') error = true;
        }
      } catch {
        await sleep(200);
      }
      if (!opened) load.streams.refused++;
      else if (error) load.streams.errorEvents++;
      else if (values) load.streams.ok++;
      else load.streams.silent++;
      load.streams.maxMs = Math.max(load.streams.maxMs, performance.now() - started);
    }
  });
  load.stop = async () => {
    stopping = true;
    await Promise.all([...creators, ...waiters, ...streamers]);
  };
  return load;
}

interface Counts {
  accepted: number;
  success: number;
  otherStatus: number;
  lost: number;
  twice: number;
  busy: number;
}

/** Once every accepted run has ended: how each ended, and what the threads hold. */
async function count(load: Load): Promise<Counts> {
  const client = replicas[0]!.client;
  const threads = [...new Set(load.accepted.map((a) => a.thread))];
  const deadline = Date.now() + 90_000;
  for (const thread of threads) {
    while (
      (await client.runs.list(thread, { limit: 1000 })).some(
        (r) => r.status === 'pending' || r.status === 'running',
      )
    ) {
      if (Date.now() > deadline) break;
      await sleep(250);
    }
  }
  await sleep(500);
  const counts: Counts = {
    accepted: load.accepted.length,
    success: 0,
    otherStatus: 0,
    lost: 0,
    twice: 0,
    busy: 0,
  };
  for (const thread of threads) {
    const runs = new Map(
      (await client.runs.list(thread, { limit: 1000 })).map((r) => [r.run_id, r.status]),
    );
    const state = await client.threads.getState<Messages>(thread);
    const contents = state.values.messages.map((m) => m.content);
    if ((await client.threads.get(thread)).status === 'busy') counts.busy++;
    for (const a of load.accepted.filter((x) => x.thread === thread)) {
      const status = runs.get(a.run);
      const times = contents.filter((c) => c === a.content).length;
      const seconds = contents.filter((c) => c === `second: first: ${a.content}`).length;
      if (status === 'success') counts.success++;
      else if (status === 'pending' || status === 'running' || status === undefined) counts.lost++;
      else counts.otherStatus++;
      if (status === 'success' && (times !== 1 || seconds !== 1)) counts.lost++;
      if (times > 1 || seconds > 1) counts.twice++;
    }
  }
  return counts;
}

/** A run executing on A is streamed through B and cancelled through B: both go through NOTIFY. */
async function crossReplica(tag: string): Promise<{ joinMs: number; cancelled: string }> {
  const [a, b] = replicas as [Replica, Replica];
  const thread = (await a.client.threads.create()).thread_id;
  // Streamed through A, so it starts on A's worker; joined through B, which only hears of it.
  const created = a.client.runs.stream(thread, 'slow', { input: hi(`${tag} joined`) });
  const first = await created.next();
  const runId = (first.value as { data: { run_id: string } }).data.run_id;
  const started = performance.now();
  let values = 0;
  for await (const part of b.client.runs.joinStream(thread, runId))
    if (part.event === 'values') values++;
  const joinMs = Math.round(performance.now() - started);
  for await (const part of created) void part;
  expect(values).toBeGreaterThan(0);

  const other = (await a.client.threads.create()).thread_id;
  const cancelled = a.client.runs.stream(other, 'slow', { input: hi(`${tag} cancelled`) });
  const meta = await cancelled.next();
  const cancelId = (meta.value as { data: { run_id: string } }).data.run_id;
  await b.client.runs.cancel(other, cancelId);
  for await (const part of cancelled) void part;
  return { joinMs, cancelled: (await b.client.runs.get(other, cancelId)).status };
}

/** Stops PostgreSQL for `downMs` with the load running, and measures the recovery. */
/**
 * What a client is told while the database is down: a REST call is a 503 with Retry-After (the
 * SDKs retry it), a protocol command over a WebSocket an error envelope saying so.
 */
async function refusedWhileDown(r: Replica) {
  const res = await fetch(`${r.server.url}/threads`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  const rest = {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    ...((await res.json()) as Record<string, unknown>),
  };
  const socket = new WebSocket(
    `${r.server.url.replace('http', 'ws')}/threads/${randomUUID()}/stream/events`,
  );
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const reply = new Promise<unknown>((resolve) =>
    socket.once('message', (raw) => resolve(JSON.parse((raw as Buffer).toString()))),
  );
  socket.send(
    JSON.stringify({ id: 7, method: 'run.start', params: { assistant_id: 'echo', input: {} } }),
  );
  const protocol = await reply;
  socket.close();
  return { rest, protocol };
}

async function outage(downMs: number) {
  await db.stop();
  const down = performance.now();
  const refused = await Promise.all(replicas.map(refusedWhileDown));
  await sleep(downMs - (performance.now() - down));
  await db.start();
  const back = performance.now();
  const firstRun = await timeToFirstRun(back);
  const listening = await expectOneListenerEach();
  for (const { rest, protocol } of refused) {
    expect(rest).toEqual({
      status: 503,
      retryAfter: '1',
      detail: 'The database is unavailable; retry shortly',
    });
    expect(protocol).toEqual({
      type: 'error',
      id: 7,
      error: 'unknown_error',
      message: 'The database is unavailable; retry shortly',
    });
  }
  return { firstRun, listening: [...new Set(listening)] };
}

describe('a PostgreSQL outage under two replicas', () => {
  it('survives restarts of a few seconds: nothing lost, nothing twice, no thread left busy', async () => {
    await expectOneListenerEach();
    const load = await startLoad('short', 8);
    await sleep(4000);
    const first = await outage(3000);
    await sleep(3000);
    const second = await outage(3000);
    await sleep(3000);
    await load.stop();
    const counts = await count(load);
    const cross = await crossReplica('short');
    const report = { counts, refused: load.refused, waits: load.waits, streams: load.streams };
    console.log('short restarts', JSON.stringify({ ...report, first, second, cross }));
    for (const r of replicas) expect(alive(r), r.name).toBe('alive');
    expect(counts.lost).toBe(0);
    expect(counts.twice).toBe(0);
    expect(counts.busy).toBe(0);
    expect(counts.otherStatus).toBe(0);
    expect(counts.success).toBe(counts.accepted);
    expect(counts.accepted).toBeGreaterThan(20);
    // A stream never ends as if its run finished when it did not.
    expect(load.streams.silent).toBe(0);
    expect(load.waits.wrong).toBe(0);
    expect(load.waits.maxMs).toBeLessThan(60_000);
    expect(load.streams.maxMs).toBeLessThan(60_000);
    for (const times of [first.firstRun, second.firstRun])
      for (const ms of Object.values(times)) expect(ms).toBeLessThan(10_000);
    // B hears of A's events by NOTIFY: without it, polling ends the join seconds late.
    expect(cross.joinMs).toBeLessThan(STEP_MS * 2 + 2500);
    expect(cross.cancelled).toBe('interrupted');
  }, 150_000);

  it('survives a 20 s outage, and SIGTERM still ends every replica after it', async () => {
    const load = await startLoad('long', 6);
    await sleep(3000);
    const long = await outage(20_000);
    await sleep(3000);
    await load.stop();
    const counts = await count(load);
    const cross = await crossReplica('long');
    const report = { counts, refused: load.refused, waits: load.waits, streams: load.streams };
    console.log('20 s outage', JSON.stringify({ ...report, long, cross }));
    for (const r of replicas) expect(alive(r), r.name).toBe('alive');
    expect(counts.lost).toBe(0);
    expect(counts.twice).toBe(0);
    expect(counts.busy).toBe(0);
    expect(counts.otherStatus).toBe(0);
    expect(counts.success).toBe(counts.accepted);
    expect(load.streams.silent).toBe(0);
    expect(load.waits.wrong).toBe(0);
    expect(load.waits.maxMs).toBeLessThan(70_000);
    for (const ms of Object.values(long.firstRun)) expect(ms).toBeLessThan(10_000);
    expect(cross.joinMs).toBeLessThan(STEP_MS * 2 + 2500);
    expect(cross.cancelled).toBe('interrupted');
    const started = performance.now();
    const codes = await Promise.all(replicas.map((r) => r.server.stop('SIGTERM')));
    console.log('SIGTERM after outages', { codes, ms: Math.round(performance.now() - started) });
    expect(codes).toEqual([0, 0]);
  }, 170_000);
});
