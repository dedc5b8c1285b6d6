// A run's stream events: appended to PostgreSQL with a per-run sequence number, then read back by
// any number of readers on any replica, from any point (Last-Event-ID), live until the run ends.
import type { RunEvent, RunStore } from './store.js';
import { CHANNELS, waitFor, type Notifier } from './notifier.js';

/** Marks the end of a run's events; never sent to clients. */
export const END_EVENT = '__end__';
const POLL_MS = 1000;
/** How often a reader that hears nothing checks that its run can still write events. */
const LIVENESS_CHECK_MS = 1000;

export class RunEventLog {
  constructor(
    private readonly store: RunStore,
    private readonly notifier: Notifier,
  ) {}

  /** A writer for one run's events: numbers them and flushes in small batches. */
  writer(runId: string, firstSeq = 0): RunEventWriter {
    return new RunEventWriter(runId, firstSeq, this.store, this.notifier);
  }

  /** Every event after `afterSeq`, then live ones, until the run's end marker (or `signal`). */
  async *read(runId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<RunEvent> {
    let seq = afterSeq;
    let checkedAt = Date.now();
    while (!signal?.aborted) {
      // Subscribe before reading, so an append between the read and the wait is not missed.
      const woken = waitFor(this.notifier, CHANNELS.events, (id) => id === runId, POLL_MS, signal);
      const events = await this.store.eventsAfter(runId, seq);
      for (const event of events) {
        if (event.event === END_EVENT) return;
        seq = event.seq;
        yield event;
      }
      if (events.length) continue;
      // No end marker comes for a run deleted before it ran (its thread was deleted), nor for
      // one whose log the retention sweep already dropped.
      if (Date.now() - checkedAt >= LIVENESS_CHECK_MS) {
        checkedAt = Date.now();
        if (!(await this.store.isActive(runId))) {
          const late = await this.store.eventsAfter(runId, seq);
          for (const event of late) {
            if (event.event === END_EVENT) return;
            yield event;
          }
          return;
        }
      }
      await woken;
    }
  }

  /** Deletes the logs of runs that ended longer ago than the retention (resumable streams). */
  sweep(retentionSeconds: number): Promise<number> {
    return this.store.deleteExpiredEvents(retentionSeconds);
  }

  /** Sequence number of the last event already written for a run (-1 when none). */
  lastSeq(runId: string): Promise<number> {
    return this.store.lastSeq(runId);
  }
}

export class RunEventWriter {
  private pending: RunEvent[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly runId: string,
    private seq: number,
    private readonly store: RunStore,
    private readonly notifier: Notifier,
  ) {}

  push(event: string, data: unknown): void {
    this.pending.push({ seq: this.seq++, event, data });
    // Events produced in one tick share one INSERT and one NOTIFY.
    this.timer ??= setTimeout(() => void this.flush(), 0);
  }

  /** Writes what is buffered; resolves once it is durable and readers were woken. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.flushing.then(async () => {
      if (!batch.length) return;
      await this.store.appendEvents(this.runId, batch);
      await this.notifier.notify(CHANNELS.events, this.runId);
    });
    return this.flushing;
  }

  async end(): Promise<void> {
    this.push(END_EVENT, null);
    await this.flush();
  }
}
