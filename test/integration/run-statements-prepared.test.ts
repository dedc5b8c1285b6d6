// Every parameterised statement a run sends is prepared once it is hot (common/db/prepared.ts):
// PostgreSQL then parses and plans it once per connection instead of at every run. The pool
// leaves a text unprepared when it selects `*`, and the statement that ends a run embeds the
// run's checkpoint writes, whose fenced inserts once read their VALUES with `SELECT *`: that
// statement, the largest a run sends, was parsed and planned anew at every run.
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../common/logging/index.js';
import { createRuntime, type Runtime } from '../../runtime/index.js';
import { observeClientQueries, type ClientQuery } from '../support/counting-pool.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { REPO_ROOT } from '../support/server.js';

/** Parameterised statements sent while recording: their texts, and whether each was named. */
const sent: { text: string; named: boolean }[] = [];
let recording = false;

let db: TestDatabase;
let rt: Runtime;
let client: Client;
let restoreQuery: (() => void) | undefined;
beforeAll(async () => {
  restoreQuery = observeClientQueries((q: ClientQuery, values?: unknown) => {
    if (!recording) return;
    const text = typeof q === 'string' ? q : (q.text ?? '');
    const params = typeof q === 'string' ? values : (q.values ?? values);
    if (!Array.isArray(params) || params.length === 0) return;
    sent.push({ text, named: typeof q === 'object' && Boolean(q.name) });
  });
  db = await createTestDatabase(inject('pgAdminUrl'));
  rt = await createRuntime({
    configPath: `${REPO_ROOT}/examples/langgraph.json`,
    databaseUrl: db.url,
    apiKeys: [],
    logger: createLogger({ level: 'error' }),
  });
  client = new Client({ apiUrl: await rt.app.listen({ port: 0, host: '127.0.0.1' }) });
}, 120_000);
afterAll(async () => {
  restoreQuery?.();
  await rt?.close();
  await db?.drop();
});

const input = (text: string) => ({ messages: [{ role: 'user', content: text }] });

/** One turn of each kind a conversation takes: waited, streamed, and checkpointed every step. */
async function turns(threadId: string, n: number) {
  for (let i = 0; i < n; i++) {
    await client.runs.wait(threadId, 'echo', { input: input(`wait ${i}`) });
    for await (const chunk of client.runs.stream(threadId, 'echo', {
      input: input(`stream ${i}`),
      streamMode: ['values', 'messages-tuple'],
    }))
      void chunk;
    await client.runs.wait(threadId, 'echo', { input: input(`sync ${i}`), durability: 'sync' });
  }
}

describe("a run's statements", () => {
  it('are all prepared once hot, the one that ends the run included', async () => {
    const thread = await client.threads.create();
    // The pool prepares a text at its third execution, on each connection it runs on.
    await turns(thread.thread_id, 12);
    recording = true;
    await turns(thread.thread_id, 3);
    recording = false;
    const ends = sent.filter((s) => s.text.trimStart().startsWith('WITH finished AS'));
    expect(ends.length).toBeGreaterThanOrEqual(9);
    expect(ends.filter((s) => !s.named)).toEqual([]);
    // The checkpoint writes of `durability: 'sync'` go out on their own, fenced the same way.
    const checkpointWrites = sent.filter(
      (s) =>
        s.text.trimStart().startsWith('WITH lease AS') && /INSERT INTO checkpoint/.test(s.text),
    );
    expect(checkpointWrites.length).toBeGreaterThan(0);
    expect(checkpointWrites.filter((s) => !s.named)).toEqual([]);
    const unnamed = sent
      .filter((s) => !s.named)
      .map((s) => s.text.replace(/\s+/g, ' ').slice(0, 120));
    expect(unnamed).toEqual([]);
  }, 120_000);
});
