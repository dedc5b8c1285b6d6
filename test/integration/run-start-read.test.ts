// A run that starts as it is created gets its thread's newest checkpoint from the creating
// statement, and its first checkpoint read is then answered without a query.
import { randomUUID } from 'node:crypto';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, type Pool } from '../../common/db/index.js';
import {
  GraphdockCheckpointer,
  PREFETCHED_CHECKPOINT_KEY,
  latestCheckpointRead,
  latestCheckpointReadOf,
} from '../../runtime/checkpoints/index.js';
import { CHANNELS, RunStore } from '../../runtime/runs/index.js';
import { countingPool } from '../support/counting-pool.js';
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

async function newThread(): Promise<string> {
  const threadId = randomUUID();
  await pool.query(`INSERT INTO threads (thread_id, status) VALUES ($1, 'busy')`, [threadId]);
  return threadId;
}

type RootConfig = { configurable: { thread_id: string; checkpoint_ns: string } };

/** A root checkpoint of `step` with these channel values and versions: its config and id. */
async function putCheckpoint(
  saver: GraphdockCheckpointer,
  config: RootConfig,
  step: number,
  values: Record<string, unknown>,
  versions: Record<string, string | number>,
): Promise<{ config: RootConfig; id: string }> {
  const checkpoint = {
    ...emptyCheckpoint(),
    id: uuid6(step),
    channel_values: values,
    channel_versions: versions,
  };
  const next = await saver.put(config, checkpoint, { source: 'loop', step, parents: {} }, versions);
  return { config: next as RootConfig, id: checkpoint.id };
}

/** Two checkpoints on the thread, the newer one with a pending write. */
async function checkpointTwice(saver: GraphdockCheckpointer, threadId: string): Promise<string> {
  let config = { configurable: { thread_id: threadId, checkpoint_ns: '' } };
  let newest = '';
  for (const [step, text] of [
    [0, 'first'],
    [1, 'second'],
  ] as const) {
    const version = saver.getNextVersion(step);
    ({ config, id: newest } = await putCheckpoint(
      saver,
      config,
      step,
      { messages: [text] },
      { messages: version },
    ));
  }
  await saver.putWrites(config, [['messages', ['pending']]], 'task-1');
  return newest;
}

const runStore = () => new RunStore(pool);

/** A node of PostgreSQL's JSON plan (EXPLAIN ANALYZE), as far as these tests read it. */
interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** The rows that scans of checkpoint_blobs return, over all their loops, when `text` runs. */
async function blobRowsRead(text: string, values: unknown[]): Promise<number> {
  const { rows } = await pool.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
    values,
  );
  const count = (node: PlanNode): number =>
    (node['Relation Name'] === 'checkpoint_blobs'
      ? (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1)
      : 0) + (node.Plans ?? []).reduce((sum, child) => sum + count(child), 0);
  return count(rows[0]!['QUERY PLAN'][0]!.Plan);
}

async function insertRun(threadId: string) {
  const runId = randomUUID();
  return runStore().insert(
    {
      run_id: runId,
      thread_id: threadId,
      assistant_id: randomUUID(),
      metadata: {},
      kwargs: {},
      multitask_strategy: 'enqueue',
      after_seconds: 0,
    },
    {
      events: [{ seq: 0, event: 'metadata', data: { run_id: runId, attempt: 1 } }],
      notify: { channel: CHANNELS.runs, payload: threadId },
    },
    pool,
    undefined,
    { workerId: 'worker-test', leaseSeconds: 30 },
    latestCheckpointRead(threadId),
  );
}

describe('the read made by the statement that starts a run', () => {
  it("answers the run's first checkpoint read as a query would, without one", async () => {
    const saver = new GraphdockCheckpointer(pool);
    const threadId = await newThread();
    const newest = await checkpointTwice(saver, threadId);
    const inserted = await insertRun(threadId);
    expect(inserted?.run.status).toBe('running');
    expect(inserted?.read).toMatchObject({ latest_checkpoint_id: newest });

    const counted = countingPool(pool);
    const prefetching = new GraphdockCheckpointer(counted.pool);
    const prefetched = { unread: true, row: inserted!.read };
    const config = {
      configurable: { thread_id: threadId, [PREFETCHED_CHECKPOINT_KEY]: prefetched },
    };
    const tuple = await prefetching.getTuple(config);
    expect(counted.queries()).toBe(0);
    const queried = await saver.getTuple({ configurable: { thread_id: threadId } });
    expect(tuple).toEqual(queried);
    expect(tuple?.checkpoint.channel_values).toEqual({ messages: ['second'] });
    expect(tuple?.pendingWrites).toEqual([['task-1', 'messages', ['pending']]]);
    expect(tuple?.parentConfig?.configurable?.checkpoint_id).toBeDefined();

    // Only the first read: the next one asks the database.
    await prefetching.getTuple(config);
    expect(counted.queries()).toBe(1);
  });

  it('stands aside once the run wrote, and for a read of a given checkpoint', async () => {
    const saver = new GraphdockCheckpointer(pool);
    const threadId = await newThread();
    await checkpointTwice(saver, threadId);
    const inserted = await insertRun(threadId);
    const counted = countingPool(pool);
    const prefetching = new GraphdockCheckpointer(counted.pool);
    const prefetched = { unread: true, row: inserted!.read };
    const first = await saver.getTuple({ configurable: { thread_id: threadId } });
    const byId = {
      configurable: {
        thread_id: threadId,
        checkpoint_id: first!.parentConfig!.configurable!.checkpoint_id as string,
        [PREFETCHED_CHECKPOINT_KEY]: prefetched,
      },
    };
    const older = await prefetching.getTuple(byId);
    expect(older?.checkpoint.channel_values).toEqual({ messages: ['first'] });
    expect(counted.queries()).toBe(1);
    expect(prefetched.unread).toBe(false);

    const written = { unread: true, row: inserted!.read };
    const config = { configurable: { thread_id: threadId, checkpoint_ns: '' } };
    await prefetching.putWrites(
      {
        configurable: {
          ...config.configurable,
          checkpoint_id: first!.config.configurable!.checkpoint_id as string,
          [PREFETCHED_CHECKPOINT_KEY]: written,
        },
      },
      [['messages', ['later']]],
      'task-2',
    );
    expect(written.unread).toBe(false);
  });

  it('reads nothing for a thread without checkpoints, and nothing for a run that queues', async () => {
    const threadId = await newThread();
    const fresh = await insertRun(threadId);
    expect(fresh?.run.status).toBe('running');
    expect(fresh?.read).toMatchObject({ latest_checkpoint_id: null, latest_checkpoint: null });
    const counted = countingPool(pool);
    const prefetching = new GraphdockCheckpointer(counted.pool);
    const tuple = await prefetching.getTuple({
      configurable: {
        thread_id: threadId,
        [PREFETCHED_CHECKPOINT_KEY]: { unread: true, row: fresh!.read },
      },
    });
    expect(tuple).toBeUndefined();
    expect(counted.queries()).toBe(0);

    // The thread's first run is still running: the next one queues and reads when claimed.
    const queued = await insertRun(threadId);
    expect(queued?.run.status).toBe('pending');
    expect(queued?.read).toBeUndefined();
  });

  it("looks up only the newest checkpoint's blobs, however long the thread's history", async () => {
    const saver = new GraphdockCheckpointer(pool);
    const threadId = await newThread();
    // 80 checkpoints, each a new version of two channels: 160 blob rows on the thread.
    let config = { configurable: { thread_id: threadId, checkpoint_ns: '' } };
    let version: string | number | undefined;
    for (let step = 0; step < 80; step++) {
      version = saver.getNextVersion(version as never);
      ({ config } = await putCheckpoint(
        saver,
        config,
        step,
        { messages: [`turn ${step}`], count: step },
        { messages: version, count: version },
      ));
    }
    const read = latestCheckpointRead(threadId);
    expect(await blobRowsRead(read.sql(1), read.values)).toBe(2);
    // The saver's own reads too: a checkpoint, and a page of the thread's history.
    const counted = countingPool(pool);
    const reading = new GraphdockCheckpointer(counted.pool);
    await reading.getTuple({ configurable: { thread_id: threadId } });
    expect(await blobRowsRead(counted.last()!.text, counted.last()!.values)).toBe(2);
    const page = [];
    for await (const tuple of reading.list({ configurable: { thread_id: threadId } }, { limit: 5 }))
      page.push(tuple);
    expect(page.map((t) => t.checkpoint.channel_values)).toEqual(
      [79, 78, 77, 76, 75].map((step) => ({ messages: [`turn ${step}`], count: step })),
    );
    expect(await blobRowsRead(counted.last()!.text, counted.last()!.values)).toBe(10);
    // And the read still answers as the saver's own does.
    const inserted = await insertRun(threadId);
    const prefetching = new GraphdockCheckpointer(pool);
    const tuple = await prefetching.getTuple({
      configurable: {
        thread_id: threadId,
        [PREFETCHED_CHECKPOINT_KEY]: { unread: true, row: inserted!.read },
      },
    });
    expect(tuple?.checkpoint.channel_values).toEqual({ messages: ['turn 79'], count: 79 });
    expect(tuple).toEqual(await saver.getTuple({ configurable: { thread_id: threadId } }));
  });
});

describe("the claim's read", () => {
  it("reads the claimed run's thread's newest checkpoint as a query would", async () => {
    const saver = new GraphdockCheckpointer(pool);
    const threadId = await newThread();
    const newest = await checkpointTwice(saver, threadId);
    const runId = randomUUID();
    await runStore().insert(
      {
        run_id: runId,
        thread_id: threadId,
        assistant_id: randomUUID(),
        metadata: {},
        kwargs: {},
        multitask_strategy: 'enqueue',
        after_seconds: 0,
      },
      {
        events: [{ seq: 0, event: 'metadata', data: { run_id: runId, attempt: 1 } }],
        notify: { channel: CHANNELS.runs, payload: threadId },
      },
      pool,
    );
    // Other tests' runs may be pending too: claim until this one comes.
    let claimed: Awaited<ReturnType<RunStore['claim']>>;
    do claimed = await runStore().claim('worker-test', 30, latestCheckpointReadOf);
    while (claimed && claimed.run.run_id !== runId);
    expect(claimed?.run).toMatchObject({ run_id: runId, status: 'running', attempt: 1 });
    expect(claimed?.read).toMatchObject({ latest_checkpoint_id: newest });
    expect(Object.keys(claimed!.run)).not.toContain('latest_checkpoint_id');

    const counted = countingPool(pool);
    const prefetching = new GraphdockCheckpointer(counted.pool);
    const tuple = await prefetching.getTuple({
      configurable: {
        thread_id: threadId,
        [PREFETCHED_CHECKPOINT_KEY]: { unread: true, row: claimed!.read },
      },
    });
    expect(counted.queries()).toBe(0);
    expect(tuple).toEqual(await saver.getTuple({ configurable: { thread_id: threadId } }));
  });
});

describe('the statement that queues a run', () => {
  it('is planned once per connection (a generic plan), not at every execution', async () => {
    // One connection, so the statement is prepared there and its plans can be read back.
    const single = createPool({ url: db.url, max: 1 });
    try {
      const store = new RunStore(single);
      for (let i = 0; i < 10; i++) {
        const threadId = await newThread();
        const runId = randomUUID();
        const inserted = await store.insert(
          {
            run_id: runId,
            thread_id: threadId,
            assistant_id: randomUUID(),
            metadata: {},
            kwargs: {},
            multitask_strategy: 'enqueue',
            after_seconds: 0,
          },
          {
            events: [{ seq: 0, event: 'metadata', data: { run_id: runId, attempt: 1 } }],
            notify: { channel: CHANNELS.runs, payload: threadId },
          },
          single,
        );
        expect(inserted?.run.status).toBe('pending');
      }
      const { rows } = await single.query<{ generic_plans: string; custom_plans: string }>(
        `SELECT generic_plans, custom_plans FROM pg_prepared_statements
         WHERE statement LIKE '%INSERT INTO runs%'`,
      );
      expect(rows).toHaveLength(1);
      // PostgreSQL tries custom plans five times, then keeps the generic one if it is no dearer.
      expect(Number(rows[0]!.custom_plans)).toBeLessThanOrEqual(5);
      expect(Number(rows[0]!.generic_plans)).toBeGreaterThan(0);
    } finally {
      await single.end();
    }
  });
});
