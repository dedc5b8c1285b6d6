// `graphdock dev` with no DATABASE_URL: the embedded PostgreSQL store, persisted across restarts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../support/server.js';

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

    server = await startServer({ command: 'dev', env });
    try {
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
