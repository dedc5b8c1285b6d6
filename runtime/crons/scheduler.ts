// Fires due crons. Every replica runs this loop; each firing is one transaction that locks the
// cron (SKIP LOCKED), creates its run and moves `next_run_date` on. Both commit together or not
// at all, so a due time yields exactly one run however many replicas start, stop or crash.
//
// Missed times (every replica down, or the loop behind): a cron found overdue fires ONCE, for
// its earliest missed time, and its next due time is then counted from now. Downtime never
// produces a burst of catch-up runs, and the schedule resumes on its own grid.
import { withTransaction, type Pool, type PoolClient } from '../../common/db/index.js';
import { AppError } from '../../common/errors/index.js';
import type { Logger } from '../../common/logging/index.js';
import type { CreatedRun, RunCreateBody, RunService } from '../runs/index.js';
import { nextRunDate } from './schedule.js';
import type { CronRow, CronStore } from './store.js';

export interface CronSchedulerOptions {
  /** How often the loop looks for due crons. */
  tickMs: number;
}

type Firing = { cron: CronRow; scheduledFor: Date; created: CreatedRun | undefined };

export class CronScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly pool: Pool,
    private readonly store: CronStore,
    private readonly runs: RunService,
    private readonly options: CronSchedulerOptions,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.fireDue()
        .then(() => undefined)
        .catch((err: unknown) => this.logger.warn({ err }, 'cron tick failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.options.tickMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Fires every due cron, one transaction each, until none is left. Returns how many fired. */
  async fireDue(): Promise<number> {
    let fired = 0;
    if (!(await this.store.anyDue(this.pool))) return fired;
    while (!this.stopped) {
      const firing = await withTransaction(this.pool, (db) => this.fireOne(db));
      if (!firing) break;
      fired++;
      if (firing.created) await this.runs.announce(firing.created);
      this.logger.info(
        {
          cron_id: firing.cron.cron_id,
          scheduled_for: firing.scheduledFor,
          run_id: firing.created?.run.run_id,
        },
        firing.created ? 'cron fired' : 'cron firing skipped',
      );
    }
    return fired;
  }

  private async fireOne(db: PoolClient): Promise<Firing | undefined> {
    const claimed = await this.store.claimDue(db);
    if (!claimed) return undefined;
    const { cron, now } = claimed;
    const scheduledFor = cron.next_run_date ?? now;
    const created =
      cron.end_time && scheduledFor > cron.end_time
        ? undefined
        : await this.createRun(db, cron, scheduledFor);
    await this.store.setNextRunDate(cron.cron_id, this.following(cron, now), db);
    return { cron, scheduledFor, created };
  }

  /** The next due time after `now`; a broken schedule (e.g. a vanished time zone) stops the cron. */
  private following(cron: CronRow, now: Date): Date | null {
    try {
      return nextRunDate(cron, now, cron.end_time);
    } catch (err) {
      this.logger.error({ err, cron_id: cron.cron_id }, 'cron schedule no longer evaluates');
      return null;
    }
  }

  /**
   * The run, in a savepoint: a firing the run service refuses (the thread is busy and the cron
   * says `reject`, ...) or that fails is skipped and logged, and the schedule still moves on.
   */
  private async createRun(
    db: PoolClient,
    cron: CronRow,
    scheduledFor: Date,
  ): Promise<CreatedRun | undefined> {
    const config = (cron.payload.config ?? {}) as { configurable?: Record<string, unknown> };
    const body = {
      ...cron.payload,
      // The graph can tell a cron's run by its id, as on the official server.
      config: { ...config, configurable: { ...config.configurable, cron_id: cron.cron_id } },
      assistant_id: cron.assistant_id,
      metadata: cron.metadata,
      ...(cron.thread_id === null ? { on_completion: cron.on_run_completed ?? 'delete' } : {}),
    } as RunCreateBody;
    await db.query('SAVEPOINT cron_run');
    try {
      const created = await this.runs.createInTransaction(db, cron.thread_id ?? undefined, body, {
        cron_id: cron.cron_id,
        scheduled_for: scheduledFor.toISOString(),
      });
      await db.query('RELEASE SAVEPOINT cron_run');
      return created;
    } catch (err) {
      // Skipping (not retrying) keeps one cron that always fails from blocking the others.
      await db.query('ROLLBACK TO SAVEPOINT cron_run');
      if (err instanceof AppError)
        this.logger.warn(
          { cron_id: cron.cron_id, detail: err.detail },
          'cron run refused; firing skipped',
        );
      else this.logger.error({ err, cron_id: cron.cron_id }, 'cron run failed; firing skipped');
      return undefined;
    }
  }
}
