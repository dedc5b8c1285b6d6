// A thread's protocol event stream, read from the durable run event log: every run started
// through the protocol, one after another, each event numbered in the thread's sequence
// (`index * RUN_SEQ_STRIDE + its seq in its run's log`). The numbers come from the log alone, so
// every reader on every replica gives an event the same `seq` and `event_id`, and a client that
// reconnects anywhere with `since` misses nothing the log still holds.
import {
  CHANNELS,
  RUN_SEQ_STRIDE,
  mayNameThread,
  type Notifier,
  type ProtocolRunRef,
  type RunEvent,
  type RunEventLog,
  type RunStatus,
  type RunStore,
} from '../runs/index.js';

export interface ProtocolEvent {
  type: 'event';
  event_id: string;
  seq: number;
  method: string;
  params: { namespace: string[]; timestamp: number; node?: string; data: unknown };
}

export interface ThreadEventsDeps {
  runs: RunStore;
  events: RunEventLog;
  notifier: Notifier;
  /**
   * The thread's first run, when it was started on this process and its log is kept here:
   * `nextProtocolRun` would return it for any cursor before it. `alone`: no run came after it
   * that a reader listening from now on would not hear of.
   */
  firstRunHere?: (threadId: string) => { run: ProtocolRunRef; alone: boolean } | undefined;
  /** How long a reader waits, hearing nothing, before it looks for runs anyway (ms). */
  idlePollMs?: number;
}

/** Where a reader starts: runs created after `afterUs` (µs), events with `seq > since`. */
export interface ProtocolCursor {
  afterUs: bigint;
  since?: number | undefined;
  /**
   * What the read that placed the cursor found, standing in for the reader's first look for a
   * run: the run after `afterUs`, the newest (none: there was none), and what the reader had
   * heard when the read began (it listened from before: a run committed later is heard).
   */
  first?: { run: ProtocolRunRef | undefined; heard: ThreadRunsHeard; at: number };
}

/** NOTIFY wakes a waiting stream; this slow poll only covers a lost notification. */
const IDLE_POLL_MS = 5000;

/**
 * The `runs` notifications naming a thread that a reader has heard since it began listening: each
 * means a run of the thread may have been created (`*`, after the listening connection was
 * replaced: any may have been). While it hears none, what it last read of the thread's runs
 * still holds, and it need not read again.
 */
export class ThreadRunsHeard {
  private count = 0;
  private readonly wakers = new Set<() => void>();
  private stopped = false;
  private off = (): void => undefined;

  constructor(
    notifier: Notifier,
    threadId: string,
    signal: AbortSignal,
    private readonly idlePollMs = IDLE_POLL_MS,
  ) {
    if (signal.aborted) {
      this.stopped = true;
      return;
    }
    const offNotifier = notifier.on(CHANNELS.runs, (payload) => {
      if (!mayNameThread(payload, threadId)) return;
      this.count++;
      for (const wake of this.wakers) wake();
    });
    const onAbort = () => this.stop();
    signal.addEventListener('abort', onAbort, { once: true });
    this.off = () => {
      offNotifier();
      signal.removeEventListener('abort', onAbort);
    };
  }

  /** Stops listening (the reader ended, or its signal did): waits settle, none begins. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.off();
    for (const wake of this.wakers) wake();
  }

  /** How many have been heard. */
  get heard(): number {
    return this.count;
  }

  /**
   * Settles once more than `seen` have been heard (true), or after the idle poll or when the
   * reader stops (false).
   */
  after(seen: number): Promise<boolean> {
    if (this.count > seen) return Promise.resolve(true);
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve(this.count > seen);
      };
      const timer = setTimeout(done, this.idlePollMs);
      this.wakers.add(done);
    });
  }
}

const protocolEvent = (
  seq: number,
  method: string,
  params: ProtocolEvent['params'],
): ProtocolEvent => ({ type: 'event', event_id: String(seq), seq, method, params });

const END_EVENT = '__end__';

interface LoggedParams {
  namespace?: string[];
  timestamp?: number;
  node?: string;
  data?: unknown;
  index?: number;
}

/** The root's terminal lifecycle event for a run's persisted status (none while it is active). */
function terminalOf(
  status: RunStatus | undefined,
  asked: boolean,
  error: string | undefined,
): { event: string; error?: string } | undefined {
  switch (status) {
    case 'success':
      return { event: asked ? 'interrupted' : 'completed' };
    case 'interrupted':
      return { event: 'interrupted' };
    case 'error':
    case 'timeout':
      return { event: 'failed', error: error ?? `run ended with status ${status}` };
    case 'pending':
    case 'running':
    case undefined:
      return undefined;
  }
}

/**
 * An event as its JSON envelope. `paramsJson`: its params as the log stored them, when they are
 * exactly the envelope's (the mapper writes them in its key order), spliced in as they are: a
 * streamed event is then serialised once, when it is produced, not again for every subscriber.
 */
export function encodeEvent(event: ProtocolEvent, paramsJson?: string): string {
  if (paramsJson === undefined) return JSON.stringify(event);
  return `{"type":"event","event_id":"${event.event_id}","seq":${event.seq},"method":${JSON.stringify(event.method)},"params":${paramsJson}}`;
}

/** A protocol event and its envelope's JSON, when known already (see `encodeEvent`). */
export interface EncodedEvent {
  event: ProtocolEvent;
  /** `params` as JSON, ready to splice. */
  paramsJson?: string | undefined;
}

/** A run's log in order, to its end, a batch at a time: live while the run is active, else as stored. */
async function* logOf(
  deps: ThreadEventsDeps,
  run: ProtocolRunRef,
  signal: AbortSignal,
): AsyncGenerator<RunEvent[]> {
  if (run.status === 'pending' || run.status === 'running') {
    let last = -1;
    for await (const batch of deps.events.readBatches(run.run_id, -1, signal, {
      withEnd: true,
      coalesce: true,
    })) {
      yield batch;
      if (batch.at(-1)!.event === END_EVENT) return;
      last = batch.at(-1)!.seq;
    }
    // No end marker (the run was deleted, this process is stopping): it would follow the last.
    if (!signal.aborted) yield [{ seq: last + 1, event: END_EVENT, data: null }];
    return;
  }
  // Ended: the log committed with the final status is complete.
  let after = -1;
  for (;;) {
    const page = await deps.runs.eventsAfter(run.run_id, after);
    const end = page.events.findIndex((e) => e.event === END_EVENT);
    const batch = end < 0 ? page.events : page.events.slice(0, end + 1);
    if (batch.length) {
      yield batch;
      after = batch.at(-1)!.seq;
    }
    if (end >= 0 || !page.more || signal.aborted) return;
  }
}

/** Whether logged params hold exactly the envelope's params, in its key order (see `encodeEvent`). */
function spliceable(params: LoggedParams, json: string | undefined): json is string {
  if (json === undefined || params.index !== undefined || params.data === undefined) return false;
  if (!Array.isArray(params.namespace) || typeof params.timestamp !== 'number') return false;
  return Object.keys(params).length === (params.node ? 4 : 3);
}

/**
 * One run's protocol events, numbered in the thread's sequence, a batch at a time (never empty);
 * nothing if it never executed.
 */
export async function* runEvents(
  deps: ThreadEventsDeps,
  run: ProtocolRunRef,
  signal: AbortSignal,
): AsyncGenerator<EncodedEvent[]> {
  let base: number | undefined;
  let graphName = '';
  let asked = false;
  let error: string | undefined;
  for await (const batch of logOf(deps, run, signal)) {
    const out: EncodedEvent[] = [];
    for (const event of batch) {
      if (event.event === END_EVENT) {
        if (base === undefined) break;
        // The end marker of a run that settled carries its final status (read it otherwise).
        const ended = (event.data as { status?: RunStatus } | null)?.status;
        const status =
          run.status === 'pending' || run.status === 'running'
            ? (ended ?? (await deps.runs.getById(run.run_id))?.status)
            : run.status;
        const terminal = terminalOf(status, asked, error);
        if (!terminal) break;
        out.push({
          event: protocolEvent(base + event.seq, 'lifecycle', {
            namespace: [],
            timestamp: Date.now(),
            data: { ...terminal, graph_name: graphName },
          }),
        });
        break;
      }
      if (event.event === 'metadata') continue;
      if (event.event === 'error') {
        const data = event.data as { message?: unknown } | null;
        error = typeof data?.message === 'string' ? data.message : 'run failed';
        continue;
      }
      const logged = (event.data ?? {}) as LoggedParams;
      const { index, ...params } = logged;
      if (base === undefined) {
        // The executor's first event, root `running`, says where the run's numbers start.
        if (typeof index !== 'number') continue;
        base = index * RUN_SEQ_STRIDE;
        const name = (params.data as { graph_name?: unknown } | undefined)?.graph_name;
        graphName = typeof name === 'string' ? name : '';
      }
      if (event.event === 'input.requested') asked = true;
      out.push({
        event: protocolEvent(base + event.seq, event.event, {
          namespace: params.namespace ?? [],
          timestamp: params.timestamp ?? Date.now(),
          ...(params.node ? { node: params.node } : {}),
          data: params.data ?? null,
        }),
        paramsJson: spliceable(logged, event.json) ? event.json : undefined,
      });
    }
    if (out.length) yield out;
    if (batch.at(-1)?.event === END_EVENT) return;
  }
}

/**
 * Every protocol event of the thread from `start`, run after run, a batch at a time (never
 * empty), until `signal` ends it. A thread that does not exist yet (run.start creates it) is
 * waited for.
 */
export async function* threadProtocolEvents(
  deps: ThreadEventsDeps,
  threadId: string,
  start: ProtocolCursor,
  signal: AbortSignal,
): AsyncGenerator<EncodedEvent[]> {
  let afterUs = start.afterUs;
  const since = start.since;
  let first = start.first;
  const heard =
    first?.heard ?? new ThreadRunsHeard(deps.notifier, threadId, signal, deps.idlePollMs);
  /**
   * What had been heard when the reader last knew every protocol run of the thread after
   * `afterUs` (undefined: it does not). While nothing more is heard, there is nothing to look for.
   */
  let clear: number | undefined;
  // Listening ends with the reader, however it ends (its client left, a read failed).
  try {
    while (!signal.aborted) {
      const seen = heard.heard;
      let run: ProtocolRunRef | undefined;
      if (first) {
        ({ run, at: clear } = first);
        first = undefined;
      } else if (clear !== seen) {
        // The stream that follows a run.start on a new thread finds its run without a round trip.
        const here = deps.firstRunHere?.(threadId);
        if (here && afterUs < BigInt(here.run.created_us)) {
          run = here.run;
          // It is the thread's first run: nothing came after it if this process heard of nothing
          // else since it was created, or if the one thing this reader heard since there was none
          // is its creation. (If that was another run's, its own is still to come, and wakes us.)
          clear = here.alone || (clear !== undefined && seen === clear + 1) ? seen : undefined;
        } else {
          const found = await deps.runs.nextProtocolRun(threadId, afterUs);
          run = found.run;
          clear = found.later ? undefined : seen;
        }
      }
      if (!run) {
        // Woken by the idle poll rather than a notification: look again, in case one was lost.
        if (!(await heard.after(clear ?? seen))) clear = undefined;
        continue;
      }
      // A run whose every number is at or below `since` need not be read.
      const skip =
        since !== undefined &&
        run.index !== undefined &&
        (run.index + 1) * RUN_SEQ_STRIDE <= since + 1;
      if (!skip)
        for await (const batch of runEvents(deps, run, signal)) {
          const kept = since === undefined ? batch : batch.filter((e) => e.event.seq > since);
          if (kept.length) yield kept;
        }
      afterUs = BigInt(run.created_us);
    }
  } finally {
    heard.stop();
  }
}
