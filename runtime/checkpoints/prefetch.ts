// A thread's newest checkpoint, read by the statement that starts a run on it (see
// RunStore.insert) rather than by the run's first getTuple: one round trip less per run.
import type { Checkpoint } from '@langchain/langgraph-checkpoint';
import type { ColumnRead, EmbeddedRead } from '../../common/db/index.js';

/**
 * Configurable key of a run started with its thread's newest checkpoint already read:
 * a PrefetchedCheckpoint, used by the run's first read unless something was written before it.
 */
export const PREFETCHED_CHECKPOINT_KEY = '__graphdock_prefetched_checkpoint';

export interface PrefetchedCheckpoint {
  unread: boolean;
  row: LatestCheckpointRow;
}

/** The columns of `latestCheckpointRead`; all null when the thread has no checkpoint. */
export interface LatestCheckpointRow {
  latest_checkpoint: (Omit<Checkpoint, 'pending_sends' | 'channel_values'> & { v: number }) | null;
  latest_checkpoint_id: string | null;
  latest_parent_checkpoint_id: string | null;
  latest_metadata: Record<string, unknown> | null;
  latest_channel_values: [Uint8Array, Uint8Array, Uint8Array][] | null;
  latest_pending_writes: [Uint8Array, Uint8Array, Uint8Array, Uint8Array][] | null;
}

const COLUMNS: readonly (keyof LatestCheckpointRow)[] = [
  'latest_checkpoint',
  'latest_checkpoint_id',
  'latest_parent_checkpoint_id',
  'latest_metadata',
  'latest_channel_values',
  'latest_pending_writes',
];

/**
 * The blobs of checkpoint `cp` (its channel values), each looked up by its key. `LIMIT 1` keeps
 * it a lookup: as a join, PostgreSQL hashed every blob the thread had ever written, so a read
 * grew with the length of the conversation.
 */
const CHANNEL_VALUES_OF_CP = `(SELECT array_agg(array[bl.channel::bytea, bl.type::bytea, bl.blob])
   FROM jsonb_each_text(cp.checkpoint -> 'channel_versions') AS v
   CROSS JOIN LATERAL (SELECT b.channel, b.type, b.blob FROM checkpoint_blobs b
     WHERE b.thread_id = cp.thread_id AND b.checkpoint_ns = cp.checkpoint_ns
       AND b.channel = v.key AND b.version = v.value
     LIMIT 1) AS bl)`;

/** The pending writes of checkpoint `cp`, in the saver's order. */
const PENDING_WRITES_OF_CP = `(SELECT array_agg(array[cw.task_id::text::bytea, cw.channel::bytea, cw.type::bytea, cw.blob]
     ORDER BY cw.task_id, cw.idx)
   FROM checkpoint_writes cw WHERE cw.thread_id = cp.thread_id
     AND cw.checkpoint_ns = cp.checkpoint_ns AND cw.checkpoint_id = cp.checkpoint_id)`;

/**
 * The Postgres saver's checkpoint read (its getTuple and list append their WHERE clause), with
 * the same columns, its blobs looked up by key as above.
 */
export const CHECKPOINT_SELECT_SQL = `SELECT thread_id, checkpoint, checkpoint_ns, checkpoint_id,
    parent_checkpoint_id, metadata, ${CHANNEL_VALUES_OF_CP} AS channel_values,
    ${PENDING_WRITES_OF_CP} AS pending_writes
  FROM checkpoints cp `;

/** The newest root checkpoint of the thread `thread` (an SQL expression of type text). */
function latestCheckpointSql(thread: string): string {
  return `SELECT cp.checkpoint AS latest_checkpoint,
        cp.checkpoint_id AS latest_checkpoint_id,
        cp.parent_checkpoint_id AS latest_parent_checkpoint_id,
        cp.metadata AS latest_metadata,
        ${CHANNEL_VALUES_OF_CP} AS latest_channel_values,
        ${PENDING_WRITES_OF_CP} AS latest_pending_writes
      FROM checkpoints cp
      WHERE cp.thread_id = ${thread} AND cp.checkpoint_ns = ''
      ORDER BY cp.checkpoint_id DESC LIMIT 1`;
}

/**
 * The root namespace's newest checkpoint of `threadId` with its blobs and pending writes, in
 * the shape the Postgres checkpointer's own read returns (see GraphdockCheckpointer.getTuple).
 */
export function latestCheckpointRead(threadId: string): EmbeddedRead {
  return {
    columns: COLUMNS,
    values: [threadId],
    sql: (first) => latestCheckpointSql(`$${first}::text`),
  };
}

/**
 * The same read for the thread a column of the embedding statement names (`threadColumn`, of
 * type uuid or text): the claim of a queued run reads its thread's checkpoint this way.
 */
export function latestCheckpointReadOf(threadColumn: string): ColumnRead {
  return { columns: COLUMNS, sql: latestCheckpointSql(`${threadColumn}::text`) };
}
