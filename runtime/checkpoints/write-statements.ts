// The checkpointer's two writes, each as one statement. The official saver opens a transaction
// and sends every blob and write row on its own (BEGIN, n INSERTs, COMMIT); a run writes a
// checkpoint and a set of task writes per step, so those round trips were most of a short run's
// time in the database. A single statement is atomic on its own, so nothing is given up.
import { WRITES_IDX_MAP } from '@langchain/langgraph-checkpoint';

export interface Statement {
  text: string;
  values: unknown[];
}

/** `($1, $2, ...), ($7, $8, ...)` for `rows` rows of `width` parameters, numbered from `first`. */
function valuesList(rows: number, width: number, first: number): string {
  const tuples: string[] = [];
  for (let row = 0; row < rows; row++) {
    const params = Array.from({ length: width }, (_, col) => `$${first + row * width + col}`);
    tuples.push(`(${params.join(', ')})`);
  }
  return tuples.join(', ');
}

const CHECKPOINT_COLUMNS =
  'thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata';
const BLOB_COLUMNS = 'thread_id, checkpoint_ns, channel, version, type, blob';
const WRITE_COLUMNS = 'thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob';

/** A checkpoint and the blobs of the channels it changed. */
export function putCheckpointStatement(
  checkpoint: readonly unknown[],
  blobs: readonly (readonly unknown[])[],
): Statement {
  const upsertCheckpoint = `INSERT INTO checkpoints (${CHECKPOINT_COLUMNS})
    VALUES ${valuesList(1, 6, 1)}
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
    DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`;
  if (!blobs.length) return { text: upsertCheckpoint, values: [...checkpoint] };
  // Blobs are keyed by (channel, version) and never change once written.
  const text = `WITH blobs AS (
      INSERT INTO checkpoint_blobs (${BLOB_COLUMNS})
      VALUES ${valuesList(blobs.length, 6, 7)}
      ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
    )
    ${upsertCheckpoint}`;
  return { text, values: [...checkpoint, ...blobs.flat()] };
}

/** Key of a write row: (task_id, idx). */
const writeKey = (row: readonly unknown[]) => `${String(row[3])}\u0000${String(row[4])}`;

/**
 * A task's pending writes. Writes to the special channels (errors, interrupts, resumes) replace
 * an earlier one with the same key; ordinary writes keep the first. One statement may not touch
 * a row twice, so duplicate keys are reduced the way sequential statements would have left them.
 */
export function putWritesStatement(
  rows: readonly (readonly unknown[])[],
  channels: readonly string[],
): Statement | undefined {
  const replace = channels.every((channel) => channel in WRITES_IDX_MAP);
  const byKey = new Map<string, readonly unknown[]>();
  for (const row of rows) {
    const key = writeKey(row);
    if (replace || !byKey.has(key)) byKey.set(key, row);
  }
  const unique = [...byKey.values()];
  if (!unique.length) return undefined;
  const conflict = replace
    ? 'DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob'
    : 'DO NOTHING';
  return {
    text: `INSERT INTO checkpoint_writes (${WRITE_COLUMNS})
      VALUES ${valuesList(unique.length, 8, 1)}
      ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${conflict}`,
    values: unique.flat(),
  };
}
