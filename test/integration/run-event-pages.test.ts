// A run's log is read back a page at a time: a reader far behind (a join, a reconnect, a stream
// whose client stopped reading) holds at most a page of events, whatever the log's length.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, type Pool } from '../../common/db/index.js';
import { CHANNELS, RunStore } from '../../runtime/runs/index.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

let db: TestDatabase;
let pool: Pool;
let store: RunStore;

beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  pool = createPool({ url: db.url, max: 2 });
  store = new RunStore(pool);
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** A log of `sizes.length` events whose data are strings of those lengths, then its end marker. */
async function logOf(sizes: number[]): Promise<string> {
  const runId = randomUUID();
  const events = sizes.map((size, seq) => ({ seq, event: 'custom', data: 'x'.repeat(size) }));
  events.push({ seq: sizes.length, event: '__end__', data: null as unknown as string });
  await store.appendEvents(runId, events, { channel: CHANNELS.events, payload: runId });
  return runId;
}

/** Every page from the start, as the sequence numbers each one holds. */
async function pages(runId: string, page: { rows: number; bytes: number }): Promise<number[][]> {
  const out: number[][] = [];
  let after = -1;
  for (let i = 0; i < 100; i++) {
    const { events, more } = await store.eventsAfter(runId, after, page);
    out.push(events.map((e) => e.seq));
    after = events.at(-1)?.seq ?? after;
    if (!more) return out;
  }
  throw new Error('the pages never ended');
}

describe('RunStore.eventsAfter', () => {
  it('returns at most page.rows events, and says when more may follow', async () => {
    const runId = await logOf([10, 10, 10, 10, 10]);
    expect(await pages(runId, { rows: 2, bytes: 1 << 20 })).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
    expect(await pages(runId, { rows: 6, bytes: 1 << 20 })).toEqual([[0, 1, 2, 3, 4, 5]]);
  });

  it('stops once a page holds page.bytes of data, a larger event coming alone', async () => {
    const runId = await logOf([400, 400, 400, 5000, 400]);
    const seen = await pages(runId, { rows: 100, bytes: 1000 });
    // Events 0-2 pass 1,000 bytes with the third; the 5,000-byte event fills a page alone.
    expect(seen).toEqual([[0, 1, 2], [3], [4, 5]]);
    const { events } = await store.eventsAfter(runId, 2, { rows: 100, bytes: 1000 });
    expect(events[0]?.data).toBe('x'.repeat(5000));
  });

  it('reads a whole log by default in one page when it is small', async () => {
    const runId = await logOf([10, 20]);
    const { events, more } = await store.eventsAfter(runId, -1);
    expect(events.map((e) => [e.seq, e.event])).toEqual([
      [0, 'custom'],
      [1, 'custom'],
      [2, '__end__'],
    ]);
    expect(more).toBe(false);
  });
});
