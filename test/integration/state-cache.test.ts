// The cached latest state: served when its key matches, recomputed when checkpoints change,
// including changes made behind the service's back.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';

const rt = useRuntime();
let sql: pg.Client;
beforeAll(async () => {
  sql = new pg.Client({ connectionString: rt.db.url });
  await sql.connect();
});
afterAll(() => sql.end());

type Values = { messages: { content: string }[] };

async function seeded() {
  return rt.client.threads.create({
    graphId: 'echo',
    supersteps: [
      {
        updates: [
          { values: { messages: [{ role: 'user', content: 'one' }] }, asNode: '__start__' },
        ],
      },
      {
        updates: [
          { values: { messages: [{ role: 'assistant', content: 'two' }] }, asNode: 'echo' },
        ],
      },
    ],
  });
}

const contents = (state: { values: unknown }) =>
  (state.values as Values).messages.map((m) => m.content);

describe('latest state cache', () => {
  it('serves the same body as a state read that bypasses the cache', async () => {
    const thread = await seeded();
    const cached = await rt.client.threads.getState(thread.thread_id);
    const { rows } = await sql.query<{ state_cache_key: string | null }>(
      'SELECT state_cache_key FROM threads WHERE thread_id = $1',
      [thread.thread_id],
    );
    expect(rows[0]?.state_cache_key).toContain(`|${cached.checkpoint.checkpoint_id}:`);
    const direct = await rt.client.threads.getState(thread.thread_id, {
      checkpoint_id: cached.checkpoint.checkpoint_id,
      checkpoint_ns: '',
    } as never);
    expect(cached).toEqual(direct);
  });

  it('is what the server answers while its key matches', async () => {
    const thread = await seeded();
    await sql.query(
      `UPDATE threads SET state_cache = jsonb_set(state_cache, '{values,marker}', '"from cache"') WHERE thread_id = $1`,
      [thread.thread_id],
    );
    const state = await rt.client.threads.getState(thread.thread_id);
    expect((state.values as Record<string, unknown>).marker).toBe('from cache');
  });

  it('is recomputed after a state update through the API', async () => {
    const thread = await seeded();
    await rt.client.threads.getState(thread.thread_id);
    await rt.client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: 'user', content: 'three' }] },
      asNode: 'echo',
    });
    expect(contents(await rt.client.threads.getState(thread.thread_id))).toEqual([
      'one',
      'two',
      'three',
    ]);
  });

  it('notices checkpoints that changed behind its back', async () => {
    const thread = await seeded();
    const before = await rt.client.threads.getState(thread.thread_id);
    // Remove the latest checkpoint directly: the key no longer matches, the cache is ignored.
    await sql.query('DELETE FROM checkpoints WHERE thread_id = $1 AND checkpoint_id = $2', [
      thread.thread_id,
      before.checkpoint.checkpoint_id,
    ]);
    const after = await rt.client.threads.getState(thread.thread_id);
    expect(after.checkpoint.checkpoint_id).toBe(before.parent_checkpoint?.checkpoint_id);
    expect(contents(after)).toEqual(['one']);
    // A pending write on the latest checkpoint changes the key too.
    await sql.query(
      `INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
       VALUES ($1, '', $2, 'task-x', 0, 'x', 'json', '\\x7b7d')`,
      [thread.thread_id, after.checkpoint.checkpoint_id],
    );
    const { rows } = await sql.query<{ state_cache_key: string }>(
      'SELECT state_cache_key FROM threads WHERE thread_id = $1',
      [thread.thread_id],
    );
    await rt.client.threads.getState(thread.thread_id).catch(() => undefined);
    const { rows: again } = await sql.query<{ state_cache_key: string | null }>(
      'SELECT state_cache_key FROM threads WHERE thread_id = $1',
      [thread.thread_id],
    );
    const writes = (key: string | null | undefined) => Number(key?.split(':').at(-1));
    expect(writes(again[0]?.state_cache_key)).toBe(writes(rows[0]?.state_cache_key) + 1);
  });

  it('treats upper-case thread ids as the same thread', async () => {
    const thread = await seeded();
    const upper = await rt.client.threads.getState(thread.thread_id.toUpperCase());
    expect(upper.checkpoint.thread_id).toBe(thread.thread_id);
    expect(contents(upper)).toEqual(['one', 'two']);
  });
});
