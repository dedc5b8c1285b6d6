// `graphdock dev` reloads the project when its files change: a project of its own in a temporary
// folder (its node_modules a link to the repository's), edited while the server runs and while
// a client keeps sending requests.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { isAlive } from '../support/processes.js';
import { REPO_ROOT, startServer, type RunningServer } from '../support/server.js';

/** A graph answering `reply`, after `waitMs`. */
const graphSource = (reply: string, waitMs = 0) => `
import { Annotation, StateGraph } from '@langchain/langgraph';
const State = Annotation.Root({ reply: Annotation<string> });
export const graph = new StateGraph(State)
  .addNode('say', async () => {
    await new Promise((r) => setTimeout(r, ${waitMs}));
    return { reply: ${JSON.stringify(reply)} };
  })
  .addEdge('__start__', 'say')
  .compile();
`;

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gd-reload-'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'say.ts'), graphSource('version one'));
  writeFileSync(join(dir, 'src', 'slow.ts'), graphSource('slow one', 12_000));
  writeFileSync(
    join(dir, 'langgraph.json'),
    JSON.stringify({ graphs: { say: './src/say.ts:graph', slow: './src/slow.ts:graph' } }),
  );
  return dir;
}

async function reply(client: Client, assistant: string): Promise<string> {
  const out = (await client.runs.wait(null, assistant, { input: {} })) as { reply: string };
  return out.reply;
}

/** What `say` answers once it answers `version`, or at the deadline (30 s). */
function served(client: Client, version: string): Promise<string> {
  return until(
    () => reply(client, 'say'),
    (r) => r === version,
  );
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Everything a server printed (`output()` keeps only its last 20 KB). */
class Log {
  text = '';
  readonly onOutput = (chunk: string) => {
    this.text += chunk;
  };
  /** The pids of the server processes that logged, in order of first appearance. */
  workerPids(): number[] {
    return [...new Set([...this.text.matchAll(/"pid":(\d+)/g)].map((m) => Number(m[1])))];
  }
}

describe('graphdock dev, reloading', () => {
  let db: TestDatabase;
  let dir: string;
  let server: RunningServer;
  let client: Client;
  const log = new Log();

  beforeAll(async () => {
    db = await createTestDatabase(inject('pgAdminUrl'));
    dir = project();
    server = await startServer({
      command: 'dev',
      config: join(dir, 'langgraph.json'),
      cwd: dir,
      databaseUrl: db.url,
      env: { LOG_LEVEL: 'info' },
      onOutput: log.onOutput,
    });
    client = new Client({ apiUrl: server.url, apiKey: null });
  });
  afterEach(({ task }) => {
    // What the servers said, for a failure seen only under a loaded CI machine.
    if (task.result?.state === 'fail') console.log(log.text.slice(-12_000));
  });
  afterAll(async () => {
    const pids = log.workerPids();
    expect(await server.stop()).toBe(0);
    // The primary stops its workers: none is left behind.
    expect(pids.filter(isAlive)).toEqual([]);
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the saved code, answering every request meanwhile', async () => {
    expect(await reply(client, 'say')).toBe('version one');
    let stop = false;
    const answers = { ok: 0, failed: [] as string[] };
    // A client that keeps asking through the swap: a bounded loop, loopback only.
    const asking = (async () => {
      for (let i = 0; i < 2_000 && !stop; i++) {
        try {
          const res = await fetch(`${server.url}/assistants/search`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"limit":1}',
          });
          if (res.status === 200) answers.ok++;
          else answers.failed.push(String(res.status));
        } catch (err) {
          answers.failed.push(String((err as Error).cause ?? err));
        }
      }
    })();
    writeFileSync(join(dir, 'src', 'say.ts'), graphSource('version two'));
    const seen = await served(client, 'version two');
    stop = true;
    await asking;
    expect(seen).toBe('version two');
    expect(answers.failed).toEqual([]);
    expect(answers.ok).toBeGreaterThan(0);
    expect(log.text).toMatch(
      /"file":"src\/say\.ts","event":"change","msg":"change seen; reloading"/,
    );
  });

  it('keeps the previous code serving while a save does not compile, and takes the fix', async () => {
    const before = log.text.split('reload failed').length;
    writeFileSync(
      join(dir, 'src', 'say.ts'),
      `${graphSource('version three')}\nthis is not ( code`,
    );
    await until(
      async () => log.text.split('reload failed').length,
      (n) => n > before,
    );
    expect(log.text).toMatch(/graphdock: Failed to load graph "say" from .*say\.ts/);
    expect(await reply(client, 'say')).toBe('version two');
    writeFileSync(join(dir, 'src', 'say.ts'), graphSource('version three'));
    expect(await served(client, 'version three')).toBe('version three');
  });

  it('ends a run that was executing when the code changed', async () => {
    const thread = await client.threads.create();
    // No retries: the SDK would repeat a wait answered with an error, creating another run.
    const once = new Client({ apiUrl: server.url, apiKey: null, callerOptions: { maxRetries: 0 } });
    const running = once.runs.wait(thread.thread_id, 'slow', { input: {} });
    await until(
      async () => (await client.runs.list(thread.thread_id)).map((r) => r.status),
      (s) => s[0] === 'running',
    );
    const workersBefore = log.workerPids().length;
    writeFileSync(join(dir, 'src', 'say.ts'), graphSource('version four'));
    expect(await served(client, 'version four')).toBe('version four');
    expect(log.workerPids().length).toBeGreaterThan(workersBefore);
    // The swap happened while the run executed: the old server finishes it as it stops, and
    // takes no new request meanwhile (it could not execute a run it accepted).
    const after = [];
    for (let i = 0; i < 6; i++) after.push(await reply(client, 'say'));
    expect(after).toEqual(Array(6).fill('version four'));
    expect((await client.runs.list(thread.thread_id)).map((r) => r.status)).toEqual(['running']);
    expect(await running).toEqual({ reply: 'slow one' });
    const runs = await client.runs.list(thread.thread_id);
    expect(runs.map((r) => r.status)).toEqual(['success']);
  });

  it('does not reload on files that are not code, nor under node_modules or .graphdock', async () => {
    const workers = log.workerPids().length;
    writeFileSync(join(dir, 'notes.md'), 'not code');
    mkdirSync(join(dir, '.graphdock'), { recursive: true });
    writeFileSync(join(dir, '.graphdock', 'x.json'), '{}');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(log.workerPids().length).toBe(workers);
    expect(await reply(client, 'say')).toBe('version four');
  });
});

describe('graphdock dev --no-reload', () => {
  it('serves from one process and ignores changes', async () => {
    const db = await createTestDatabase(inject('pgAdminUrl'));
    const dir = project();
    const log = new Log();
    const server = await startServer({
      command: 'dev',
      config: join(dir, 'langgraph.json'),
      cwd: dir,
      databaseUrl: db.url,
      extraArgs: ['--no-reload'],
      env: { LOG_LEVEL: 'info' },
      onOutput: log.onOutput,
    });
    try {
      const client = new Client({ apiUrl: server.url, apiKey: null });
      writeFileSync(join(dir, 'src', 'say.ts'), graphSource('version two'));
      await new Promise((r) => setTimeout(r, 1_500));
      expect(await reply(client, 'say')).toBe('version one');
      expect(log.text).not.toMatch(/reloading/);
      // No worker: the process that listens is the one started.
      expect(log.workerPids()).toEqual([]);
    } finally {
      expect(await server.stop()).toBe(0);
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
