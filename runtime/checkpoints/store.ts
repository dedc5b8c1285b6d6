// SQL over the checkpointer's own tables for what its API lacks: transactional delete, copy to a
// new thread, and pruning to the latest checkpoint.
import type { EmbeddedStatement, Pool, PoolClient } from '../../common/db/index.js';

/** The checkpointer's tables, each keyed by thread; checkpoints last, after what refers to them. */
const THREAD_TABLES = ['checkpoint_writes', 'checkpoint_blobs', 'checkpoints'] as const;

type Queryable = Pool | PoolClient;

export class CheckpointStore {
  /** Every checkpoint, blob and pending write of the threads, in one statement. */
  async deleteThreads(threadIds: string[], db: PoolClient): Promise<void> {
    if (!threadIds.length) return;
    const deletes = THREAD_TABLES.map(
      (table, i) => `d${i} AS (DELETE FROM ${table} WHERE thread_id = ANY($1::text[]))`,
    );
    await db.query(`WITH ${deletes.join(', ')} SELECT 1`, [threadIds]);
  }

  /**
   * `deleteThreads` for one thread, as statements another store runs as CTEs of its own;
   * `sql(first)` numbers the parameters from `$first`.
   */
  deleteThreadStatements(threadId: string): EmbeddedStatement[] {
    return THREAD_TABLES.map((table) => ({
      sql: (first, onlyIf) =>
        `DELETE FROM ${table} WHERE thread_id = $${first}::text${onlyIf ? ` AND ${onlyIf}` : ''}`,
      values: [threadId],
    }));
  }

  /** Removes the checkpoints a run wrote (they carry its id in their metadata). */
  async deleteRun(threadId: string, runId: string, db: PoolClient): Promise<void> {
    await db.query(
      `DELETE FROM checkpoint_writes w USING checkpoints c
       WHERE c.thread_id = $1 AND c.metadata ->> 'run_id' = $2
         AND w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id`,
      [threadId, runId],
    );
    await db.query(`DELETE FROM checkpoints WHERE thread_id = $1 AND metadata ->> 'run_id' = $2`, [
      threadId,
      runId,
    ]);
  }

  /** Whether the thread has this checkpoint of its root graph. */
  async has(threadId: string, checkpointId: string, db: Queryable): Promise<boolean> {
    const { rows } = await db.query<{ found: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM checkpoints
         WHERE thread_id = $1 AND checkpoint_ns = '' AND checkpoint_id = $2) AS found`,
      [threadId, checkpointId],
    );
    return rows[0]?.found ?? false;
  }

  async hasRun(threadId: string, runId: string, db: Queryable): Promise<boolean> {
    const { rows } = await db.query<{ found: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1 AND metadata ->> 'run_id' = $2) AS found`,
      [threadId, runId],
    );
    return rows[0]?.found ?? false;
  }

  async copyThread(fromId: string, toId: string, db: PoolClient): Promise<void> {
    await db.query(
      `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
       SELECT $2::text, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
              CASE WHEN metadata ? 'thread_id' THEN jsonb_set(metadata, '{thread_id}', to_jsonb($2::text)) ELSE metadata END
       FROM checkpoints WHERE thread_id = $1`,
      [fromId, toId],
    );
    await db.query(
      `INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
       SELECT $2, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = $1`,
      [fromId, toId],
    );
    await db.query(
      `INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
       SELECT $2, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob FROM checkpoint_writes WHERE thread_id = $1`,
      [fromId, toId],
    );
  }

  /** Keeps only the newest checkpoint of each namespace and the blobs it references. */
  async keepLatest(threadIds: string[], db: PoolClient): Promise<void> {
    if (!threadIds.length) return;
    await db.query(
      `WITH latest AS (
         SELECT DISTINCT ON (thread_id, checkpoint_ns) thread_id, checkpoint_ns, checkpoint_id
         FROM checkpoints WHERE thread_id = ANY($1::text[])
         ORDER BY thread_id, checkpoint_ns, checkpoint_id DESC
       )
       DELETE FROM checkpoints c WHERE c.thread_id = ANY($1::text[])
         AND NOT EXISTS (SELECT 1 FROM latest l WHERE l.thread_id = c.thread_id
           AND l.checkpoint_ns = c.checkpoint_ns AND l.checkpoint_id = c.checkpoint_id)`,
      [threadIds],
    );
    await db.query(
      `DELETE FROM checkpoint_writes w WHERE w.thread_id = ANY($1::text[])
         AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = w.thread_id
           AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)`,
      [threadIds],
    );
    await db.query(
      `DELETE FROM checkpoint_blobs b WHERE b.thread_id = ANY($1::text[])
         AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id
           AND c.checkpoint_ns = b.checkpoint_ns
           AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)`,
      [threadIds],
    );
  }
}
