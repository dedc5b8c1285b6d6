// A run's checkpoint writes, held back and sent together. With LangGraph's asynchronous
// durability a step never waits for its checkpoint to be durable, only the run's end does; on a
// loopback connection each statement costs the server more than the rows it carries, so the
// writes of a short run are better sent as one statement, or embedded in the one that ends the
// run. Writes wait at most `maxDelayMs`, so a long run still persists its progress as it goes.
import type { EmbeddedStatement } from '../../common/db/index.js';
import { collectedInserts, replacesWrites, writeKey } from './write-statements.js';

/** Parameters beyond which pending writes are sent at once (PostgreSQL allows 65,535). */
const MAX_PENDING_PARAMS = 20_000;

/** Rows waiting to be written, reduced as the statements they stand for would have left them. */
export class PendingCheckpointWrites {
  /** By (namespace, id): a checkpoint written again replaces its row. */
  private readonly checkpoints = new Map<string, readonly unknown[]>();
  /** By (namespace, channel, version): blobs never change once written. */
  private readonly blobs = new Map<string, readonly unknown[]>();
  /** By (namespace, checkpoint, task, idx), with the conflict rule of the call that wrote it. */
  private readonly writes = new Map<string, { row: readonly unknown[]; replace: boolean }>();
  private params = 0;

  get size(): number {
    return this.params;
  }

  /** A checkpoint row (thread, ns, id, parent, checkpoint, metadata) and its blob rows. */
  addCheckpoint(row: readonly unknown[], blobs: readonly (readonly unknown[])[]): void {
    const key = `${String(row[1])}\u0000${String(row[2])}`;
    if (!this.checkpoints.has(key)) this.params += row.length;
    this.checkpoints.set(key, row);
    for (const blob of blobs) {
      const blobKey = `${String(blob[1])}\u0000${String(blob[2])}\u0000${String(blob[3])}`;
      if (this.blobs.has(blobKey)) continue;
      this.blobs.set(blobKey, blob);
      this.params += blob.length;
    }
  }

  /** One task's write rows, with the rule `putWritesStatement` applies to them. */
  addWrites(rows: readonly (readonly unknown[])[], channels: readonly string[]): void {
    const replace = replacesWrites(channels);
    for (const row of rows) {
      const key = writeKey(row);
      if (!this.writes.has(key)) this.params += row.length;
      else if (!replace) continue;
      this.writes.set(key, { row, replace });
    }
  }

  /** Everything pending as INSERTs for one statement's CTEs; leaves nothing pending. */
  take(): EmbeddedStatement[] {
    const inserts = collectedInserts(
      [...this.checkpoints.values()],
      [...this.blobs.values()],
      [...this.writes.values()],
    );
    this.checkpoints.clear();
    this.blobs.clear();
    this.writes.clear();
    this.params = 0;
    return inserts;
  }
}

/** Runs embedded statements as one statement of CTEs. */
export function asOneStatement(inserts: EmbeddedStatement[]): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const ctes = inserts.map((insert, i) => {
    const cte = `w${i} AS (${insert.sql(values.length + 1)})`;
    values.push(...insert.values);
    return cte;
  });
  return { text: `WITH ${ctes.join(', ')} SELECT 1`, values };
}

/**
 * The deferred checkpoint writes of one run. The checkpointer adds to it instead of writing; the
 * run's executor ends it: `take` hands back what is still pending for
 * the run's final statement, `end` writes it, `discard` drops it (a thread about to be deleted).
 */
export class CheckpointDeferral {
  private readonly pending = new PendingCheckpointWrites();
  private timer: NodeJS.Timeout | undefined;
  /** Flushes run one after another, so a later write never lands before an earlier one. */
  private flushed: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | undefined;
  private ended = false;

  /** `write`: sends inserts as one statement (fenced by the run's lease, see the checkpointer). */
  constructor(
    private readonly write: (inserts: EmbeddedStatement[]) => Promise<void>,
    private readonly maxDelayMs: number,
  ) {}

  /** Whether it still takes writes (until `take`, `end` or `discard`). */
  get active(): boolean {
    return !this.ended;
  }

  get hasPending(): boolean {
    return this.pending.size > 0;
  }

  /** Adds rows; throws the error of an earlier write that failed, so the run fails with it. */
  add(fill: (pending: PendingCheckpointWrites) => void): void {
    if (this.failure) throw this.failure.error;
    if (this.ended) throw new Error('checkpoint deferral has ended');
    fill(this.pending);
    if (this.pending.size > MAX_PENDING_PARAMS) void this.flush().catch(() => undefined);
    else this.timer ??= setTimeout(() => void this.flush().catch(() => undefined), this.maxDelayMs);
  }

  /** Writes everything pending; resolves once it and every earlier flush are durable. */
  flush(): Promise<void> {
    this.clearTimer();
    if (this.pending.size > 0) {
      const inserts = this.pending.take();
      this.flushed = this.flushed.then(async () => {
        if (this.failure) return;
        try {
          await this.write(inserts);
        } catch (error) {
          this.failure = { error };
        }
      });
    }
    return this.flushed.then(() => {
      if (this.failure) throw this.failure.error;
    });
  }

  /**
   * Stops deferring and returns what is still pending, for the caller to write in its own
   * statement, once earlier flushes are durable. Throws if one of them failed.
   */
  async take(): Promise<EmbeddedStatement[]> {
    this.stop();
    await this.flushed;
    if (this.failure) throw this.failure.error;
    return this.pending.take();
  }

  /** Stops deferring after writing everything pending. */
  async end(): Promise<void> {
    this.stop();
    await this.flush();
  }

  /** Stops deferring and drops what is pending (its thread is deleted with the run). */
  async discard(): Promise<void> {
    this.stop();
    this.pending.take();
    await this.flushed;
  }

  private stop(): void {
    this.clearTimer();
    this.ended = true;
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
