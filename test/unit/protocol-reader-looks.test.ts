// When a thread's protocol reader asks PostgreSQL for the thread's next run. It listens for the
// thread's `runs` notifications from the start; while it hears none after learning that no run
// followed the one it read, it does not ask again, and it asks again when one is heard, when the
// read said another run followed, or when the idle poll comes round (a notification may be
// lost). Store and notifier are fakes counting the reads: this is pure logic; protocol.test.ts
// and protocol-first-run.test.ts cover the same reader on PostgreSQL.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  ThreadRunsHeard,
  threadProtocolEvents,
  type ThreadEventsDeps,
} from '../../runtime/protocol/thread-events.js';
import { CHANNELS, type Notifier } from '../../runtime/runs/notifier.js';
import type { ProtocolRunRef, RunEvent, RunStore } from '../../runtime/runs/store.js';

const THREAD = 'thread-1';

/** An ended run of the thread, created at `us`, `index`-th of its protocol runs. */
const ended = (index: number, us: number): ProtocolRunRef => ({
  run_id: `run-${index}`,
  created_us: String(us),
  status: 'success',
  index,
});

/** Its log: the root's `running` event (which carries the run's place), then the end marker. */
const logOf = (run: ProtocolRunRef): RunEvent[] => [
  {
    seq: 0,
    event: 'lifecycle',
    data: {
      index: run.index,
      namespace: [],
      timestamp: 1,
      data: { event: 'running', graph_name: 'g' },
    },
  },
  { seq: 1, event: '__end__', data: null },
];

function fakes(
  options: { idlePollMs?: number; here?: () => ProtocolRunRef | undefined; alone?: boolean } = {},
) {
  const { here } = options;
  const runs: ProtocolRunRef[] = [];
  const looks = { count: 0 };
  const emitter = new EventEmitter();
  const notifier = {
    on: (channel: string, listener: (payload: string) => void) => {
      emitter.on(channel, listener);
      return () => emitter.off(channel, listener);
    },
  } as unknown as Notifier;
  const store = {
    nextProtocolRun: (_thread: string, afterUs: bigint) => {
      looks.count++;
      const after = runs.filter((r) => BigInt(r.created_us) > afterUs);
      return Promise.resolve({ run: after[0], later: after.length > 1 });
    },
    eventsAfter: (runId: string) => {
      const run = runs.find((r) => r.run_id === runId);
      return Promise.resolve({ events: run ? logOf(run) : [], more: false });
    },
  } as unknown as RunStore;
  const deps: ThreadEventsDeps = {
    runs: store,
    events: {} as ThreadEventsDeps['events'],
    notifier,
    ...(here
      ? {
          firstRunHere: () => {
            const run = here();
            return run && { run, alone: options.alone ?? false };
          },
        }
      : {}),
    ...(options.idlePollMs ? { idlePollMs: options.idlePollMs } : {}),
  };
  /** A run of the thread is created: `heard` also sends its notification. */
  const create = (run: ProtocolRunRef, heard = true) => {
    runs.push(run);
    if (heard) emitter.emit(CHANNELS.runs, THREAD);
  };
  return {
    deps,
    looks,
    create,
    notifier,
    listeners: () => emitter.listenerCount(CHANNELS.runs),
    /** What the notifier sends after its listening connection was replaced. */
    reconnected: () => emitter.emit(CHANNELS.runs, '*'),
  };
}

type Start = Parameters<typeof threadProtocolEvents>[2];

/** Reads the thread's stream in the background; `ended` collects the runs whose end it read. */
function read(deps: ThreadEventsDeps, start: Start | ((signal: AbortSignal) => Start)) {
  const stop = new AbortController();
  if (typeof start === 'function') start = start(stop.signal);
  const ended: number[] = [];
  const done = (async () => {
    for await (const batch of threadProtocolEvents(deps, THREAD, start, stop.signal))
      for (const { event } of batch)
        if ((event.params.data as { event?: string }).event === 'completed')
          ended.push(Math.floor(event.seq / 1_000_000_000));
  })();
  return { ended, stop: () => (stop.abort(), done), signal: stop.signal };
}

const until = async (check: () => boolean) => {
  const deadline = Date.now() + 2000;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
  expect(check()).toBe(true);
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** After the thread's first run, no read until another run is heard of; then one read finds it. */
async function noLookUntilAnotherRun(
  reader: ReturnType<typeof read>,
  looks: { count: number },
  create: (run: ProtocolRunRef) => void,
) {
  await until(() => reader.ended.length === 1);
  await pause(30);
  expect(looks.count).toBe(0);
  create(ended(1, 20));
  await until(() => reader.ended.length === 2);
  expect(looks.count).toBe(1);
  await reader.stop();
}

describe("a thread protocol reader's reads of the thread's runs", () => {
  it('does not read again after a run no other followed, until a run is heard of', async () => {
    const { deps, looks, create } = fakes();
    create(ended(0, 10), false);
    const reader = read(deps, { afterUs: -1n });
    await until(() => reader.ended.length === 1);
    await pause(30);
    expect(looks.count).toBe(1);
    create(ended(1, 20));
    await until(() => reader.ended.length === 2);
    expect(reader.ended).toEqual([0, 1]);
    expect(looks.count).toBe(2);
    await reader.stop();
  });

  it('reads again after a run when the read said another followed it', async () => {
    const { deps, looks, create } = fakes();
    create(ended(0, 10), false);
    create(ended(1, 20), false);
    const reader = read(deps, { afterUs: -1n });
    await until(() => reader.ended.length === 2);
    await pause(30);
    expect(reader.ended).toEqual([0, 1]);
    // The second read found the second run, and that nothing followed it.
    expect(looks.count).toBe(2);
    await reader.stop();
  });

  it('reads again at the idle poll, finding a run whose notification was lost', async () => {
    const { deps, create } = fakes({ idlePollMs: 20 });
    create(ended(0, 10), false);
    const reader = read(deps, { afterUs: -1n });
    await until(() => reader.ended.length === 1);
    create(ended(1, 20), false);
    await until(() => reader.ended.length === 2);
    await reader.stop();
  });

  it("takes the thread's first run from memory and reads nothing when it alone was heard of", async () => {
    const memory: { run?: ProtocolRunRef } = {};
    const { deps, looks, create, notifier } = fakes({ here: () => memory.run });
    // As a WebSocket subscription on a new thread starts: listening, then a read found no run.
    const reader = read(deps, (signal) => ({
      afterUs: -1n,
      first: { run: undefined, heard: new ThreadRunsHeard(notifier, THREAD, signal), at: 0 },
    }));
    memory.run = ended(0, 10);
    create(memory.run);
    await noLookUntilAnotherRun(reader, looks, create);
  });

  it('reads after a first run from memory when more than its own creation was heard', async () => {
    const memory: { run?: ProtocolRunRef } = {};
    const { deps, looks, create, notifier } = fakes({ here: () => memory.run });
    let heard: ThreadRunsHeard | undefined;
    const reader = read(deps, (signal) => {
      heard = new ThreadRunsHeard(notifier, THREAD, signal);
      return { afterUs: -1n, first: { run: undefined, heard, at: 0 } };
    });
    memory.run = ended(0, 10);
    create(memory.run);
    // A second run was created before the reader looked at all.
    create(ended(1, 20));
    expect(heard?.heard).toBe(2);
    await until(() => reader.ended.length === 2);
    expect(reader.ended).toEqual([0, 1]);
    expect(looks.count).toBe(1);
    await reader.stop();
  });

  it('reads nothing after a first run from memory that this process heard of alone', async () => {
    // As an SSE stream opened after run.start: no read before, and the process saw no other run.
    const memory: { run?: ProtocolRunRef } = { run: ended(0, 10) };
    const { deps, looks, create } = fakes({ here: () => memory.run, alone: true });
    create(memory.run!, false);
    const reader = read(deps, { afterUs: -1n });
    await noLookUntilAnotherRun(reader, looks, create);
  });

  it('reads after a first run from memory when the process heard of other runs', async () => {
    const memory: { run?: ProtocolRunRef } = { run: ended(0, 10) };
    const { deps, looks, create } = fakes({ here: () => memory.run, alone: false });
    create(memory.run!, false);
    create(ended(1, 20), false);
    const reader = read(deps, { afterUs: -1n });
    await until(() => reader.ended.length === 2);
    expect(reader.ended).toEqual([0, 1]);
    expect(looks.count).toBe(1);
    await reader.stop();
  });

  it('stops listening when it ends, by its signal or by a failed read', async () => {
    const { deps, listeners, create } = fakes();
    create(ended(0, 10), false);
    const reader = read(deps, { afterUs: -1n });
    await until(() => reader.ended.length === 1);
    expect(listeners()).toBe(1);
    await reader.stop();
    expect(listeners()).toBe(0);

    deps.runs.nextProtocolRun = () => Promise.reject(new Error('database gone'));
    const stop = new AbortController();
    const failed = (async () => {
      for await (const batch of threadProtocolEvents(deps, THREAD, { afterUs: -1n }, stop.signal))
        void batch;
    })();
    await expect(failed).rejects.toThrow('database gone');
    expect(stop.signal.aborted).toBe(false);
    expect(listeners()).toBe(0);
  });

  it('reads again when the notifier says notifications may have been lost', async () => {
    const { deps, looks, create, reconnected } = fakes();
    create(ended(0, 10), false);
    const reader = read(deps, { afterUs: -1n });
    await until(() => reader.ended.length === 1);
    await pause(30);
    expect(looks.count).toBe(1);
    // A run created while the listening connection was down: its notification never comes.
    create(ended(1, 20), false);
    reconnected();
    await until(() => reader.ended.length === 2);
    expect(looks.count).toBe(2);
    await reader.stop();
  });
});
