// The queue worker: claims runs from PostgreSQL and executes up to `concurrency` at once.
// NOTIFY wakes it within milliseconds; a slow poll is the fallback. Leases are renewed while a
// run executes; runs whose worker died are found by lease expiry and handed out again.
import { randomUUID } from 'node:crypto';
import type { ColumnRead } from '../../common/db/index.js';
import type { Logger } from '../../common/logging/index.js';
import type { RunExecutor } from './executor.js';
import { CHANNELS, isClaimable, waitFor, type Notifier } from './notifier.js';
import type { RunRow, RunStart, RunStore } from './store.js';

/** How long stopping waits for aborted runs to hand themselves back to the queue. */
const HAND_BACK_MS = 5000;

export interface WorkerOptions {
  concurrency: number;
  leaseSeconds: number;
  maxAttempts: number;
  pollMs: number;
  /**
   * What a claimed run reads first (its thread's newest checkpoint), for the claim to read in
   * the same statement; the execution is handed the row (see RunService's `startRead`).
   */
  claimRead?: (threadColumn: string) => ColumnRead;
}

export class RunWorker {
  // The pid tells the processes of one pod apart in leases and logs (node:cluster workers).
  readonly id = `worker-${process.pid}-${randomUUID()}`;
  private readonly active = new Map<string, AbortController>();
  private readonly idle = new Set<() => void>();
  /** Slots promised to runs being inserted already running on this worker (see `reserve`). */
  private reserved = 0;
  private stopping = false;
  private loopDone: Promise<void> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  private offCancel: (() => void) | undefined;

  constructor(
    private readonly store: RunStore,
    private readonly executor: RunExecutor,
    private readonly notifier: Notifier,
    private readonly options: WorkerOptions,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.offCancel = this.notifier.on(CHANNELS.cancel, (runId) => {
      // Unread while the database is away; the reconnect's catch-up ('*') looks again.
      this.onCancel(runId).catch((err: unknown) =>
        this.logger.warn({ err }, 'cancel check failed'),
      );
    });
    const heartbeat = setInterval(
      () => {
        this.store
          .extendLeases(this.id, [...this.active.keys()], this.options.leaseSeconds)
          .catch((err: unknown) => {
            this.logger.warn({ err }, 'lease renewal failed');
          });
      },
      (this.options.leaseSeconds * 1000) / 3,
    );
    const recovery = setInterval(() => {
      this.store.recoverExpired(this.options.maxAttempts).then(
        (rows) => {
          if (rows.length) {
            this.logger.warn(
              { runs: rows.map((r) => r.run_id) },
              'recovered runs of a lost worker',
            );
            void this.notifier.notify(CHANNELS.runs);
          }
        },
        (err: unknown) => this.logger.warn({ err }, 'run recovery failed'),
      );
    }, this.options.leaseSeconds * 1000);
    heartbeat.unref();
    recovery.unref();
    this.timers = [heartbeat, recovery];
    this.loopDone = this.loop();
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      // Subscribe first, so a NOTIFY that lands while claiming still wakes the next wait.
      const woken = waitFor(this.notifier, CHANNELS.runs, isClaimable, this.options.pollMs);
      while (!this.stopping && this.busySlots() < this.options.concurrency) {
        const claimed = await this.store
          .claim(this.id, this.options.leaseSeconds, this.options.claimRead)
          .catch((err: unknown) => {
            this.logger.warn({ err }, 'claim failed');
            return undefined;
          });
        if (!claimed) break;
        this.launch(claimed.run, claimed.read);
        if (!claimed.morePending) break;
      }
      await Promise.race([woken, new Promise<void>((r) => this.idle.add(r))]);
      this.idle.clear();
    }
  }

  private busySlots(): number {
    return this.active.size + this.reserved;
  }

  /**
   * Promises a slot to a run its creator will insert already running on this worker, so that it
   * needs no claim. Undefined when every slot is taken or the worker is stopping. The creator
   * then calls `adopt` exactly once.
   */
  reserve(): RunStart | undefined {
    if (this.stopping || this.busySlots() >= this.options.concurrency) return undefined;
    this.reserved++;
    return { workerId: this.id, leaseSeconds: this.options.leaseSeconds };
  }

  /**
   * Ends a reservation: starts `run` when it was inserted running on this worker; otherwise (it
   * was queued, or its creation failed) the slot goes back to claiming. `read`: what the
   * creating statement read for the run's execution (see RunService's `startRead`).
   */
  adopt(run: RunRow | undefined, read?: Record<string, unknown>): void {
    this.reserved--;
    if (run?.status === 'running' && run.worker_id === this.id) this.launch(run, read);
    else for (const wake of this.idle) wake();
  }

  private launch(run: RunRow, read?: Record<string, unknown>): void {
    const controller = new AbortController();
    this.active.set(run.run_id, controller);
    if (run.cancel_action) controller.abort(run.cancel_action);
    void this.executor
      .execute(run, controller.signal, read)
      .catch((err: unknown) => {
        this.logger.error({ err, run_id: run.run_id }, 'run execution failed');
        return true;
      })
      .then((runsWaiting) => {
        const wasFull = this.busySlots() >= this.options.concurrency;
        this.active.delete(run.run_id);
        // A freed slot matters only to a loop that stopped claiming for lack of one.
        if (wasFull) for (const wake of this.idle) wake();
        // A finished run unblocks the next one on its thread, for any replica's worker.
        if (runsWaiting) void this.notifier.notify(CHANNELS.runs).catch(() => undefined);
      });
  }

  private async onCancel(runId: string): Promise<void> {
    // After a reconnect ('*'), a cancel may have been missed: look at every active run.
    if (runId === '*') {
      await Promise.all([...this.active.keys()].map((id) => this.onCancel(id)));
      return;
    }
    const controller = this.active.get(runId);
    if (!controller) return;
    const run = await this.store.getById(runId);
    if (run?.cancel_action) controller.abort(run.cancel_action);
  }

  /**
   * Stops claiming; lets active runs finish within `graceMs`, then hands the rest back to the
   * queue. Their leases are renewed (and cancels heard) until then: a lease that lapsed while
   * they drain would let another replica execute them a second time.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    for (const wake of this.idle) wake();
    const [heartbeat, ...others] = this.timers;
    for (const t of others) clearInterval(t);
    await this.loopDone;
    const deadline = Date.now() + graceMs;
    while ((this.active.size || this.reserved) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    for (const controller of this.active.values()) controller.abort('shutdown');
    // An aborted run hands itself back within a step's writes; bounded, as a write may hang.
    const handedBack = Date.now() + HAND_BACK_MS;
    while (this.active.size && Date.now() < handedBack) await new Promise((r) => setTimeout(r, 20));
    clearInterval(heartbeat);
    this.offCancel?.();
  }
}
