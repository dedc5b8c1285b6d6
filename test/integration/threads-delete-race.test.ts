// DELETE /threads/{id} while one of its runs executes: never a 500 (it deadlocked with the run
// settling the thread), and the thread, its runs and its checkpoints are gone for good: the run,
// whose lease went with its row, writes nothing more.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';

const rt = useRuntime({ env: { GRAPHDOCK_SLOW_STEP_MS: '60', N_JOBS_PER_WORKER: '20' } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RACES = 200;
const AT_ONCE = 20;

describe('deleting a thread while its run executes', () => {
  it(`answers 204 every time in ${RACES} races, and leaves nothing of the thread behind`, async () => {
    const statuses: number[] = [];
    const threadIds: string[] = [];
    const race = async (i: number) => {
      const thread = await rt.client.threads.create();
      threadIds.push(thread.thread_id);
      await rt.client.runs.create(thread.thread_id, 'slow', {
        input: { messages: [{ role: 'user', content: `race ${i}` }] },
      });
      // Somewhere in the run: starting, between its steps, or settling the thread.
      await sleep((i * 7) % 200);
      const res = await rt.http(`/threads/${thread.thread_id}`, { method: 'DELETE' });
      statuses.push(res.status);
    };
    for (let first = 0; first < RACES; first += AT_ONCE)
      await Promise.all(
        Array.from({ length: Math.min(AT_ONCE, RACES - first) }, (_, k) => race(first + k)),
      );
    const counts = statuses.reduce<Record<number, number>>(
      (all, s) => ({ ...all, [s]: (all[s] ?? 0) + 1 }),
      {},
    );
    expect(counts).toEqual({ 204: RACES });

    // Runs caught mid-step stop at their next write; give them time to try.
    await sleep(1000);
    const db = new pg.Client({ connectionString: rt.db.url });
    await db.connect();
    try {
      const left = await db.query<{ threads: number; runs: number; checkpoints: number }>(
        `SELECT (SELECT count(*)::int FROM threads WHERE thread_id = ANY($1::uuid[])) AS threads,
                (SELECT count(*)::int FROM runs WHERE thread_id = ANY($1::uuid[])) AS runs,
                (SELECT count(*)::int FROM checkpoints WHERE thread_id = ANY($1::text[])) AS checkpoints`,
        [threadIds],
      );
      expect(left.rows[0]).toEqual({ threads: 0, runs: 0, checkpoints: 0 });
    } finally {
      await db.end();
    }
    // The server is none the worse for it.
    const thread = await rt.client.threads.create();
    const result = await rt.client.runs.wait(thread.thread_id, 'echo', {
      input: { messages: [{ role: 'user', content: 'after' }] },
    });
    expect(result).toMatchObject({ messages: [{ content: 'after' }, { content: 'echo: after' }] });
  }, 120_000);
});

describe('waiting for a run whose thread is deleted under it', () => {
  it('answers the run not found, not the values of its first step', async () => {
    const thread = await rt.client.threads.create();
    const waited = rt.http(`/threads/${thread.thread_id}/runs/wait`, {
      method: 'POST',
      json: { assistant_id: 'slow', input: { messages: [{ role: 'user', content: 'gone' }] } },
    });
    // Past the first of its steps (60 ms each here).
    await sleep(90);
    expect((await rt.http(`/threads/${thread.thread_id}`, { method: 'DELETE' })).status).toBe(204);
    const res = await waited;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ __error__: { error: 'Error', message: 'Run not found' } });
  });
});
