// The bookkeeping behind runs that start as they are created: the worker's promised slots, and
// the event log a run keeps in memory while it runs here. Stores are fakes: this is pure logic;
// the integration tests in runs.test.ts drive the same path against PostgreSQL.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../common/logging/index.js';
import { END_EVENT, RunEventLog } from '../../runtime/runs/event-log.js';
import type { RunExecutor } from '../../runtime/runs/executor.js';
import { CHANNELS, type Notifier } from '../../runtime/runs/notifier.js';
import type { RunEvent, RunRow, RunStore } from '../../runtime/runs/store.js';
import { RunWorker } from '../../runtime/runs/worker.js';

const notifier = {
  on: () => () => undefined,
  remotePayload: (p: string) => p,
  notify: () => Promise.resolve(),
} as unknown as Notifier;

function workerWith(concurrency: number) {
  const executed: string[] = [];
  let finish: () => void = () => undefined;
  const executor = {
    execute: (run: RunRow) => {
      executed.push(run.run_id);
      return new Promise<boolean>((resolve) => (finish = () => resolve(false)));
    },
  } as unknown as RunExecutor;
  const store = {} as RunStore;
  const worker = new RunWorker(
    store,
    executor,
    notifier,
    { concurrency, leaseSeconds: 30, maxAttempts: 3, pollMs: 1000 },
    createLogger({ level: 'silent' }),
  );
  return { worker, executed, finish: () => finish() };
}

const runOf = (id: string, status: RunRow['status'], workerId: string | null) =>
  ({ run_id: id, thread_id: 't', status, worker_id: workerId }) as RunRow;

describe('RunWorker.reserve and adopt', () => {
  it('promises no more slots than its concurrency, and gives them back', () => {
    const { worker } = workerWith(2);
    const a = worker.reserve();
    expect(a).toEqual({ workerId: worker.id, leaseSeconds: 30 });
    expect(worker.reserve()).toBeDefined();
    expect(worker.reserve()).toBeUndefined();
    // A run that was queued instead (or never inserted) frees its slot.
    worker.adopt(runOf('queued', 'pending', null));
    expect(worker.reserve()).toBeDefined();
    worker.adopt(undefined);
    worker.adopt(undefined);
    expect(worker.reserve()).toBeDefined();
  });

  it('executes a run inserted running on it, which holds the slot until it ends', async () => {
    const { worker, executed, finish } = workerWith(1);
    worker.reserve();
    worker.adopt(runOf('mine', 'running', worker.id));
    expect(executed).toEqual(['mine']);
    expect(worker.reserve()).toBeUndefined();
    finish();
    await new Promise((r) => setTimeout(r, 0));
    expect(worker.reserve()).toBeDefined();
  });

  it('does not execute a run leased to another worker', () => {
    const { worker, executed } = workerWith(1);
    worker.reserve();
    worker.adopt(runOf('theirs', 'running', 'worker-other'));
    expect(executed).toEqual([]);
    expect(worker.reserve()).toBeDefined();
  });
});

describe('RunEventLog: a run that started here', () => {
  function logWith(stored: RunEvent[]) {
    const reads: number[] = [];
    const store = {
      eventsAfter: (_runId: string, after: number) => {
        reads.push(after);
        return Promise.resolve({ events: stored.filter((e) => e.seq > after), more: false });
      },
      appendEvents: () => Promise.resolve(),
      isActive: () => Promise.resolve(true),
    } as unknown as RunStore;
    return { log: new RunEventLog(store, notifier), reads };
  }
  const opening: RunEvent[] = [{ seq: 0, event: 'metadata', data: { run_id: 'r' } }];
  const collect = async (events: AsyncIterable<RunEvent>) => {
    const out: number[] = [];
    for await (const e of events) out.push(e.seq);
    return out;
  };

  it('is read from memory, from any point, without reading the table', async () => {
    const { log, reads } = logWith([]);
    log.startedHere('r', opening);
    await log.append('r', [{ seq: 1, event: 'values', data: 1 }]);
    const all = collect(log.read('r', -1));
    const tail = collect(log.read('r', 0));
    await new Promise((r) => setTimeout(r, 0));
    log.publish('r', [
      { seq: 2, event: 'values', data: 2 },
      { seq: 3, event: END_EVENT, data: null },
    ]);
    expect(await all).toEqual([0, 1, 2]);
    expect(await tail).toEqual([1, 2]);
    expect(reads).toEqual([]);
  });

  it('is read back from the table once it ended, or when it was never kept', async () => {
    const stored: RunEvent[] = [
      ...opening,
      { seq: 1, event: 'values', data: 1 },
      { seq: 2, event: END_EVENT, data: null },
    ];
    const { log, reads } = logWith(stored);
    log.startedHere('r', opening);
    log.publish('r', stored.slice(1));
    expect(await collect(log.read('r', -1))).toEqual([0, 1]);
    expect(await collect(log.read('other', -1))).toEqual([0, 1]);
    expect(reads).toEqual([-1, -1]);
  });
});

describe('RunEventLog: a reader that stops reading', () => {
  /** A table that pages as the store does, by `rows` events. */
  function pagedLog(stored: RunEvent[], rows: number) {
    const reads: number[] = [];
    const store = {
      eventsAfter: (_runId: string, after: number) => {
        reads.push(after);
        const rest = stored.filter((e) => e.seq > after);
        return Promise.resolve({ events: rest.slice(0, rows), more: rest.length > rows });
      },
      isActive: () => Promise.resolve(true),
    } as unknown as RunStore;
    return { log: new RunEventLog(store, notifier), reads };
  }
  const big = (seq: number): RunEvent => ({
    seq,
    event: 'custom',
    data: null,
    json: JSON.stringify('x'.repeat(256 * 1024)),
  });

  it('queues at most 1 MiB handed over in memory, then reads the rest from the table', async () => {
    const events = Array.from({ length: 40 }, (_, i) => big(i + 1));
    const stored: RunEvent[] = [
      { seq: 0, event: 'metadata', data: null },
      ...events,
      { seq: 41, event: END_EVENT, data: null },
    ];
    const { log, reads } = pagedLog(stored, 8);
    log.startedHere('r', stored.slice(0, 1));
    const reader = log.read('r', -1);
    // The reader takes its first event, then stops: 10 MiB arrive meanwhile.
    const first = await reader.next();
    expect(first.done ? undefined : first.value.seq).toBe(0);
    for (const e of events) log.publish('r', [e]);
    log.publish('r', stored.slice(41));
    const seqs: number[] = [];
    for await (const e of reader) seqs.push(e.seq);
    expect(seqs).toEqual(events.map((e) => e.seq));
    // Three events were queued (a fourth would pass 1 MiB), and no later one, so the queue had
    // no gap; then it read from after them, a page of 8 at a time.
    expect(reads).toEqual([3, 11, 19, 27, 35]);
  });

  it('does not keep more than 4 MiB of a running log in memory', async () => {
    const stored: RunEvent[] = [{ seq: 0, event: 'metadata', data: null }];
    const { log, reads } = pagedLog(stored, 100);
    log.startedHere('r', stored);
    for (let i = 1; i <= 20; i++) {
      stored.push(big(i));
      log.publish('r', [big(i)]);
    }
    stored.push({ seq: 21, event: END_EVENT, data: null });
    const seqs: number[] = [];
    const reader = (async () => {
      for await (const e of log.read('r', -1)) seqs.push(e.seq);
    })();
    await new Promise((r) => setTimeout(r, 5));
    log.publish('r', stored.slice(21));
    await reader;
    // The kept log was dropped on passing 4 MiB, so a reader that joins reads the table.
    expect(reads[0]).toBe(-1);
    expect(seqs).toEqual(stored.slice(0, 21).map((e) => e.seq));
  });
});

describe('RunEventLog: a run its reader just created', () => {
  it('starts from its opening in memory, then hears local batches and remote wakes', async () => {
    const reads: number[] = [];
    const stored: RunEvent[] = [
      { seq: 0, event: 'metadata', data: { run_id: 'q', attempt: 1 } },
      { seq: 1, event: 'values', data: 1 },
      { seq: 2, event: 'values', data: 2 },
      { seq: 3, event: END_EVENT, data: null },
    ];
    const store = {
      eventsAfter: (_runId: string, after: number) => {
        reads.push(after);
        return Promise.resolve({ events: stored.filter((e) => e.seq > after), more: false });
      },
      isActive: () => Promise.resolve(true),
    } as unknown as RunStore;
    const remote = new EventEmitter();
    const listening = {
      on: (channel: string, listener: (payload: string) => void) => {
        remote.on(channel, listener);
        return () => remote.off(channel, listener);
      },
      remotePayload: (p: string) => p,
    } as unknown as Notifier;
    const log = new RunEventLog(store, listening);
    const seen: unknown[] = [];
    const reading = (async () => {
      for await (const e of log.read('q', -1, undefined, { created: true })) seen.push(e.data);
    })();
    await new Promise((r) => setTimeout(r, 0));
    // The metadata event came from memory: the table was not read.
    expect(seen).toEqual([{ run_id: 'q', attempt: 1 }]);
    expect(reads).toEqual([]);
    // Another replica ran it: its NOTIFY makes the reader read the table after the opening.
    remote.emit(CHANNELS.events, 'q');
    await reading;
    expect(seen).toEqual([{ run_id: 'q', attempt: 1 }, 1, 2]);
    expect(reads).toEqual([0]);
  });
});

describe('RunWorker claims', () => {
  it("hands the claim's read of the run's thread to the run's execution", async () => {
    const claimed: unknown[] = [];
    let claims = 0;
    const store = {
      claim: (_id: string, _lease: number, read?: (column: string) => unknown) => {
        claimed.push(read?.('claimed.thread_id'));
        return Promise.resolve(
          claims++ === 0
            ? { run: runOf('c', 'running', 'w'), morePending: false, read: { latest: 1 } }
            : undefined,
        );
      },
    } as unknown as RunStore;
    const executed: unknown[] = [];
    const executor = {
      execute: (_run: RunRow, _signal: AbortSignal, read?: unknown) => {
        executed.push(read);
        return Promise.resolve(false);
      },
    } as unknown as RunExecutor;
    const worker = new RunWorker(
      store,
      executor,
      notifier,
      {
        concurrency: 2,
        leaseSeconds: 30,
        maxAttempts: 3,
        pollMs: 1000,
        claimRead: (column) => ({ columns: ['latest'], sql: `SELECT ${column}` }),
      },
      createLogger({ level: 'silent' }),
    );
    worker.start();
    await new Promise((r) => setTimeout(r, 20));
    await worker.stop(100);
    expect(claimed[0]).toEqual({ columns: ['latest'], sql: 'SELECT claimed.thread_id' });
    expect(executed).toEqual([{ latest: 1 }]);
  });
});

describe('RunEventLog: a stream read live', () => {
  it('reaches readers here as produced, is written in batches, and ends once durable', async () => {
    const stored: RunEvent[] = [];
    const store = {
      appendEvents: (_runId: string, batch: RunEvent[]) => {
        stored.push(...batch);
        return Promise.resolve();
      },
      eventsAfter: (_runId: string, after: number) => {
        reads.push(after);
        return Promise.resolve({ events: stored.filter((e) => e.seq > after), more: false });
      },
      isActive: () => Promise.resolve(true),
    } as unknown as RunStore;
    const reads: number[] = [];
    const log = new RunEventLog(store, notifier);
    const opening: RunEvent[] = [{ seq: 0, event: 'metadata', data: null }];
    log.startedHere('r', opening, { batchMs: 1000, live: true });
    const seen: number[] = [];
    const reader = (async () => {
      for await (const e of log.read('r', -1)) seen.push(e.seq);
    })();
    const writer = log.writer('r', 1);
    writer.push('values', 1);
    writer.push('values', 2);
    await new Promise((r) => setTimeout(r, 5));
    // Handed over before anything was written.
    expect(seen).toEqual([0, 1, 2]);
    expect(stored).toEqual([]);
    // Past the kept log's limit, a reader that joins reads the table, which is behind: it waits
    // for the write instead of polling the table, and gets each event once.
    for (let i = 0; i < 1000; i++) writer.push('values', i);
    const late: number[] = [];
    const lateReader = (async () => {
      for await (const e of log.read('r', 0)) late.push(e.seq);
    })();
    await new Promise((r) => setTimeout(r, 5));
    expect(late).toEqual([]);
    // A live event behind the gap: still no polling of the table.
    writer.push('values', 'behind the gap');
    const queries = reads.length;
    await new Promise((r) => setTimeout(r, 20));
    expect(reads.length - queries).toBeLessThanOrEqual(1);
    // Once written, the waiting reader reads them, before the run's end.
    await writer.flush();
    await new Promise((r) => setTimeout(r, 5));
    expect(late).toHaveLength(1003);
    const closing = await writer.closingBatch();
    stored.push(...closing);
    log.publish('r', closing);
    await Promise.all([reader, lateReader]);
    expect(seen).toHaveLength(1004);
    expect(late).toEqual(seen.slice(1));
  });
});

describe('RunEventWriter batches', () => {
  function logCounting() {
    const appended: number[][] = [];
    const store = {
      appendEvents: (_runId: string, batch: RunEvent[]) => {
        appended.push(batch.map((e) => e.seq));
        return Promise.resolve();
      },
    } as unknown as RunStore;
    return { log: new RunEventLog(store, notifier), appended };
  }

  it("writes each tick's events together by default", async () => {
    const { log, appended } = logCounting();
    const writer = log.writer('r', 1);
    writer.push('values', 1);
    writer.push('values', 2);
    await new Promise((r) => setTimeout(r, 5));
    writer.push('values', 3);
    await new Promise((r) => setTimeout(r, 5));
    expect(appended).toEqual([[1, 2], [3]]);
  });

  it('holds the events of a run followed only to its end, and closes with them', async () => {
    const { log, appended } = logCounting();
    log.startedHere('r', [{ seq: 0, event: 'metadata', data: null }], { batchMs: 40 });
    const writer = log.writer('r', 1);
    writer.push('values', 1);
    await new Promise((r) => setTimeout(r, 5));
    writer.push('values', 2);
    const closing = await writer.closingBatch();
    expect(closing.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(closing.at(-1)?.event).toBe(END_EVENT);
    expect(appended).toEqual([]);
    // A longer run still writes them, at most that often.
    const later = log.writer('r', 10);
    later.push('values', 10);
    await new Promise((r) => setTimeout(r, 60));
    expect(appended).toEqual([[10]]);
    log.forget('r');
    const plain = log.writer('r', 20);
    plain.push('values', 20);
    await new Promise((r) => setTimeout(r, 5));
    expect(appended).toEqual([[10], [20]]);
  });
});
