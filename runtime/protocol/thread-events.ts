// A thread's protocol event stream, read from the durable run event log: every run started
// through the protocol, one after another, each event numbered in the thread's sequence
// (`index * RUN_SEQ_STRIDE + its seq in its run's log`). The numbers come from the log alone, so
// every reader on every replica gives an event the same `seq` and `event_id`, and a client that
// reconnects anywhere with `since` misses nothing the log still holds.
import {
  CHANNELS,
  RUN_SEQ_STRIDE,
  threadOfRunsPayload,
  waitFor,
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
}

/** Where a reader starts: runs created after `afterUs` (µs), events with `seq > since`. */
export interface ProtocolCursor {
  afterUs: bigint;
  since?: number | undefined;
}

/** NOTIFY wakes a waiting stream; this slow poll only covers a lost notification. */
const IDLE_POLL_MS = 5000;
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

/** A run's log in order, to its end: live while the run is active, else as stored. */
async function* logOf(
  deps: ThreadEventsDeps,
  run: ProtocolRunRef,
  signal: AbortSignal,
): AsyncGenerator<RunEvent> {
  if (run.status === 'pending' || run.status === 'running') {
    let last = -1;
    for await (const event of deps.events.read(run.run_id, -1, signal)) {
      last = event.seq;
      yield event;
    }
    // The reader swallows the end marker; it is the event after the last.
    if (!signal.aborted) yield { seq: last + 1, event: END_EVENT, data: null };
    return;
  }
  // Ended: the log committed with the final status is complete.
  let after = -1;
  for (;;) {
    const page = await deps.runs.eventsAfter(run.run_id, after);
    for (const event of page.events) {
      yield event;
      after = event.seq;
      if (event.event === END_EVENT) return;
    }
    if (!page.more || signal.aborted) return;
  }
}

/** One run's protocol events, numbered in the thread's sequence; nothing if it never executed. */
export async function* runEvents(
  deps: ThreadEventsDeps,
  run: ProtocolRunRef,
  signal: AbortSignal,
): AsyncGenerator<ProtocolEvent> {
  let base: number | undefined;
  let graphName = '';
  let asked = false;
  let error: string | undefined;
  for await (const event of logOf(deps, run, signal)) {
    if (event.event === END_EVENT) {
      if (base === undefined) return;
      const status =
        run.status === 'pending' || run.status === 'running'
          ? (await deps.runs.getById(run.run_id))?.status
          : run.status;
      const terminal = terminalOf(status, asked, error);
      if (!terminal) return;
      const seq = base + event.seq;
      yield {
        type: 'event',
        event_id: String(seq),
        seq,
        method: 'lifecycle',
        params: {
          namespace: [],
          timestamp: Date.now(),
          data: { ...terminal, graph_name: graphName },
        },
      };
      return;
    }
    if (event.event === 'metadata') continue;
    if (event.event === 'error') {
      const data = event.data as { message?: unknown } | null;
      error = typeof data?.message === 'string' ? data.message : 'run failed';
      continue;
    }
    const { index, ...params } = (event.data ?? {}) as LoggedParams;
    if (base === undefined) {
      // The executor's first event, root `running`, says where the run's numbers start.
      if (typeof index !== 'number') continue;
      base = index * RUN_SEQ_STRIDE;
      const name = (params.data as { graph_name?: unknown } | undefined)?.graph_name;
      graphName = typeof name === 'string' ? name : '';
    }
    if (event.event === 'input.requested') asked = true;
    const seq = base + event.seq;
    yield {
      type: 'event',
      event_id: String(seq),
      seq,
      method: event.event,
      params: {
        namespace: params.namespace ?? [],
        timestamp: params.timestamp ?? Date.now(),
        ...(params.node ? { node: params.node } : {}),
        data: params.data ?? null,
      },
    };
  }
}

/**
 * Every protocol event of the thread from `start`, run after run, until `signal` ends it. A
 * thread that does not exist yet (run.start creates it) is waited for.
 */
export async function* threadProtocolEvents(
  deps: ThreadEventsDeps,
  threadId: string,
  start: ProtocolCursor,
  signal: AbortSignal,
): AsyncGenerator<ProtocolEvent> {
  let afterUs = start.afterUs;
  const since = start.since;
  while (!signal.aborted) {
    const woken = waitFor(
      deps.notifier,
      CHANNELS.runs,
      (payload) => {
        const id = threadOfRunsPayload(payload);
        return id === threadId || id === '*';
      },
      IDLE_POLL_MS,
      signal,
    );
    const { run } = await deps.runs.nextProtocolRun(threadId, afterUs);
    if (!run) {
      await woken;
      continue;
    }
    // A run whose every number is at or below `since` need not be read.
    const skip =
      since !== undefined &&
      run.index !== undefined &&
      (run.index + 1) * RUN_SEQ_STRIDE <= since + 1;
    if (!skip)
      for await (const event of runEvents(deps, run, signal))
        if (since === undefined || event.seq > since) yield event;
    afterUs = BigInt(run.created_us);
  }
}
