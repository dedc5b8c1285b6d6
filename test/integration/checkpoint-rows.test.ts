// What a checkpoint write stores: no row for a channel emptied at a version (every reader skips
// those), and metadata serialised once yet stored as the official saver stores it.
import { randomUUID } from 'node:crypto';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, type Pool } from '../../common/db/index.js';
import {
  GraphdockCheckpointer,
  PREFETCHED_CHECKPOINT_KEY,
  latestCheckpointRead,
} from '../../runtime/checkpoints/index.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

let db: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  pool = createPool({ url: db.url, max: 4 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const metadata = {
  source: 'loop' as const,
  step: 1,
  parents: {},
  run_id: 'r1',
  nested: { list: [1, 'two', null], '2': 'an integer-like key', b: true, text: 'é "q" \\' },
};

/** Step 1 of a thread: `__start__` was consumed (emptied), `messages` holds a value. */
async function writeStep(saver: PostgresSaver, threadId: string, meta: typeof metadata = metadata) {
  const versions = { __start__: saver.getNextVersion(1), messages: saver.getNextVersion(1) };
  const checkpoint = {
    ...emptyCheckpoint(),
    id: uuid6(1),
    channel_values: { messages: ['hello'] },
    channel_versions: versions,
  };
  const config = { configurable: { thread_id: threadId, checkpoint_ns: '' } };
  return saver.put(config, checkpoint, meta, versions);
}

describe('a checkpoint write', () => {
  it('stores no row for an emptied channel, and every read gives the same checkpoint', async () => {
    const saver = new GraphdockCheckpointer(pool);
    const threadId = randomUUID();
    await writeStep(saver, threadId);
    const { rows } = await pool.query<{ channel: string; type: string }>(
      'SELECT channel, type FROM checkpoint_blobs WHERE thread_id = $1 ORDER BY channel',
      [threadId],
    );
    expect(rows).toEqual([{ channel: 'messages', type: 'json' }]);

    // The official saver, which writes the `empty` row, reads back the same checkpoint.
    const official = new PostgresSaver(pool);
    const officialThread = randomUUID();
    await writeStep(official, officialThread);
    const mine = await saver.getTuple({ configurable: { thread_id: threadId } });
    const theirs = await official.getTuple({ configurable: { thread_id: officialThread } });
    expect(mine?.checkpoint.channel_values).toEqual({ messages: ['hello'] });
    expect(mine?.checkpoint.channel_values).toEqual(theirs?.checkpoint.channel_values);

    // So does the read a run's creating statement makes (prefetch.ts).
    const read = latestCheckpointRead(threadId);
    const { rows: prefetched } = await pool.query<Record<string, unknown>>(
      `SELECT * FROM (${read.sql(1)}) AS latest`,
      read.values,
    );
    const viaPrefetch = await saver.getTuple({
      configurable: {
        thread_id: threadId,
        [PREFETCHED_CHECKPOINT_KEY]: { unread: true, row: prefetched[0] },
      },
    });
    expect(viaPrefetch?.checkpoint).toEqual(mine?.checkpoint);
  });

  it('stores its metadata as the official saver does', async () => {
    const saver = new GraphdockCheckpointer(pool);
    const official = new PostgresSaver(pool);
    const [mineThread, officialThread] = [randomUUID(), randomUUID()];
    await writeStep(saver, mineThread);
    await writeStep(official, officialThread);
    const { rows } = await pool.query<{ same: boolean }>(
      `SELECT (SELECT metadata FROM checkpoints WHERE thread_id = $1)
            = (SELECT metadata FROM checkpoints WHERE thread_id = $2) AS same`,
      [mineThread, officialThread],
    );
    expect(rows[0]?.same).toBe(true);
  });

  it('gives back metadata holding NUL and a lone surrogate exactly', async () => {
    const saver = new GraphdockCheckpointer(pool);
    const threadId = randomUUID();
    const odd = { ...metadata, note: 'nul \u0000, lone \ud800, mark \ufdd0' };
    await writeStep(saver, threadId, odd);
    const tuple = await saver.getTuple({ configurable: { thread_id: threadId } });
    expect(tuple?.metadata).toEqual(odd);
  });
});
