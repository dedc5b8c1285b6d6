// The checkpointer's two writes, each as one statement. The official saver opens a transaction
// and sends every blob and write row on its own (BEGIN, n INSERTs, COMMIT); a run writes a
// checkpoint and a set of task writes per step, so those round trips were most of a short run's
// time in the database. A single statement is atomic on its own, so nothing is given up.
import { WRITES_IDX_MAP } from '@langchain/langgraph-checkpoint';
import { fencedStatement, type EmbeddedStatement, type RunFence } from '../../common/db/index.js';

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

/**
 * `valuesList` with each parameter cast to its column's type: a VALUES list read by
 * INSERT ... SELECT (a fenced write) would otherwise type them all text.
 */
function typedValuesList(rows: number, types: readonly string[], first: number): string {
  const width = types.length;
  const tuples: string[] = [];
  for (let row = 0; row < rows; row++) {
    const params = types.map((type, col) => `$${first + row * width + col}::${type}`);
    tuples.push(`(${params.join(', ')})`);
  }
  return tuples.join(', ');
}

/**
 * A VALUES list's columns by the names PostgreSQL gives them. Not `*`: the pool never prepares a
 * text that selects `*` (see StatementNames), and the statement that ends a run embeds these.
 */
function valuesColumns(width: number): string {
  return Array.from({ length: width }, (_, col) => `column${col + 1}`).join(', ');
}

export const CHECKPOINT_COLUMNS =
  'thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata';
export const BLOB_COLUMNS = 'thread_id, checkpoint_ns, channel, version, type, blob';
export const WRITE_COLUMNS =
  'thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob';

const UPSERT_CHECKPOINT = `ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
    DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`;
// Blobs are keyed by (channel, version) and never change once written.
const KEEP_BLOB = 'ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING';
const WRITE_KEY = 'ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)';
const REPLACE_WRITE = `${WRITE_KEY} DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob`;
const KEEP_WRITE = `${WRITE_KEY} DO NOTHING`;

/** Column types, in the order of the columns above (the official saver's tables). */
const CHECKPOINT_TYPES = ['text', 'text', 'text', 'text', 'jsonb', 'jsonb'];
const BLOB_TYPES = ['text', 'text', 'text', 'text', 'text', 'bytea'];
const WRITE_TYPES = ['text', 'text', 'text', 'text', 'integer', 'text', 'text', 'bytea'];

/** Inserts `rows`; with `onlyIf` (a fenced write), only when that holds. */
function rowsInsert(
  table: string,
  columns: string,
  types: readonly string[],
  rows: readonly (readonly unknown[])[],
  conflict: string,
): EmbeddedStatement | undefined {
  if (!rows.length) return undefined;
  return {
    sql: (first, onlyIf) =>
      onlyIf
        ? `INSERT INTO ${table} (${columns})
           SELECT ${valuesColumns(types.length)} FROM (VALUES ${typedValuesList(rows.length, types, first)}) AS v
           WHERE ${onlyIf} ${conflict}`
        : `INSERT INTO ${table} (${columns}) VALUES ${valuesList(rows.length, types.length, first)} ${conflict}`,
    values: rows.flat(),
  };
}

/**
 * Checkpoints, blobs and task writes collected from several calls (see PendingCheckpointWrites),
 * as one INSERT per table and conflict rule, for one statement's CTEs. `writes` are already
 * reduced to one row per key, each with the rule of the call it came from.
 */
export function collectedInserts(
  checkpoints: readonly (readonly unknown[])[],
  blobs: readonly (readonly unknown[])[],
  writes: readonly { row: readonly unknown[]; replace: boolean }[],
): EmbeddedStatement[] {
  return [
    rowsInsert('checkpoint_blobs', BLOB_COLUMNS, BLOB_TYPES, blobs, KEEP_BLOB),
    rowsInsert('checkpoints', CHECKPOINT_COLUMNS, CHECKPOINT_TYPES, checkpoints, UPSERT_CHECKPOINT),
    rowsInsert(
      'checkpoint_writes',
      WRITE_COLUMNS,
      WRITE_TYPES,
      writes.filter((w) => !w.replace).map((w) => w.row),
      KEEP_WRITE,
    ),
    rowsInsert(
      'checkpoint_writes',
      WRITE_COLUMNS,
      WRITE_TYPES,
      writes.filter((w) => w.replace).map((w) => w.row),
      REPLACE_WRITE,
    ),
  ].filter((insert): insert is EmbeddedStatement => insert !== undefined);
}

/**
 * A checkpoint and the blobs of the channels it changed. With `fence` (a run's write), written
 * only while the run's lease holds; the statement's row says whether it did (`held`).
 */
export function putCheckpointStatement(
  checkpoint: readonly unknown[],
  blobs: readonly (readonly unknown[])[],
  fence?: RunFence,
): Statement {
  if (fence) return fencedStatement(fence, collectedInserts([checkpoint], blobs, []));
  const upsertCheckpoint = `INSERT INTO checkpoints (${CHECKPOINT_COLUMNS})
    VALUES ${valuesList(1, 6, 1)}
    ${UPSERT_CHECKPOINT}`;
  if (!blobs.length) return { text: upsertCheckpoint, values: [...checkpoint] };
  const text = `WITH blobs AS (
      INSERT INTO checkpoint_blobs (${BLOB_COLUMNS})
      VALUES ${valuesList(blobs.length, 6, 7)}
      ${KEEP_BLOB}
    )
    ${upsertCheckpoint}`;
  return { text, values: [...checkpoint, ...blobs.flat()] };
}

/** Key of a write row: (checkpoint_ns, checkpoint_id, task_id, idx). */
export const writeKey = (row: readonly unknown[]) =>
  `${String(row[1])}\u0000${String(row[2])}\u0000${String(row[3])}\u0000${String(row[4])}`;

/** Whether a task's writes replace earlier rows with their keys (special channels only). */
export const replacesWrites = (channels: readonly string[]) =>
  channels.every((channel) => channel in WRITES_IDX_MAP);

/**
 * A task's pending writes. Writes to the special channels (errors, interrupts, resumes) replace
 * an earlier one with the same key; ordinary writes keep the first. One statement may not touch
 * a row twice, so duplicate keys are reduced the way sequential statements would have left them.
 */
export function putWritesStatement(
  rows: readonly (readonly unknown[])[],
  channels: readonly string[],
  fence?: RunFence,
): Statement | undefined {
  const replace = replacesWrites(channels);
  const byKey = new Map<string, readonly unknown[]>();
  for (const row of rows) {
    const key = writeKey(row);
    if (replace || !byKey.has(key)) byKey.set(key, row);
  }
  const unique = [...byKey.values()];
  if (!unique.length) return undefined;
  if (fence)
    return fencedStatement(
      fence,
      collectedInserts(
        [],
        [],
        unique.map((row) => ({ row, replace })),
      ),
    );
  return {
    text: `INSERT INTO checkpoint_writes (${WRITE_COLUMNS})
      VALUES ${valuesList(unique.length, 8, 1)}
      ${replace ? REPLACE_WRITE : KEEP_WRITE}`,
    values: unique.flat(),
  };
}
