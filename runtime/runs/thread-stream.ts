// `GET /threads/{thread_id}/stream`: one long-lived stream of every run on a thread, run after
// run, until the client leaves. Event ids are `<run created, µs>-<seq>` (the form of a Redis
// stream id, as the official server uses), so Last-Event-ID resumes inside the right run.
import { invalid } from '../../common/errors/index.js';
import type { RunEventLog } from './event-log.js';
import { CHANNELS, mayNameThread, waitFor, type Notifier } from './notifier.js';
import type { SseFrame } from './sse.js';
import type { RunStore } from './store.js';

export const THREAD_STREAM_MODES = ['run_modes', 'lifecycle', 'state_update'] as const;
export type ThreadStreamMode = (typeof THREAD_STREAM_MODES)[number];

/** Which run events each thread stream mode passes on. */
const MODE_EVENTS: Record<Exclude<ThreadStreamMode, 'run_modes'>, (event: string) => boolean> = {
  lifecycle: (event) => event === 'metadata' || event === 'error',
  state_update: (event) => event === 'values',
};

/** NOTIFY wakes a waiting stream; this slow poll only covers a lost notification. */
const IDLE_POLL_MS = 5000;

export interface ThreadCursor {
  /** Runs created after this instant (µs) are streamed. */
  afterUs: bigint;
  /** Inside the run created exactly at `resumeUs`, events after `resumeSeq`. */
  resumeUs?: bigint;
  resumeSeq?: number;
}

const MAX_INT8 = 2n ** 63n - 1n;

/** Parses Last-Event-ID: `-` or `-1` replays every run of the thread; `<µs>-<seq>` resumes. */
export function parseThreadEventId(header: string | undefined): ThreadCursor | undefined {
  if (header === undefined || header === '') return undefined;
  if (header === '-' || header === '-1') return { afterUs: -1n };
  const match = /^(\d{1,19})-(\d{1,9})$/.exec(header);
  // The microseconds are a PostgreSQL bigint: 19 digits past its largest cannot be an id.
  if (!match || BigInt(match[1]!) > MAX_INT8)
    throw invalid(
      ['header', 'Last-Event-ID'],
      `"${header}" is not an event id of this stream ("<µs>-<seq>", or "-" for every run)`,
    );
  const us = BigInt(match[1]!);
  return { afterUs: us - 1n, resumeUs: us, resumeSeq: Number(match[2]) };
}

export interface ThreadStreamDeps {
  runs: RunStore;
  events: RunEventLog;
  notifier: Notifier;
}

export async function* threadEvents(
  deps: ThreadStreamDeps,
  threadId: string,
  modes: readonly ThreadStreamMode[],
  start: ThreadCursor | undefined,
  signal: AbortSignal,
): AsyncGenerator<SseFrame> {
  const wanted = (event: string) =>
    modes.includes('run_modes') || modes.some((m) => m !== 'run_modes' && MODE_EVENTS[m](event));
  let cursor = start ?? { afterUs: await deps.runs.threadStreamStart(threadId) };
  while (!signal.aborted && !deps.events.closed) {
    const woken = waitFor(
      deps.notifier,
      CHANNELS.runs,
      (payload) => mayNameThread(payload, threadId),
      IDLE_POLL_MS,
      signal,
    );
    const { thread, run: next } = await deps.runs.nextOfThread(threadId, cursor.afterUs);
    if (!next) {
      if (!thread) return;
      await woken;
      continue;
    }
    const createdUs = BigInt(next.created_us);
    const afterSeq = cursor.resumeUs === createdUs ? (cursor.resumeSeq ?? -1) : -1;
    for await (const event of deps.events.read(next.run_id, afterSeq, signal)) {
      if (wanted(event.event))
        yield { id: `${next.created_us}-${event.seq}`, event: event.event, data: event.data };
    }
    cursor = { afterUs: createdUs };
  }
}
