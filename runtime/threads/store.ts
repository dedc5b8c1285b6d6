// SQL for the threads table. Nothing outside this file writes it.
import {
  SqlParams,
  jsonb,
  whereClause,
  type EmbeddedStatement,
  type Pool,
  type PoolClient,
} from '../../common/db/index.js';
import type { AuthFilter, Visible } from '../auth/index.js';
import { THREAD_FIELDS, type ThreadField, type ThreadStatus } from './schemas.js';

export interface ThreadRow {
  thread_id: string;
  created_at: Date;
  updated_at: Date;
  state_updated_at: Date | null;
  metadata: Record<string, unknown>;
  config: Record<string, unknown>;
  status: ThreadStatus;
  values: unknown;
  interrupts: Record<string, unknown>;
  error: unknown;
  ttl_minutes: number | null;
  ttl_strategy: string | null;
  expires_at: Date | null;
}

export interface ThreadFilter {
  metadata?: Record<string, unknown> | null | undefined;
  values?: Record<string, unknown> | null | undefined;
  status?: ThreadStatus | null | undefined;
  ids?: string[] | null | undefined;
  /** The caller's authorization filter (see runtime/auth). */
  auth?: AuthFilter | undefined;
}

export interface Ttl {
  minutes: number;
  strategy: 'delete' | 'keep_latest';
}

type Queryable = Pool | PoolClient;

const quote = (field: string) => (field === 'values' ? '"values"' : field);

/** Every column but the state cache, which only the state read path wants. */
/** A thread to insert. */
export interface NewThread {
  thread_id: string;
  metadata: Record<string, unknown>;
  ttl: Ttl | undefined;
  status?: ThreadStatus;
}

const COLUMNS =
  'thread_id, created_at, updated_at, state_updated_at, metadata, config, status, "values", interrupts, error, ttl_minutes, ttl_strategy, expires_at';

/** The thread's latest root checkpoint id and how many pending writes it has, as `id:count`. */
const LATEST_STATE_KEY = `(SELECT c.checkpoint_id || ':' || (SELECT count(*) FROM checkpoint_writes w
     WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = '' AND w.checkpoint_id = c.checkpoint_id)
   FROM checkpoints c WHERE c.thread_id = t.thread_id::text AND c.checkpoint_ns = ''
   ORDER BY c.checkpoint_id DESC LIMIT 1)`;

/** Below this many matches, a filtered search sorts its matches instead of walking an index. */
const SPARSE_MATCHES = 1000;

export interface ThreadWithStateCache {
  row: ThreadRow;
  /** Key of the current latest checkpoint; null when the thread has none. */
  stateKey: string | null;
  cache: unknown;
  cacheKey: string | null;
}

/**
 * The metadata key owner-scoped auth filters use (`{ owner: user.identity }`, as in the official
 * examples): it has a btree index of its own, with creation order (migration 010).
 */
const OWNER = 'owner';

type Scalar = string | number | boolean | null;
const isScalar = (v: unknown): v is Scalar =>
  v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** Whether a metadata pattern asks for one owner (a scalar `owner`), which the owner index serves. */
function ownerScoped(pattern: Record<string, unknown> | null | undefined): boolean {
  return pattern != null && Object.hasOwn(pattern, OWNER) && isScalar(pattern[OWNER]);
}

/**
 * A containment pattern on `metadata`. A scalar `owner` becomes an equality on
 * `metadata -> 'owner'`, the same rows (a scalar is contained only in an equal scalar, never in
 * an array or object), so the owner index can walk that owner's threads in order; the other keys
 * stay a containment the GIN index serves.
 */
function metadataConditions(pattern: Record<string, unknown>, params: SqlParams): string[] {
  if (!ownerScoped(pattern)) return [`metadata @> ${params.add(jsonb(pattern))}::jsonb`];
  const { [OWNER]: owner, ...rest } = pattern;
  const out = [`metadata -> '${OWNER}' = ${params.add(jsonb(owner))}::jsonb`];
  if (Object.keys(rest).length) out.push(`metadata @> ${params.add(jsonb(rest))}::jsonb`);
  return out;
}

function conditions(filter: ThreadFilter, params: SqlParams): string[] {
  const out: string[] = [];
  if (filter.metadata && Object.keys(filter.metadata).length) {
    out.push(...metadataConditions(filter.metadata, params));
  }
  if (filter.values && Object.keys(filter.values).length) {
    out.push(`"values" @> ${params.add(jsonb(filter.values))}::jsonb`);
  }
  if (filter.auth) out.push(...metadataConditions(filter.auth, params));
  if (filter.status) out.push(`status = ${params.add(filter.status)}`);
  if (filter.ids?.length) out.push(`thread_id = ANY(${params.add(filter.ids)}::uuid[])`);
  return out;
}

export class ThreadStore {
  constructor(private readonly pool: Pool) {}

  /** Whether the row exists and matches an authorization filter (see runtime/auth). */
  async visibility(id: string, filter: AuthFilter): Promise<Visible> {
    const { rows } = await this.pool.query<{ visible: boolean }>(
      `SELECT metadata @> $2::jsonb AS visible FROM threads WHERE thread_id = $1`,
      [id, jsonb(filter)],
    );
    return rows[0] === undefined ? 'missing' : rows[0].visible ? 'visible' : 'hidden';
  }

  /** The ids among `ids` whose threads exist and match an authorization filter. */
  async visibleIds(ids: string[], filter: AuthFilter): Promise<string[]> {
    const { rows } = await this.pool.query<{ thread_id: string }>(
      'SELECT thread_id FROM threads WHERE thread_id = ANY($1::uuid[]) AND metadata @> $2::jsonb',
      [ids, jsonb(filter)],
    );
    return rows.map((r) => r.thread_id);
  }

  /** Inserts a thread; undefined when the id is taken. */
  async insert(thread: NewThread, db: Queryable = this.pool): Promise<ThreadRow | undefined> {
    // Named, so each connection parses and plans the hottest write once.
    const { rows } = await db.query<ThreadRow>({
      name: 'threads.insert',
      text: insertSql(1, COLUMNS),
      values: insertParams(thread.thread_id, thread.metadata, thread.ttl, thread.status ?? 'idle'),
    });
    return rows[0];
  }

  /**
   * `insert` for several threads in one statement (and one commit). Ids must be distinct.
   * Returns the rows inserted; a thread whose id was taken is absent.
   */
  async insertMany(threads: NewThread[]): Promise<ThreadRow[]> {
    const { rows } = await this.pool.query<ThreadRow>({
      name: 'threads.insert-many',
      text: `INSERT INTO threads (thread_id, metadata, "values", ttl_minutes, ttl_strategy, expires_at, status)
        SELECT t.id, t.metadata, '{}'::jsonb, t.minutes, t.strategy,
          ${expiresAt('t.minutes')},
          t.status
        FROM unnest($1::uuid[], $2::jsonb[], $3::float8[], $4::text[], $5::text[])
          AS t(id, metadata, minutes, strategy, status)
        ON CONFLICT (thread_id) DO NOTHING RETURNING ${COLUMNS}`,
      values: [
        threads.map((t) => t.thread_id),
        threads.map((t) => jsonb(t.metadata)),
        threads.map((t) => t.ttl?.minutes ?? null),
        threads.map((t) => t.ttl?.strategy ?? null),
        threads.map((t) => t.status ?? 'idle'),
      ],
    });
    return rows;
  }

  async get(threadId: string, db: Queryable = this.pool): Promise<ThreadRow | undefined> {
    const { rows } = await db.query<ThreadRow>({
      name: 'threads.get',
      text: `SELECT ${COLUMNS} FROM threads WHERE thread_id = $1`,
      values: [threadId],
    });
    return rows[0];
  }

  /** A thread's interrupts alone (undefined when it does not exist): no values are read. */
  async interrupts(threadId: string): Promise<Record<string, unknown> | undefined> {
    const { rows } = await this.pool.query<{ interrupts: Record<string, unknown> }>({
      name: 'threads.interrupts',
      text: 'SELECT interrupts FROM threads WHERE thread_id = $1',
      values: [threadId],
    });
    return rows[0]?.interrupts;
  }

  /** `get` of a thread only if it matches an authorization filter: undefined as if missing. */
  async getVisible(threadId: string, visibleTo: AuthFilter): Promise<ThreadRow | undefined> {
    const { rows } = await this.pool.query<ThreadRow>({
      name: 'threads.get-visible',
      text: `SELECT ${COLUMNS} FROM threads WHERE thread_id = $1 AND metadata @> $2::jsonb`,
      values: [threadId, jsonb(visibleTo)],
    });
    return rows[0];
  }

  /** Rows of the given threads, in no particular order; unknown ids are simply absent. */
  async getMany(threadIds: readonly string[]): Promise<ThreadRow[]> {
    const { rows } = await this.pool.query<ThreadRow>({
      name: 'threads.get-many',
      text: `SELECT ${COLUMNS} FROM threads WHERE thread_id = ANY($1::uuid[])`,
      values: [threadIds],
    });
    return rows;
  }

  /** With `visibleTo` (an authorization filter), a thread that does not match reads as missing. */
  async getWithStateCache(
    threadId: string,
    visibleTo?: AuthFilter,
  ): Promise<ThreadWithStateCache | undefined> {
    const { rows } = await this.pool.query<
      ThreadRow & { state_key: string | null; state_cache: unknown; state_cache_key: string | null }
    >({
      name: visibleTo ? 'threads.get-visible-with-state-cache' : 'threads.get-with-state-cache',
      text: `SELECT ${COLUMNS}, state_cache, state_cache_key, ${LATEST_STATE_KEY} AS state_key
             FROM threads t WHERE thread_id = $1${visibleTo ? ' AND metadata @> $2::jsonb' : ''}`,
      values: visibleTo ? [threadId, jsonb(visibleTo)] : [threadId],
    });
    const found = rows[0];
    if (!found) return undefined;
    const { state_key, state_cache, state_cache_key, ...row } = found;
    return { row, stateKey: state_key, cache: state_cache, cacheKey: state_cache_key };
  }

  async latestStateKey(threadId: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ key: string | null }>(
      `SELECT ${LATEST_STATE_KEY} AS key FROM threads t WHERE thread_id = $1`,
      [threadId],
    );
    return rows[0]?.key ?? null;
  }

  /** The config the thread's newest run was created with (its assistant's merged in), if any. */
  async latestRunConfig(threadId: string): Promise<Record<string, unknown> | undefined> {
    const { rows } = await this.pool.query<{ config: Record<string, unknown> | null }>(
      `SELECT kwargs -> 'config' AS config FROM runs WHERE thread_id = $1
       ORDER BY created_at DESC, run_id DESC LIMIT 1`,
      [threadId],
    );
    return rows[0]?.config ?? undefined;
  }

  async saveStateCache(threadId: string, key: string, state: unknown): Promise<void> {
    await this.pool.query(
      'UPDATE threads SET state_cache = $2, state_cache_key = $3 WHERE thread_id = $1',
      [threadId, jsonb(state), key],
    );
  }

  async clearStateCache(threadIds: string[], db: Queryable = this.pool): Promise<void> {
    if (!threadIds.length) return;
    await db.query(
      'UPDATE threads SET state_cache = NULL, state_cache_key = NULL WHERE thread_id = ANY($1::uuid[])',
      [threadIds],
    );
  }

  async patch(
    threadId: string,
    patch: { metadata?: Record<string, unknown> | undefined; ttl?: Ttl | undefined },
  ): Promise<ThreadRow | undefined> {
    const params = new SqlParams();
    const id = params.add(threadId);
    const sets = ['updated_at = now()'];
    if (patch.metadata)
      sets.push(`metadata = metadata || ${params.add(jsonb(patch.metadata))}::jsonb`);
    if (patch.ttl) {
      const minutes = params.add(patch.ttl.minutes);
      sets.push(
        `ttl_minutes = ${minutes}::float8`,
        `ttl_strategy = ${params.add(patch.ttl.strategy)}`,
      );
      sets.push(`expires_at = now() + make_interval(secs => ${minutes}::float8 * 60)`);
    }
    const { rows } = await this.pool.query<ThreadRow>(
      `UPDATE threads SET ${sets.join(', ')} WHERE thread_id = ${id} RETURNING ${COLUMNS}`,
      params.values,
    );
    return rows[0];
  }

  /** Records the latest checkpoint's values (and, when given, its cached full state). */
  async setState(
    threadId: string,
    state: ThreadStateColumns,
    db: Queryable = this.pool,
  ): Promise<void> {
    await db.query(
      `UPDATE threads SET "values" = $2, interrupts = $3, state_cache = $4, state_cache_key = $5,
         state_updated_at = now(), updated_at = now()
       WHERE thread_id = $1`,
      [threadId, ...stateParams(state)],
    );
  }

  /**
   * A run is being created on the thread: it becomes busy and records which graph and assistant
   * run on it. The row stays locked until the creating transaction ends, so runs on one thread
   * are created one at a time. False when the thread does not exist.
   */
  async lockBusy(
    threadId: string,
    metadata: Record<string, unknown>,
    db: PoolClient,
    visibleTo?: AuthFilter,
  ): Promise<boolean> {
    const lock = this.lockBusyStatement(threadId, metadata, undefined, visibleTo);
    const { rowCount } = await db.query(lock.sql(1), lock.values);
    return (rowCount ?? 0) > 0;
  }

  /**
   * `lockBusy` and `insert` (busy) as statements another store runs inside its own, with
   * parameters numbered from `$first`; each returns the thread's id when it took effect.
   * With `visibleTo` (an authorization filter), a thread that does not match is left alone, as
   * if missing: the check costs no statement of its own. With `uninterrupted`, so is a thread
   * that has any interrupts recorded: checked under the row's lock, where a read before the
   * statement could be outdated by the time the run is inserted.
   */
  lockBusyStatement(
    threadId: string,
    metadata: Record<string, unknown>,
    onlyIf?: EmbeddedStatement,
    visibleTo?: AuthFilter,
    uninterrupted = false,
  ): EmbeddedStatement {
    const own = [threadId, jsonb(metadata), ...(visibleTo ? [jsonb(visibleTo)] : [])];
    return {
      sql: (first) => {
        const lock = busyLock(
          `$${first + 1}`,
          visibleTo && `$${first + 2}`,
          uninterrupted,
          onlyIf?.sql(first + own.length),
        );
        return `UPDATE threads SET ${lock.set}
          WHERE thread_id = $${first}${lock.where ? ` AND ${lock.where}` : ''} RETURNING thread_id`;
      },
      values: [...own, ...(onlyIf?.values ?? [])],
    };
  }

  /**
   * `insertBusyStatement` that, when the thread exists, does what `lockBusyStatement` does
   * instead (`lockMetadata` merged into its metadata, `visibleTo` and `uninterrupted` checked
   * under the row's lock): a run on a thread that may or may not exist yet costs one statement
   * either way. Returns the thread's id and `created` (whether this statement inserted it).
   */
  upsertBusyStatement(
    threadId: string,
    metadata: Record<string, unknown>,
    ttl: Ttl | undefined,
    lockMetadata: Record<string, unknown>,
    onlyIf?: EmbeddedStatement,
    visibleTo?: AuthFilter,
    uninterrupted = false,
  ): EmbeddedStatement & { reportsCreated: true } {
    const params = insertParams(threadId, metadata, ttl, 'busy');
    const own = [...params, jsonb(lockMetadata), ...(visibleTo ? [jsonb(visibleTo)] : [])];
    return {
      sql: (first) => {
        // One condition guards both the insert and the update, on the same parameters.
        const condition = onlyIf?.sql(first + own.length);
        const lock = busyLock(
          `$${first + params.length}`,
          visibleTo && `$${first + params.length + 1}`,
          uninterrupted,
          condition,
        );
        return insertSql(
          first,
          'thread_id, xmax = 0 AS created',
          condition === undefined ? undefined : () => condition,
          `DO UPDATE SET ${lock.set}${lock.where ? ` WHERE ${lock.where}` : ''}`,
        );
      },
      values: [...own, ...(onlyIf?.values ?? [])],
      reportsCreated: true,
    };
  }

  /** With `onlyIf` (a condition from another store), nothing is inserted when it is false. */
  insertBusyStatement(
    threadId: string,
    metadata: Record<string, unknown>,
    ttl: Ttl | undefined,
    onlyIf?: EmbeddedStatement,
  ): EmbeddedStatement {
    const params = insertParams(threadId, metadata, ttl, 'busy');
    return {
      sql: (first) =>
        insertSql(first, 'thread_id', onlyIf && ((at) => onlyIf.sql(at + params.length))),
      values: [...params, ...(onlyIf?.values ?? [])],
    };
  }

  /**
   * `settle` with `state`, as a statement for the runs store to embed in the statement that
   * finishes run `runId`. That run still reads as running inside the statement, so it is left out
   * of the runs the thread waits on.
   */
  settleStatement(
    threadId: string,
    runId: string,
    settled: ThreadStatus,
    state: ThreadStateColumns,
  ): EmbeddedStatement {
    return {
      sql: (first, onlyIf) => settleSql(first, true, onlyIf),
      values: [threadId, settled, null, runId, ...stateParams(state)],
    };
  }

  /**
   * The status a thread settles on after a run: busy while more runs wait, else `settled`. With
   * `state`, the latest checkpoint's values are written by the same statement (and the cached
   * full state dropped unless `state` brings one). Says whether runs are pending on the thread.
   */
  async settle(
    threadId: string,
    settled: ThreadStatus,
    error: unknown,
    db: Queryable = this.pool,
    state?: ThreadStateColumns,
  ): Promise<{ runsPending: boolean }> {
    const { rows } = await db.query<{ runs_pending: boolean }>(settleSql(1, state !== undefined), [
      threadId,
      settled,
      error === undefined || error === null ? null : jsonb(error),
      null,
      ...(state ? stateParams(state) : []),
    ]);
    return { runsPending: rows[0]?.runs_pending ?? false };
  }

  /**
   * Deletes threads (their runs go with them, by cascade). Their runs' rows are locked first, in
   * the order every run's own writes take them (run, then thread): deleting the thread first
   * deadlocked with an executing run that was settling it.
   */
  async deleteMany(threadIds: string[], db: Queryable = this.pool): Promise<string[]> {
    const { rows } = await db.query<{ thread_id: string }>(
      `WITH runs_first AS (
         SELECT count(*) AS n FROM (SELECT 1 FROM runs WHERE thread_id = ANY($1::uuid[])
           ORDER BY run_id FOR UPDATE) AS locked)
       DELETE FROM threads WHERE thread_id = ANY($1::uuid[]) AND (SELECT n FROM runs_first) >= 0
       RETURNING thread_id`,
      [threadIds],
    );
    return rows.map((r) => r.thread_id);
  }

  /** `deleteMany` of one thread as a statement for another store to embed. */
  deleteStatement(threadId: string): EmbeddedStatement {
    return {
      sql: (first, onlyIf) =>
        `DELETE FROM threads WHERE thread_id = $${first}${onlyIf ? ` AND ${onlyIf}` : ''}`,
      values: [threadId],
    };
  }

  async idsByMetadata(
    metadata: Record<string, unknown>,
    db: Queryable = this.pool,
  ): Promise<string[]> {
    const { rows } = await db.query<{ thread_id: string }>(
      'SELECT thread_id FROM threads WHERE metadata @> $1::jsonb',
      [jsonb(metadata)],
    );
    return rows.map((r) => r.thread_id);
  }

  /** A copy with a new id; status starts idle, everything else as in the source. */
  async copy(fromId: string, toId: string, db: PoolClient): Promise<ThreadRow | undefined> {
    const { rows } = await db.query<ThreadRow>(
      `INSERT INTO threads (thread_id, metadata, config, status, "values", interrupts, state_updated_at)
       SELECT $2::uuid,
              CASE WHEN metadata ? 'thread_id' THEN jsonb_set(metadata, '{thread_id}', to_jsonb($2::text)) ELSE metadata END,
              config, 'idle', "values", interrupts, state_updated_at
       FROM threads WHERE thread_id = $1
       RETURNING ${COLUMNS}`,
      [fromId, toId],
    );
    return rows[0];
  }

  async search(
    filter: ThreadFilter & {
      limit: number;
      offset: number;
      sortBy: string;
      sortOrder: 'asc' | 'desc';
      select?: readonly ThreadField[] | null | undefined;
    },
  ): Promise<{ rows: Partial<ThreadRow>[]; hasMore: boolean }> {
    const params = new SqlParams();
    const chosen = filter.select?.length ? filter.select : THREAD_FIELDS;
    const where = whereClause(conditions(filter, params));
    // One extra row tells whether another page exists without counting every match.
    const page = `LIMIT ${params.add(filter.limit + 1)} OFFSET ${params.add(filter.offset)}`;
    const shape = { columns: chosen.map(quote).join(', '), key: quote(filter.sortBy), where, page };
    const { rows } = await this.pool.query<Partial<ThreadRow>>(
      containment(filter) && !ownerScoped(filter.auth) && !ownerScoped(filter.metadata)
        ? sparseAwareSearch(shape, filter.sortOrder)
        : `SELECT ${shape.columns} FROM threads ${where}
           ORDER BY ${shape.key} ${filter.sortOrder}, thread_id ${filter.sortOrder} ${page}`,
      params.values,
    );
    return { rows: rows.slice(0, filter.limit), hasMore: rows.length > filter.limit };
  }

  async count(filter: ThreadFilter): Promise<number> {
    const params = new SqlParams();
    const { rows } = await this.pool.query<{ count: number }>(
      `SELECT count(*) AS count FROM threads ${whereClause(conditions(filter, params))}`,
      params.values,
    );
    return rows[0]?.count ?? 0;
  }

  /**
   * Threads whose TTL has passed, oldest first, claimed so two replicas never sweep the same one.
   * A thread with a run pending or running waits for a later sweep: deleting or pruning it would
   * pull the state from under that run (and lock its runs after the thread, the reverse of the
   * order the run's own writes take, see `deleteMany`).
   */
  async claimExpired(
    limit: number,
    db: PoolClient,
  ): Promise<{ thread_id: string; ttl_strategy: string | null }[]> {
    const { rows } = await db.query<{ thread_id: string; ttl_strategy: string | null }>(
      `SELECT thread_id, ttl_strategy FROM threads t WHERE expires_at <= now()
         AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.thread_id = t.thread_id
                           AND r.status IN ('pending', 'running'))
       ORDER BY expires_at LIMIT $1 FOR UPDATE OF t SKIP LOCKED`,
      [limit],
    );
    return rows;
  }

  async clearExpiry(threadIds: string[], db: PoolClient): Promise<void> {
    await db.query('UPDATE threads SET expires_at = NULL WHERE thread_id = ANY($1::uuid[])', [
      threadIds,
    ]);
  }
}

/** Whether a search filters by JSON containment (metadata, values or the caller's auth filter). */
function containment(filter: ThreadFilter): boolean {
  return (
    Object.keys(filter.metadata ?? {}).length > 0 ||
    Object.keys(filter.values ?? {}).length > 0 ||
    filter.auth !== undefined
  );
}

/**
 * A containment search, in one statement. A rare value among many threads is best served by
 * collecting its matches through the GIN index and sorting them; left alone, the planner (whose
 * statistics may predate the last bulk of inserts) can walk the sort index hoping to meet
 * matches early, which for a rare value reads every row. So `probe` collects up to
 * SPARSE_MATCHES matches (id and sort key): below that it holds them all, and the page is cut
 * from it and read by primary key; at that many, the second branch walks the sort index. Each
 * branch is gated by a one-time condition on the probe: only one of them reads threads.
 * A search for one owner's threads does not need it: the owner index holds only that owner's
 * rows, in creation order, so a plain statement walks it (see `metadataConditions`).
 */
function sparseAwareSearch(
  shape: { columns: string; key: string; where: string; page: string },
  dir: 'asc' | 'desc',
): string {
  const { columns, key, where, page } = shape;
  const sparse = `(SELECT count(*) FROM probe) < ${SPARSE_MATCHES}`;
  const output = `${columns}, ${key} AS sort_key_, thread_id AS sort_id_`;
  return `WITH probe AS (SELECT thread_id, ${key} AS k FROM threads ${where} LIMIT ${SPARSE_MATCHES}),
      chosen AS (SELECT thread_id FROM probe ORDER BY k ${dir}, thread_id ${dir} ${page})
    SELECT ${columns} FROM (
      (SELECT ${output} FROM threads
        WHERE ${sparse} AND thread_id = ANY(ARRAY(SELECT thread_id FROM chosen)))
      UNION ALL
      (SELECT ${output} FROM threads ${where} AND NOT ${sparse}
        ORDER BY ${key} ${dir}, thread_id ${dir} ${page})
    ) AS found ORDER BY sort_key_ ${dir}, sort_id_ ${dir}`;
}

/** What a thread row keeps of its latest checkpoint. */
export interface ThreadStateColumns {
  values: unknown;
  interrupts: Record<string, unknown>;
  cache?: { key: string; body: unknown } | undefined;
}

/** `expires_at` of a new thread whose TTL is `minutes` (an SQL expression, null for none). */
function expiresAt(minutes: string): string {
  return `CASE WHEN ${minutes}::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => ${minutes}::float8 * 60) END`;
}

/**
 * Inserts a thread unless its id is taken; parameters from `$first` as `insertParams` gives them.
 * `condition(first)`: a condition on the row, with parameters after the five of `insertParams`.
 */
/**
 * Marking an existing thread busy for a run (`lockBusyStatement`, and the upsert's update): the
 * run's metadata (parameter `metadata`) merged into the thread's, under the conditions that the
 * thread matches the caller's auth filter (`visible`), has no interrupts recorded
 * (`uninterrupted`) and that `onlyIf` holds.
 */
function busyLock(
  metadata: string,
  visible: string | undefined,
  uninterrupted: boolean,
  onlyIf: string | undefined,
): { set: string; where: string } {
  return {
    set: `status = 'busy', metadata = threads.metadata || ${metadata}::jsonb, updated_at = now()`,
    where: [
      visible && `threads.metadata @> ${visible}::jsonb`,
      uninterrupted && `threads.interrupts = '{}'::jsonb`,
      onlyIf,
    ]
      .filter(Boolean)
      .join(' AND '),
  };
}

function insertSql(
  first: number,
  returning: string,
  condition?: (first: number) => string,
  onConflict = 'DO NOTHING',
): string {
  const [id, metadata, minutes, strategy, status] = [0, 1, 2, 3, 4].map((i) => `$${first + i}`);
  const expires = expiresAt(`${minutes}`);
  // A SELECT's parameters are not typed by the columns they go to, as VALUES' are.
  const rows = condition
    ? `SELECT ${id}::uuid, ${metadata}::jsonb, '{}'::jsonb, ${minutes}::float8, ${strategy}::text,
        ${expires}, ${status}::text WHERE ${condition(first)}`
    : `VALUES (${id}, ${metadata}, '{}'::jsonb, ${minutes}, ${strategy}, ${expires}, ${status})`;
  return `INSERT INTO threads (thread_id, metadata, "values", ttl_minutes, ttl_strategy, expires_at, status)
    ${rows}
    ON CONFLICT (thread_id) ${onConflict} RETURNING ${returning}`;
}

function insertParams(
  threadId: string,
  metadata: Record<string, unknown>,
  ttl: Ttl | undefined,
  status: ThreadStatus,
): unknown[] {
  return [threadId, jsonb(metadata), ttl?.minutes ?? null, ttl?.strategy ?? null, status];
}

/**
 * Settles a thread after a run. Parameters from `$first`: thread id, status, error, a run to
 * leave out of the runs the thread waits on (or null), then with `withState` the four of
 * `stateParams`.
 */
/** With `onlyIf` (a condition of the embedding statement), the thread is left as it is unless it holds. */
function settleSql(first: number, withState: boolean, onlyIf?: string): string {
  const [thread, status, error, run] = [0, 1, 2, 3].map((i) => `$${first + i}`);
  const [values, interrupts, cache, cacheKey] = [4, 5, 6, 7].map((i) => `$${first + i}`);
  const setState = withState
    ? `"values" = ${values}, interrupts = ${interrupts}, state_cache = ${cache},
       state_cache_key = ${cacheKey}, state_updated_at = now(),`
    : '';
  return `UPDATE threads SET ${setState}
      status = CASE WHEN ${status} <> 'error' AND EXISTS (SELECT 1 FROM runs WHERE thread_id = ${thread}
                      AND status IN ('pending', 'running') AND run_id IS DISTINCT FROM ${run})
               THEN 'busy' ELSE ${status} END,
      error = ${error}, updated_at = now()
    WHERE thread_id = ${thread}${onlyIf ? ` AND ${onlyIf}` : ''}
    RETURNING EXISTS (SELECT 1 FROM runs WHERE thread_id = ${thread} AND status = 'pending') AS runs_pending`;
}

function stateParams(state: ThreadStateColumns): unknown[] {
  return [
    jsonb(state.values ?? null),
    jsonb(state.interrupts),
    state.cache ? jsonb(state.cache.body) : null,
    state.cache?.key ?? null,
  ];
}
