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

/**
 * A log of `sizes.length` events whose data are strings of those lengths, then its end marker:
 * appended as one batch, or with `eachAlone` one append (one log row) per event.
 */
async function logOf(sizes: number[], eachAlone = false): Promise<string> {
  const runId = randomUUID();
  const events = sizes.map((size, seq) => ({ seq, event: 'custom', data: 'x'.repeat(size) }));
  events.push({ seq: sizes.length, event: '__end__', data: null as unknown as string });
  for (const batch of eachAlone ? events.map((e) => [e]) : [events])
    await store.appendEvents(runId, batch, { channel: CHANNELS.events, payload: runId });
  return runId;
}

async function logRows(runId: string): Promise<[number, number][]> {
  const { rows } = await pool.query<{ first_seq: number; last_seq: number }>(
    'SELECT first_seq, last_seq FROM run_event_batches WHERE run_id = $1 ORDER BY first_seq',
    [runId],
  );
  return rows.map((r) => [r.first_seq, r.last_seq]);
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
    // One batch is one row of the log; a page may end inside it.
    expect(await logRows(runId)).toEqual([[0, 5]]);
    expect(await pages(runId, { rows: 2, bytes: 1 << 20 })).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
    expect(await pages(runId, { rows: 6, bytes: 1 << 20 })).toEqual([[0, 1, 2, 3, 4, 5]]);
  });

  it('stops once a page holds page.bytes of data, a larger row coming alone', async () => {
    const runId = await logOf([400, 400, 400, 5000, 400], true);
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

  it('splits a large batch into bounded rows, read back whole and in order', async () => {
    const runId = await logOf(Array<number>(1200).fill(3));
    expect(await logRows(runId)).toEqual([
      [0, 499],
      [500, 999],
      [1000, 1200],
    ]);
    const seen = (await pages(runId, { rows: 700, bytes: 1 << 20 })).flat();
    expect(seen).toEqual(Array.from({ length: 1201 }, (_, i) => i));
    // A row far past a page's bytes is split by size too.
    const wide = await logOf([300_000, 300_000, 300_000]);
    expect(await logRows(wide)).toEqual([
      [0, 0],
      [1, 1],
      [2, 3],
    ]);
  });

  it('takes each event once when a batch was written again over other rows', async () => {
    const runId = randomUUID();
    const event = (seq: number) => ({ seq, event: 'custom', data: { seq } });
    const append = (seqs: number[]) =>
      store.appendEvents(runId, seqs.map(event), { channel: CHANNELS.events, payload: runId });
    await append([0, 1, 2]);
    await append([3, 4]);
    // Written again after an outcome that was not known: the same start, further on...
    await append([3, 4, 5, 6]);
    // ...and from inside an earlier row.
    await append([2, 3, 4, 5, 6, 7]);
    // The same start and shorter: the longer row stays.
    await append([3]);
    expect(await logRows(runId)).toEqual([
      [0, 2],
      [2, 7],
      [3, 6],
    ]);
    const { events, more } = await store.eventsAfter(runId, -1);
    expect(events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(events.map((e) => e.data)).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((seq) => ({ seq })));
    expect(more).toBe(false);
    expect((await store.eventsAfter(runId, 4)).events.map((e) => e.seq)).toEqual([5, 6, 7]);
    expect(await store.lastSeq(runId)).toBe(7);
  });

  it('reads and sweeps the rows of the previous one-event-per-row table', async () => {
    const runId = randomUUID();
    // As the previous version writes them, during a rollout (see migration 011).
    await pool.query(
      `INSERT INTO run_events (run_id, seq, event, data)
       VALUES ($1, 0, 'metadata', '{"run_id":"r"}'), ($1, 1, 'values', '{"n":1}')`,
      [runId],
    );
    await store.appendEvents(
      runId,
      [
        { seq: 2, event: 'values', data: { n: 2 } },
        { seq: 3, event: '__end__', data: null },
      ],
      { channel: CHANNELS.events, payload: runId },
    );
    const { events } = await store.eventsAfter(runId, -1);
    expect(events.map((e) => [e.seq, e.event, e.data])).toEqual([
      [0, 'metadata', { run_id: 'r' }],
      [1, 'values', { n: 1 }],
      [2, 'values', { n: 2 }],
      [3, '__end__', null],
    ]);
    expect(
      (await store.eventsAfter(runId, 0, { rows: 2, bytes: 1 << 20 })).events.map((e) => e.seq),
    ).toEqual([1, 2]);
    expect(await store.lastSeq(runId)).toBe(3);
    // Its run is gone and the rows are old enough: both tables' rows go.
    await pool.query(
      `UPDATE run_events SET created_at = now() - interval '1 hour' WHERE run_id = $1`,
      [runId],
    );
    await pool.query(
      `UPDATE run_event_batches SET created_at = now() - interval '1 hour' WHERE run_id = $1`,
      [runId],
    );
    expect(await store.deleteExpiredEvents(60)).toBeGreaterThanOrEqual(3);
    expect((await store.eventsAfter(runId, -1)).events).toEqual([]);
  });
});
