// One `graphdock runtime` with GRAPHDOCK_WORKERS=2 acts as two replicas: the replica scenarios of
// runs-replicas.test.ts, with the two processes being cluster workers behind one port. Each SDK
// client here keeps one connection, so it talks to one worker, found from /proc.
import { Client } from '@langchain/langgraph-sdk';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { REPO_ROOT, startServer, type RunningServer } from '../support/server.js';

type Messages = { messages: { content: string }[] };
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const contents = (values: unknown) => (values as Messages).messages.map((m) => m.content);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const env = {
  GRAPHDOCK_SLOW_STEP_MS: '800',
  GRAPHDOCK_RUN_LEASE_SECS: '2',
  GRAPHDOCK_WORKERS: '2',
};

let db: TestDatabase;
let sql: pg.Pool;
/** One server for the scenarios, in order: starting one costs tens of seconds on a loaded CI. */
let s: RunningServer;
const servers: RunningServer[] = [];
const agents: Agent[] = [];
beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  sql = new pg.Pool({ connectionString: db.url, max: 2 });
  s = await server();
}, 120_000);
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGKILL')));
  await Promise.all(agents.map((a) => a.destroy()));
  await sql.end();
  await db.drop();
});

async function server(extraEnv: Record<string, string> = {}): Promise<RunningServer> {
  const s = await startServer({ databaseUrl: db.url, env: { ...env, ...extraEnv } });
  servers.push(s);
  return s;
}

/** The cluster workers of a primary: its child processes bar tsx's esbuild service. */
function childPids(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        // The comm field may hold spaces; ppid is the second field after its closing parenthesis.
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== pid) return false;
        return readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('graphdock');
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The process among `pids` holding the server side of the connection from `clientPort`. */
function connectionOwner(serverPort: number, clientPort: number, pids: number[]) {
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
  let inode: string | undefined;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[1]?.endsWith(`:${hex(serverPort)}`) && cols[2]?.endsWith(`:${hex(clientPort)}`))
        inode = cols[9];
    }
  }
  return pids.find((pid) => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`;
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  });
}

interface Pinned {
  client: Client;
  /** The worker process serving this client's one connection. */
  pid: number;
}

/** An SDK client on one kept-alive connection, so on one worker; on another than `not` if given. */
async function pinned(s: RunningServer, not?: number): Promise<Pinned> {
  const connect = buildConnector({});
  // A replacement worker takes a while to load on a busy machine.
  for (const deadline = Date.now() + 100_000; Date.now() < deadline;) {
    let socket: Socket | undefined;
    const agent = new Agent({
      connections: 1,
      keepAliveTimeout: 60_000,
      connect: (options, callback) =>
        connect(options, (err, s) => {
          socket = s ?? undefined;
          if (err) callback(err, null);
          else callback(null, s);
        }),
    });
    agents.push(agent);
    const client = new Client({
      apiUrl: s.url,
      apiKey: null,
      callerOptions: {
        fetch: (url: string, init: object) => undiciFetch(url, { ...init, dispatcher: agent }),
      },
    });
    await client.assistants.search({ limit: 1 });
    const pid =
      socket?.localPort === undefined
        ? undefined
        : connectionOwner(s.port, socket.localPort, childPids(s.process.pid!));
    if (pid !== undefined && pid !== not) return { client, pid };
    await agent.close();
    // The other worker may still be starting.
    await sleep(200);
  }
  throw new Error(`no connection reached a worker other than ${not}`);
}

/** The pid in the lease of a running run (`worker-<pid>-<uuid>`), once it has one. */
async function runningOn(runId: string): Promise<number> {
  let last: unknown;
  for (let i = 0; i < 200; i++) {
    const { rows } = await sql.query<{ status: string; worker_id: string | null }>(
      'SELECT status, worker_id FROM runs WHERE run_id = $1',
      [runId],
    );
    last = rows[0];
    const match = /^worker-(\d+)-/.exec(rows[0]?.worker_id ?? '');
    if (rows[0]?.status === 'running' && match) return Number(match[1]);
    await sleep(25);
  }
  throw new Error(`run ${runId} did not start: ${JSON.stringify(last)}`);
}

/**
 * A slow run started by a stream through `on`, so leased by `on`'s worker. `waiting` resolves to
 * its last values, or to the error that ended the stream.
 */
async function slowRunOn(on: Pinned, content: string) {
  const thread = await on.client.threads.create();
  const stream = on.client.runs.stream(thread.thread_id, 'slow', { input: hi(content) });
  const parts = stream[Symbol.asyncIterator]();
  const first = await parts.next();
  const runId = (first.value as { data: { run_id: string } }).data.run_id;
  const waiting = (async () => {
    let values: unknown;
    try {
      for (let part = await parts.next(); !part.done; part = await parts.next())
        if (part.value.event === 'values') values = part.value.data;
      return values;
    } catch (err) {
      return err;
    }
  })();
  expect(await runningOn(runId)).toBe(on.pid);
  return { threadId: thread.thread_id, runId, waiting };
}

describe('two workers in one process tree', () => {
  it('a run executing on one worker is joined and streamed through the other', async () => {
    const a = await pinned(s);
    const b = await pinned(s, a.pid);
    const { threadId, runId, waiting } = await slowRunOn(a, 'shared');
    const events: string[] = [];
    for await (const part of b.client.runs.joinStream(threadId, runId)) events.push(part.event);
    expect(events[0]).toBe('metadata');
    expect(events).toContain('values');
    expect((await b.client.runs.get(threadId, runId)).status).toBe('success');
    expect(contents(await waiting)).toEqual(['shared', 'first: shared', 'second: first: shared']);
  });

  it('a cancel through one worker interrupts the run executing on the other', async () => {
    const a = await pinned(s);
    const b = await pinned(s, a.pid);
    const { threadId, runId, waiting } = await slowRunOn(a, 'stop me');
    await b.client.runs.cancel(threadId, runId, true);
    expect((await b.client.runs.get(threadId, runId)).status).toBe('interrupted');
    await waiting;
    // The slow graph's second step never wrote.
    const state = await b.client.threads.getState(threadId);
    expect(contents(state.values)).not.toContain('second: first: stop me');
  });

  it('kill -9 of the worker executing a run: a new worker starts and the run completes once', async () => {
    const a = await pinned(s);
    const { threadId, runId, waiting } = await slowRunOn(a, 'survive');
    const survivor = childPids(s.process.pid!).find((p) => p !== a.pid);
    process.kill(a.pid, 'SIGKILL');
    // The stream through the dead worker either fails or, resumed by the SDK through the other
    // worker, ends with the run's one outcome.
    const streamed = await waiting;
    if (!(streamed instanceof Error))
      expect(contents(streamed)).toEqual(['survive', 'first: survive', 'second: first: survive']);
    // Joined through whichever worker answers: the survivor, or the replacement.
    const client = new Client({ apiUrl: s.url, apiKey: null });
    const result = await client.runs.join(threadId, runId);
    expect(contents(result)).toEqual(['survive', 'first: survive', 'second: first: survive']);
    expect((await client.runs.get(threadId, runId)).status).toBe('success');
    expect((await client.threads.get(threadId)).status).toBe('idle');
    let attempts = 0;
    for await (const part of client.runs.joinStream(threadId, runId))
      if (part.event === 'metadata')
        attempts = Math.max(attempts, (part.data as { attempt: number }).attempt);
    expect(attempts).toBe(2);
    // The primary replaced the dead worker: two workers again, the dead one not among them.
    let workers: number[] = [];
    for (let i = 0; i < 100 && workers.length !== 2; i++) {
      await sleep(100);
      workers = childPids(s.process.pid!);
    }
    expect(workers).toHaveLength(2);
    expect(workers).not.toContain(a.pid);
    expect(workers).toContain(survivor);
    // And it serves.
    const replacement = await pinned(s, survivor);
    expect(workers).toContain(replacement.pid);
  }, 180_000);

  it('SIGTERM stops every worker and the primary exits 0', async () => {
    const workers = childPids(s.process.pid!);
    expect(workers).toHaveLength(2);
    expect(await s.stop('SIGTERM')).toBe(0);
    for (const pid of workers) expect(existsSync(`/proc/${pid}`)).toBe(false);
  });

  it('a worker failing at start-up fails the whole process instead of being restarted', async () => {
    // Spawned here rather than by startServer, whose wait for /ok is shorter than two workers
    // loading on a busy machine.
    const child = spawn(
      process.execPath,
      [join(REPO_ROOT, 'bin', 'graphdock.mjs'), 'runtime', '--config', '/nonexistent.json'],
      {
        env: { ...process.env, ...env, DATABASE_URL: db.url, PORT: '0', LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect(code).toBe(1);
    expect(output).toMatch(/worker failed to start/);
  }, 150_000);
});
