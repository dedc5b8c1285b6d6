// An idle runtime gives back the young generation its start grew (common/memory): on the image's
// Node.js with the image's flags (--no-memory-reducer, so V8 shrinks nothing by itself), the
// first quiet second after the start trims, a burst of runs followed by GRAPHDOCK_IDLE_TRIM_SECS
// of quiet trims again, runs are answered throughout, and 0 turns it off.
import { Client } from '@langchain/langgraph-sdk';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { imageNode, imageNodeFlags } from '../../scripts/image-node.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startServer, type RunningServer } from '../support/server.js';

interface Trim {
  at: number;
  ms: number;
  rssMiB: [number, number];
  newSpaceMiB: [number, number];
}

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
}, 120_000);
afterAll(() => db?.drop());

/** Starts the runtime on the image's node; collects its trim log lines as they come. */
async function start(idleTrimSecs: string): Promise<{ server: RunningServer; trims: Trim[] }> {
  const trims: Trim[] = [];
  let pending = '';
  const server = await startServer({
    databaseUrl: db.url,
    node: { binary: imageNode(), flags: imageNodeFlags() },
    env: { LOG_LEVEL: 'debug', GRAPHDOCK_IDLE_TRIM_SECS: idleTrimSecs },
    onOutput: (chunk) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        if (!line.includes('idle: memory trimmed')) continue;
        trims.push({ ...(JSON.parse(line) as Omit<Trim, 'at'>), at: Date.now() });
      }
    },
  });
  return { server, trims };
}

async function echo(client: Client, text: string): Promise<string[]> {
  const thread = await client.threads.create();
  const result = (await client.runs.wait(thread.thread_id, 'echo', {
    input: { messages: [{ role: 'user', content: text }] },
  })) as { messages: { content: string }[] };
  return result.messages.map((m) => m.content);
}

async function waitFor(trims: Trim[], count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (trims.length < count && Date.now() < deadline) await sleep(100);
  expect(trims.length, `trims seen within ${timeoutMs} ms`).toBeGreaterThanOrEqual(count);
}

describe('idle memory trim on the image’s Node.js', () => {
  it('trims after the start and after each idle period, and runs are answered throughout', async () => {
    const { server, trims } = await start('3');
    try {
      const client = new Client({ apiUrl: server.url, apiKey: null });
      expect(await echo(client, 'first')).toEqual(['first', 'echo: first']);
      await waitFor(trims, 1, 10_000);
      const [first] = trims;
      // The young generation the start grew, shrunk to V8's minimum, and the pages given back.
      expect(first!.newSpaceMiB[0]).toBeGreaterThanOrEqual(4 * first!.newSpaceMiB[1]);
      expect(first!.rssMiB[1]).toBeLessThan(first!.rssMiB[0]);

      // A burst (well over the 100 ms of work a later trim needs), then quiet: one more trim, no
      // sooner than the idle seconds after the burst.
      const texts = Array.from({ length: 100 }, (_, i) => `burst ${i}`);
      const answers = await Promise.all(texts.map((t) => echo(client, t)));
      expect(answers).toEqual(texts.map((t) => [t, `echo: ${t}`]));
      const burstEnd = Date.now();
      expect(trims).toHaveLength(1);
      await waitFor(trims, 2, 15_000);
      // Idleness is counted in whole seconds of the event loop: the second trim comes 2-3 s after.
      expect(trims[1]!.at - burstEnd).toBeGreaterThanOrEqual(1_900);
      // (That an idle period brings one trim, not one every few seconds, is the policy's unit test:
      // on a loaded machine the server's housekeeping breaks idle periods now and then.)
      expect(await echo(client, 'after')).toEqual(['after', 'echo: after']);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it('GRAPHDOCK_IDLE_TRIM_SECS=0 never trims', async () => {
    const { server, trims } = await start('0');
    try {
      const client = new Client({ apiUrl: server.url, apiKey: null });
      expect(await echo(client, 'one')).toEqual(['one', 'echo: one']);
      await sleep(4_000);
      expect(trims).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 120_000);
});
