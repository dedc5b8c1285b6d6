// The Node.js release the image ships (the Dockerfile's NODE_VERSION, fetched by
// scripts/image-node.ts when this machine runs another) serves runs as the test process's node
// does: concurrent streams, waits and joins through the official SDK, each whole and in order on
// its keep-alive connection.
import { Client } from '@langchain/langgraph-sdk';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { imageNode, imageNodeFlags, imageNodeVersion } from '../../scripts/image-node.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startServer, type RunningServer } from '../support/server.js';

type Msg = { type: string; content: string };
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });

let db: TestDatabase;
let server: RunningServer;
let client: Client;
beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  server = await startServer({
    databaseUrl: db.url,
    node: { binary: imageNode(), flags: imageNodeFlags() },
    // Few slots: most runs queue, and a queued run's events reach its stream in one batch with
    // its end, the case a newer Node.js once sent out of order.
    env: { N_JOBS_PER_WORKER: '2' },
  });
  client = new Client({ apiUrl: server.url, apiKey: null });
}, 300_000);
afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

describe("the image's Node.js", () => {
  it('is the release the server runs on', async () => {
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain(`nodejs_version_info{version="v${imageNodeVersion()}"`);
  });

  it('sends every concurrent stream whole: metadata first, every values event, then its end', async () => {
    const clients = 16;
    const turns = 6;
    const conversations = await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        const thread = randomUUID();
        const streams: string[][] = [];
        for (let turn = 0; turn < turns; turn++) {
          const events: string[] = [];
          let last: Msg[] = [];
          for await (const part of client.runs.stream(thread, 'echo', {
            input: hi(`c${c} t${turn}`),
            ifNotExists: 'create',
          })) {
            events.push(part.event);
            if (part.event === 'values') last = (part.data as { messages: Msg[] }).messages;
          }
          expect(last.at(-1)?.content).toBe(`echo: c${c} t${turn}`);
          streams.push(events);
        }
        return { thread, streams };
      }),
    );
    for (const { thread, streams } of conversations) {
      for (const events of streams) expect(events).toEqual(['metadata', 'values', 'values']);
      const state = await client.threads.getState<{ messages: Msg[] }>(thread);
      expect(state.values.messages).toHaveLength(2 * turns);
    }
  }, 120_000);

  it('answers concurrent waits, threadless streams and joins', async () => {
    const results = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        if (i % 3 === 0) {
          const out = (await client.runs.wait(null, 'echo', { input: hi(`w${i}`) })) as {
            messages: Msg[];
          };
          return out.messages.at(-1)?.content;
        }
        if (i % 3 === 1) {
          let content: string | undefined;
          for await (const part of client.runs.stream(null, 'echo', { input: hi(`s${i}`) }))
            if (part.event === 'values')
              content = (part.data as { messages: Msg[] }).messages.at(-1)?.content;
          return content;
        }
        const thread = await client.threads.create();
        const run = await client.runs.create(thread.thread_id, 'echo', { input: hi(`j${i}`) });
        const events: string[] = [];
        for await (const part of client.runs.joinStream(thread.thread_id, run.run_id))
          events.push(part.event);
        expect(events[0]).toBe('metadata');
        const joined = (await client.runs.join(thread.thread_id, run.run_id)) as {
          messages: Msg[];
        };
        return joined.messages.at(-1)?.content;
      }),
    );
    expect(results).toEqual(
      Array.from({ length: 24 }, (_, i) => `echo: ${['w', 's', 'j'][i % 3]}${i}`),
    );
  }, 120_000);
});
