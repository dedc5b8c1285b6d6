// A run's stream events: appended to PostgreSQL with a per-run sequence number, then read back by
// any number of readers on any replica, from any point (Last-Event-ID), live until the run ends.
// Readers in the process that executes the run get new events handed over in memory once they
// are durable; readers elsewhere are woken by NOTIFY and read them from the table.
import { EventEmitter } from 'node:events';
import { retryWhileUnavailable } from '../../common/db/index.js';
import {
  encodeData,
  type RunEvent,
  type RunFencing,
  type RunStatus,
  type RunStore,
} from './store.js';
import { CHANNELS, type Channel, type Notifier } from './notifier.js';

/** Marks the end of a run's events; never sent to clients. */
export const END_EVENT = '__end__';
/** A reader that heard nothing checks that its run can still write events: first soon, then rarely. */
const FIRST_IDLE_MS = 1000;
const IDLE_MS = 5000;
/**
 * Events handed over in memory beyond this many unread (or this much data) are dropped and read
 * from the table later, a page at a time: a reader that stops reading holds no more than this.
 */
const MAX_QUEUED = { events: 1000, chars: 1024 * 1024 };
/**
 * Events handed to readers live (see `startedHere`) stay within this many ids of the durable
 * log; a retry numbers its events from this far past the log (see `retrySeq`), so no id a reader
 * was handed live by an attempt that died is ever given to another event.
 */
export const LIVE_AHEAD = 1000;
/** A run's log is kept in memory (see `startedHere`) up to this much, then read back. */
const MAX_KEPT = { events: 1000, chars: 4 * 1024 * 1024 };
/**
 * While the database is away (a restart, a failover), writes and reads of the log are tried
 * again for this long; a reader then ends its stream with an error, and a run's writer fails it.
 */
export const UNAVAILABLE_RETRY_MS = 60_000;
/** The `error` event of a stream whose log could not be read. */
export const READ_FAILED = 'StreamReadError';

/** Roughly how much memory events hold: their data's JSON text. */
function charsOf(events: RunEvent[]): number {
  let chars = 0;
  for (const e of events) chars += (e.json?.length ?? 0) + e.event.length;
  return chars;
}

/** A run's first attempt's opening: its `metadata` event, written with the run itself. */
function openingEvents(runId: string): RunEvent[] {
  return [{ seq: 0, event: 'metadata', data: { run_id: runId, attempt: 1 } }];
}

export class RunEventLog {
  /** In-process hand-over of durable events, by run id. */
  private readonly local = new EventEmitter();
  /**
   * The whole log so far of each run that started on this process's worker as it was created,
   * while it runs: its local readers, the one that created it first, need not read it back.
   */
  private readonly kept = new Map<string, { events: RunEvent[]; chars: number }>();

  /** Aborted by `close`: every reader ends (the process is stopping). */
  private readonly closing = new AbortController();
  /** Aborted by `closeStreams` (or `close`): every reader but the waits ends. */
  private readonly closingStreams = new AbortController();
  /** Readers that wait for a run's end (`read` with `wait`), and who to tell when none is left. */
  private waits = 0;
  private readonly waitsGone = new Set<() => void>();

  constructor(
    private readonly store: RunStore,
    private readonly notifier: Notifier,
  ) {
    this.local.setMaxListeners(0);
  }

  /**
   * Ends every reader, as a run's events may go on elsewhere (a run handed back at shutdown):
   * streams end cleanly, for their clients to resume on another replica with Last-Event-ID.
   */
  close(): void {
    this.closing.abort();
    this.closingStreams.abort();
  }

  /**
   * Ends every stream, as `close` does, but not the waits for a run's end (`runs/wait`, join):
   * a run going on elsewhere still ends, and a wait answered 503 instead would be sent again by
   * the official SDKs, which retry such a POST and so create the run a second time.
   */
  closeStreams(): void {
    this.closingStreams.abort();
  }

  /** Resolves once no reader waits for a run's end. */
  waitsEnded(): Promise<void> {
    if (this.waits === 0) return Promise.resolve();
    return new Promise((resolve) => this.waitsGone.add(resolve));
  }

  /** Whether `close` ended the readers. */
  get closed(): boolean {
    return this.closing.signal.aborted;
  }

  /**
   * How long a run's events wait to share a batch: none by default (events of one tick share
   * one), longer for a run nobody follows live (see `startedHere`).
   */
  private readonly batchMs = new Map<string, number>();

  /**
   * Last event handed to local readers, for each run whose events reach them as they are
   * produced, before they are durable (see `startedHere`).
   */
  private readonly liveUpTo = new Map<string, number>();

  /** Last durable event of each run read live here (see `pushedLive`). */
  private readonly durableUpTo = new Map<string, number>();

  /**
   * A writer for one run's events: numbers them and flushes in small batches. With `lease` (the
   * run's executor), its writes are fenced by the run's lease.
   */
  writer(runId: string, firstSeq = 0, lease?: RunFencing): RunEventWriter {
    return new RunEventWriter(runId, firstSeq, this, this.batchMs.get(runId) ?? 0, lease);
  }

  /** Hands an event to local readers before it is durable, if its run is read live here. */
  pushedLive(runId: string, event: RunEvent): void {
    const upTo = this.liveUpTo.get(runId);
    if (upTo === undefined || event.event === END_EVENT) return;
    // In order, and not too far ahead of the log: the rest reach readers once durable.
    const durable = this.durableUpTo.get(runId) ?? upTo;
    if (event.seq !== upTo + 1 || event.seq > durable + LIVE_AHEAD) return;
    this.deliver(runId, [event]);
  }

  /** Makes a batch durable, wakes other replicas (same statement), then local readers. */
  async append(runId: string, batch: RunEvent[], lease?: RunFencing): Promise<void> {
    // Written again after a lost connection: rows already in are skipped (ON CONFLICT).
    await retryWhileUnavailable(
      () =>
        this.store.appendEvents(
          runId,
          batch,
          { channel: CHANNELS.events, payload: this.notifier.remotePayload(runId) },
          lease,
        ),
      { withinMs: UNAVAILABLE_RETRY_MS },
    );
    if (this.liveUpTo.has(runId) && batch.length) this.durableUpTo.set(runId, batch.at(-1)!.seq);
    this.deliver(runId, batch);
  }

  /**
   * The first sequence number of a retried run's events: past its log and past any id an
   * earlier attempt may have handed to readers live before it was durable (`LIVE_AHEAD`).
   */
  async retrySeq(runId: string): Promise<number> {
    return (await this.store.lastSeq(runId)) + 1 + LIVE_AHEAD;
  }

  /**
   * Keeps the log of a run that starts here, from its `opening` events (see `kept`). With
   * `batchMs`, its events are written at most that often: for a run whose creator waits only for
   * its end, a short run then writes all its events with its final status, one statement fewer.
   */
  startedHere(
    runId: string,
    opening: RunEvent[],
    options: { batchMs?: number; live?: boolean } = {},
  ): void {
    this.kept.set(runId, { events: [...opening], chars: charsOf(opening) });
    if (options.batchMs) this.batchMs.set(runId, options.batchMs);
    // `live`: a stream nobody may resume reaches its local readers as it is produced; its log
    // is still written, in batches, and the end marker only once the run's status is final.
    if (options.live) {
      this.liveUpTo.set(runId, opening.at(-1)?.seq ?? -1);
      this.durableUpTo.set(runId, opening.at(-1)?.seq ?? -1);
    }
  }

  /** Whether a run's log is kept here (see `startedHere`): its readers here need not query. */
  keeps(runId: string): boolean {
    return this.kept.has(runId);
  }

  /** Stops keeping a run's log (its execution here is over). */
  forget(runId: string): void {
    this.kept.delete(runId);
    this.batchMs.delete(runId);
    this.liveUpTo.delete(runId);
    this.durableUpTo.delete(runId);
  }

  private deliver(runId: string, delivered: RunEvent[]): void {
    let batch = delivered;
    const liveUpTo = this.liveUpTo.get(runId);
    if (liveUpTo !== undefined) {
      // Events of a live run arrive twice, as produced and once durable: the second time
      // only wakes readers, with an empty batch (one that joined without the kept log may be
      // waiting for them in the table).
      batch = delivered.filter((e) => e.seq > liveUpTo);
      if (batch.length) this.liveUpTo.set(runId, batch.at(-1)!.seq);
    }
    // Measured once here for the kept log and every reader's queue.
    const chars = charsOf(batch);
    const kept = this.kept.get(runId);
    if (kept && batch.length) {
      const ended = batch.some((e) => e.event === END_EVENT);
      kept.chars += chars;
      const full =
        kept.events.length + batch.length > MAX_KEPT.events || kept.chars > MAX_KEPT.chars;
      if (ended || full) this.kept.delete(runId);
      else kept.events.push(...batch);
    }
    this.local.emit(runId, batch, chars, delivered.at(-1)?.seq);
  }

  /**
   * The `metadata` event of a run's first attempt, for the caller to write with the run itself
   * so that a stream can send it before any worker has picked the run up. Retries write their
   * own. `wake` is the NOTIFY that goes out when it commits.
   */
  opening(
    runId: string,
    wake: { channel: Channel; payload: string },
  ): { events: RunEvent[]; notify: { channel: Channel; payload: string } } {
    return {
      events: openingEvents(runId),
      notify: { channel: wake.channel, payload: this.notifier.remotePayload(wake.payload) },
    };
  }

  /** The NOTIFY that wakes readers of a run on other replicas, sent when a batch commits. */
  wakeFor(runId: string): { channel: Channel; payload: string } {
    return { channel: CHANNELS.events, payload: this.notifier.remotePayload(runId) };
  }

  /** Hands a batch written by someone else's statement to local readers, after its commit. */
  publish(runId: string, batch: RunEvent[]): void {
    this.deliver(runId, batch);
  }

  /**
   * Every event after `afterSeq`, then live ones, until the run's end marker (or `signal`).
   * `created`: the caller's request created the run and reads it in the same turn. Its log is
   * then known to be its opening events alone: nothing can run it before this reader is
   * subscribed (a worker here claims it after a round trip; another replica hears of it by a
   * NOTIFY sent after the commit, and its events' NOTIFY reaches this process as I/O, after this
   * synchronous start), so the log need not be read back unless it was kept.
   */
  async *read(
    runId: string,
    afterSeq: number,
    signal?: AbortSignal,
    { created = false, wait = false } = {},
  ): AsyncGenerator<RunEvent> {
    for await (const batch of this.readBatches(runId, afterSeq, signal, { created, wait }))
      yield* batch;
  }

  /**
   * `read`, a batch at a time: the events that arrived together (a tick's, a page of the table),
   * in order and never empty. A reader that sends many events saves a turn of every layer of
   * generators above it per event. `created`: as for `read`. `withEnd`: the end marker, when read,
   * ends the last batch (it carries the run's final status, see `closingBatch`). `coalesce`: a
   * reader woken by a live event waits one turn, so the events of that turn join its batch.
   * `wait`: the reader waits for the run's end, and `closeStreams` leaves it (see there).
   */
  async *readBatches(
    runId: string,
    afterSeq: number,
    signal?: AbortSignal,
    { created = false, withEnd = false, coalesce = false, wait = false } = {},
  ): AsyncGenerator<RunEvent[]> {
    let seq = afterSeq;
    const ending = wait ? this.closing.signal : this.closingStreams.signal;
    if (wait) this.waits++;
    // A kept log is complete from the first event, and later batches arrive through `local`.
    const kept = this.kept.get(runId)?.events ?? (created ? openingEvents(runId) : undefined);
    let queued: RunEvent[] = kept ? kept.filter((e) => e.seq > afterSeq) : [];
    let queuedChars = charsOf(queued);
    let mustQuery = kept === undefined;
    let wake: (() => void) | undefined;
    // Set once a batch did not fit: later ones are not queued either (the queue stays gapless)
    // until the next read of the table, which returns them.
    let overflowed = false;
    const onLocal = (batch: RunEvent[], chars: number, durableUpTo: number | undefined) => {
      // An empty batch: events already handed over live became durable (see `deliver`). Only
      // a reader that lacks some of them (it joined without the kept log) reads them back.
      if (!batch.length) {
        const has =
          durableUpTo !== undefined &&
          (seq >= durableUpTo || (queued[0]?.seq === seq + 1 && queued.at(-1)!.seq >= durableUpTo));
        if (has) return;
        mustQuery = true;
      } else if (
        !overflowed &&
        queued.length + batch.length <= MAX_QUEUED.events &&
        queuedChars + chars <= MAX_QUEUED.chars
      ) {
        queued.push(...batch);
        queuedChars += chars;
      } else {
        overflowed = true;
        mustQuery = true;
      }
      wake?.();
    };
    const offRemote = this.notifier.on(CHANNELS.events, (id) => {
      if (id !== runId && id !== '*') return;
      mustQuery = true;
      wake?.();
    });
    const onAbort = () => wake?.();
    this.local.on(runId, onLocal);
    signal?.addEventListener('abort', onAbort);
    ending.addEventListener('abort', onAbort);
    try {
      let idleMs = FIRST_IDLE_MS;
      while (!signal?.aborted && !ending.aborted) {
        queued = queued.filter((e) => e.seq > seq);
        queuedChars = charsOf(queued);
        let batch: RunEvent[] = [];
        if (queued[0]?.seq === seq + 1) {
          // Batches arrive whole and in order, so a queue that starts right after us is gapless
          // (and what it could not take, or a wake, is read after it: `mustQuery` stays).
          batch = queued;
          queued = [];
          queuedChars = 0;
        } else if (mustQuery || queued.length) {
          // Subscribed before reading, so nothing appended meanwhile is missed.
          mustQuery = false;
          overflowed = false;
          const page = await this.whileUnavailable(
            () => this.store.eventsAfter(runId, seq),
            signal,
          );
          batch = page.events;
          if (page.more) mustQuery = true;
        }
        const before = seq;
        const fresh: RunEvent[] = [];
        let ended = false;
        for (const event of batch) {
          if (event.seq <= seq) continue;
          if (event.event === END_EVENT) {
            if (withEnd) fresh.push(event);
            ended = true;
            break;
          }
          seq = event.seq;
          fresh.push(event);
        }
        if (fresh.length) yield fresh;
        if (ended) return;
        // Nothing new while queued events wait behind a gap: the gap's events were handed to
        // readers live before this one subscribed, and are not durable yet. Their write wakes it.
        const stalled = seq === before && queued.length > 0 && !mustQuery;
        if (!stalled && (seq !== before || mustQuery || queued.length)) continue;
        const heard = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), idleMs);
          wake = () => {
            clearTimeout(timer);
            resolve(true);
          };
        });
        wake = undefined;
        // Events produced in the same turn (a step that streams without awaiting) then pass
        // through every layer above once, not once each.
        if (heard && coalesce) await new Promise((resolve) => setImmediate(resolve));
        if (heard) continue;
        idleMs = IDLE_MS;
        // No end marker comes for a run deleted before it ran (its thread was deleted), nor for
        // one whose log the retention sweep already dropped.
        if (!(await this.whileUnavailable(() => this.store.isActive(runId), signal))) {
          for (;;) {
            const page = await this.whileUnavailable(
              () => this.store.eventsAfter(runId, seq),
              signal,
            );
            const end = page.events.findIndex((e) => e.event === END_EVENT);
            const fresh = end < 0 ? page.events : page.events.slice(0, withEnd ? end + 1 : end);
            if (fresh.length) {
              seq = fresh.at(-1)!.seq;
              yield fresh;
            }
            if (end >= 0 || !page.more) return;
          }
        }
        mustQuery = true;
      }
    } finally {
      this.local.off(runId, onLocal);
      offRemote();
      signal?.removeEventListener('abort', onAbort);
      ending.removeEventListener('abort', onAbort);
      if (wait && --this.waits === 0) {
        for (const resolve of this.waitsGone) resolve();
        this.waitsGone.clear();
      }
    }
  }

  /** A reader's read, tried again while the database is away (a reader may wait for it). */
  private whileUnavailable<T>(read: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    return retryWhileUnavailable(read, { withinMs: UNAVAILABLE_RETRY_MS, signal });
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
  /** Every event pushed and not yet known to be durable (see `failed`). */
  private unwritten: RunEvent[] = [];
  /** Sequence number of the last event pushed other than an end marker. */
  private lastEvent: number;
  private flushing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  /** A batch that could not be written: later ones are not tried, and every flush says why. */
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly runId: string,
    private seq: number,
    private readonly log: RunEventLog,
    private readonly batchMs = 0,
    private readonly lease?: RunFencing,
  ) {
    this.lastEvent = seq - 1;
  }

  push(event: string, data: unknown): void {
    // Encoded once, here: the log's INSERT and every stream that sends it reuse the text.
    const pushed = { seq: this.seq++, event, data, json: encodeData(data) };
    this.pending.push(pushed);
    this.unwritten.push(pushed);
    if (event !== END_EVENT) this.lastEvent = pushed.seq;
    this.log.pushedLive(this.runId, pushed);
    // Events produced in one tick (or within `batchMs`) share one INSERT and one NOTIFY.
    // A failure is kept for the next flush the run awaits; a timer's flush has nobody to tell.
    this.timer ??= setTimeout(() => void this.flush().catch(() => undefined), this.batchMs);
  }

  /** Writes what is buffered; resolves once it is durable and readers were woken. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.flushing.then(async () => {
      if (!batch.length || this.failure) return;
      try {
        await this.log.append(this.runId, batch, this.lease);
        const upTo = batch.at(-1)!.seq;
        this.unwritten = this.unwritten.filter((e) => e.seq > upTo);
      } catch (error) {
        this.failure = { error };
      }
    });
    return this.flushing.then(() => this.throwIfFailed());
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }

  async end(): Promise<void> {
    this.push(END_EVENT, null);
    await this.flush();
  }

  /**
   * What is still buffered plus the end marker, for the caller to write in the transaction that
   * settles the run (then `log.publish` it). Earlier batches are durable when this resolves.
   * `status`: the run's final status, written with it, carried by the end marker so that a
   * reader needs not read the run to learn how it ended.
   */
  async closingBatch(status?: RunStatus): Promise<RunEvent[]> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flushing;
    this.throwIfFailed();
    const end = { seq: this.seq++, event: END_EVENT, data: status ? { status } : null };
    const batch = [...this.pending, end];
    this.pending = [];
    return batch;
  }

  /**
   * The run's end could not be written: its events not known to be durable, then `error` and
   * the end marker, for the caller to write or at least hand to this process's readers, which
   * would otherwise wait for an end that never comes.
   */
  failed(error: { error: string; message: string }): RunEvent[] {
    clearTimeout(this.timer);
    this.timer = undefined;
    const bySeq = new Map<number, RunEvent>();
    for (const e of this.unwritten) if (e.event !== END_EVENT) bySeq.set(e.seq, e);
    this.pending = [];
    this.unwritten = [];
    // Right after the last event, where the end marker that failed was: a reader that has every
    // event so far takes these at once, without looking for the gap in the log.
    const ended = [
      { seq: this.lastEvent + 1, event: 'error', data: error },
      { seq: this.lastEvent + 2, event: END_EVENT, data: null },
    ];
    this.seq = this.lastEvent = this.lastEvent + 3;
    return [...[...bySeq.values()].sort((a, b) => a.seq - b.seq), ...ended];
  }

  /** The closing batch was not written after all: its events go back, its end marker away. */
  reopen(batch: RunEvent[]): void {
    const events = batch.filter((e) => e.event !== END_EVENT);
    this.pending = [...events, ...this.pending];
    this.seq = (events.at(-1)?.seq ?? this.seq - 2) + 1;
  }
}
