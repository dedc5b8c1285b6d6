// SQL of the trace store: sessions, day-partitioned runs, pending updates, feedback (and its
// presigned tokens) and retention.
import {
  copyToFile,
  inlineParams,
  jsonb,
  SqlParams,
  whereClause,
  type CopyResult,
  type Pool,
} from '../common/db/index.js';
import {
  EXPORT_CSV,
  type ExportedRun,
  type FeedbackRecord,
  type FeedbackToken,
  type StoredFeedback,
  type RunRecord,
  type RunPatch,
  type SessionRow,
  type StoredRun,
} from './model.js';

/** The run columns written from an ingested record, with their types for json_to_recordset. */
const RECORD_COLUMNS = [
  ['id', 'uuid'],
  ['session_id', 'uuid'],
  ['trace_id', 'uuid'],
  ['parent_run_id', 'uuid'],
  ['parent_run_ids', 'uuid[]'],
  ['is_root', 'boolean'],
  ['dotted_order', 'text'],
  ['name', 'text'],
  ['run_type', 'text'],
  ['start_time', 'timestamptz'],
  ['end_time', 'timestamptz'],
  ['status', 'text'],
  ['inputs', 'json'],
  ['outputs', 'json'],
  ['error', 'text'],
  ['extra', 'json'],
  ['events', 'json'],
  ['tags', 'text[]'],
  ['serialized', 'json'],
  ['reference_example_id', 'uuid'],
  ['trace_tier', 'text'],
  ['prompt_tokens', 'bigint'],
  ['completion_tokens', 'bigint'],
  ['total_tokens', 'bigint'],
  ['prompt_cost', 'numeric'],
  ['completion_cost', 'numeric'],
  ['total_cost', 'numeric'],
  ['first_token_time', 'timestamptz'],
  ['thread_id', 'text'],
] as const;

/** Fields an update may change (never identity, placement or start). */
const PATCH_COLUMNS = [
  ['end_time', 'timestamptz'],
  ['inputs', 'json'],
  ['outputs', 'json'],
  ['error', 'text'],
  ['extra', 'json'],
  ['events', 'json'],
  ['tags', 'text[]'],
  ['reference_example_id', 'uuid'],
  ['prompt_tokens', 'bigint'],
  ['completion_tokens', 'bigint'],
  ['total_tokens', 'bigint'],
  ['prompt_cost', 'numeric'],
  ['completion_cost', 'numeric'],
  ['total_cost', 'numeric'],
  ['first_token_time', 'timestamptz'],
  ['thread_id', 'text'],
] as const;

const recordType = (cols: readonly (readonly [string, string])[]) =>
  cols.map(([c, t]) => `${c} ${t}`).join(', ');
const names = RECORD_COLUMNS.map(([c]) => c).join(', ');

/** Status follows error and end time, whichever of the stored and new values is known. */
const STATUS_AFTER = (next: string, prev: string) =>
  `CASE WHEN coalesce(${next}.error, ${prev}.error) IS NOT NULL THEN 'error'
        WHEN coalesce(${next}.end_time, ${prev}.end_time) IS NOT NULL THEN 'success'
        ELSE ${prev}.status END`;

const insertRuns = (records: string) => `INSERT INTO trace_runs (tenant_id, ${names})
  SELECT $1, ${names} FROM json_to_recordset(${records}::json) AS r(${recordType(RECORD_COLUMNS)})
  ON CONFLICT (tenant_id, start_time, id) DO UPDATE SET
  ${PATCH_COLUMNS.map(([c]) => `${c} = coalesce(EXCLUDED.${c}, trace_runs.${c})`).join(',\n  ')},
  status = ${STATUS_AFTER('EXCLUDED', 'trace_runs')}
  RETURNING id`;

/** `ids` (the patches' ids) lets the planner probe the id index instead of scanning runs. */
const updateRuns = (patches: string, ids: string) => `UPDATE trace_runs r SET
  ${PATCH_COLUMNS.map(([c]) => `${c} = coalesce(p.${c}, r.${c})`).join(',\n  ')},
  status = ${STATUS_AFTER('p', 'r')}
  FROM json_to_recordset(${patches}::json) AS p(${recordType([['id', 'uuid'], ...PATCH_COLUMNS])})
  WHERE r.tenant_id = $1 AND r.id = ANY(${ids}::uuid[]) AND r.id = p.id
  RETURNING r.id`;

const UPDATE_RUNS = updateRuns('$2', '$3');

/**
 * One SDK batch in one statement (one round trip, one transaction): the creates, the updates of
 * runs stored earlier, and the taking of updates that arrived before these creates.
 */
const INGEST_BATCH = `WITH
  created AS (${insertRuns('$2')}),
  updated AS (${updateRuns('$3', '$4')}),
  taken AS (
    DELETE FROM trace_pending_updates
     WHERE tenant_id = $1 AND id IN (SELECT id FROM created) RETURNING seq, patch)
  SELECT NULL AS updated, seq, patch FROM taken
  UNION ALL SELECT id::text, NULL, NULL FROM updated`;

/** Times as they go to the wire: ISO 8601 in UTC with microseconds. */
const iso = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * A run's feedback_stats as jsonb, null when it has none: a correlated subquery on the feedback
 * index, so a run without feedback costs one index probe. `values` counts string values.
 */
const FEEDBACK_STATS = `(SELECT jsonb_object_agg(k.key,
         jsonb_build_object('n', k.n, 'avg', k.avg, 'values', k.vals))
    FROM (SELECT v.key, sum(v.n)::int AS n,
                 sum(v.total) / nullif(sum(v.scored), 0)::float8 AS avg,
                 coalesce(jsonb_object_agg(v.val, v.n) FILTER (WHERE v.val IS NOT NULL), '{}') AS vals
            FROM (SELECT f.key,
                         CASE WHEN jsonb_typeof(f.value) = 'string' THEN f.value #>> '{}' END AS val,
                         count(*) AS n, sum(f.score) AS total, count(f.score) AS scored
                    FROM trace_feedback f WHERE f.tenant_id = r.tenant_id AND f.run_id = r.id
                   GROUP BY 1, 2) v
           GROUP BY v.key) k)`;

export const RUN_SELECT = `r.tenant_id::text, r.id::text, r.session_id::text, r.trace_id::text,
  r.parent_run_id::text, r.parent_run_ids::text[] AS parent_run_ids, r.is_root, r.dotted_order,
  r.name, r.run_type, ${iso('r.start_time')} AS start_time, ${iso('r.end_time')} AS end_time,
  r.status, r.inputs, r.outputs, r.error, r.extra, r.events, r.tags, r.serialized,
  r.reference_example_id::text, r.trace_tier, r.prompt_tokens, r.completion_tokens,
  r.total_tokens, r.prompt_cost::float8, r.completion_cost::float8, r.total_cost::float8,
  ${iso('r.first_token_time')} AS first_token_time, r.thread_id, ${FEEDBACK_STATS} AS feedback_stats`;

const FEEDBACK_COLUMNS = [
  ['id', 'uuid'],
  ['run_id', 'uuid'],
  ['trace_id', 'uuid'],
  ['session_id', 'uuid'],
  ['key', 'text'],
  ['score', 'float8'],
  ['value', 'jsonb'],
  ['comment', 'text'],
  ['correction', 'jsonb'],
  ['feedback_source', 'jsonb'],
  ['created_at', 'timestamptz'],
] as const;

const FEEDBACK_SELECT = `id::text, run_id::text, trace_id::text, session_id::text, key, score,
  value, comment, correction, feedback_source, ${iso('created_at')} AS created_at,
  ${iso('modified_at')} AS modified_at`;

/**
 * Stores feedback, a repeated id (an SDK's retry) updating its row. A feedback that names no
 * trace or project takes its run's when the run is stored already.
 */
const UPSERT_FEEDBACK = `INSERT INTO trace_feedback (tenant_id, id, run_id, trace_id,
    session_id, key, score, value, comment, correction, feedback_source, created_at)
  SELECT $1, f.id, f.run_id, coalesce(f.trace_id, r.trace_id), coalesce(f.session_id, r.session_id),
         f.key, f.score, f.value, f.comment, f.correction, f.feedback_source,
         coalesce(f.created_at, now())
    FROM jsonb_to_recordset($2::jsonb) AS f(${recordType(FEEDBACK_COLUMNS)})
    LEFT JOIN LATERAL (SELECT x.trace_id, x.session_id FROM trace_runs x
                        WHERE x.tenant_id = $1 AND x.id = f.run_id LIMIT 1) r ON true
  ON CONFLICT (tenant_id, id) DO UPDATE SET
  ${['run_id', 'trace_id', 'session_id', 'key', 'score', 'value', 'comment', 'correction', 'feedback_source'].map((c) => `${c} = EXCLUDED.${c}`).join(', ')},
  modified_at = now()
  RETURNING ${FEEDBACK_SELECT}`;

const SESSION_SELECT = `id::text, tenant_id::text, name, description, extra,
  reference_dataset_id::text, ${iso('start_time')} AS start_time, ${iso('end_time')} AS end_time`;

const PARTITION_EXISTS = new Set(['42P07', '42P17', '23505']);

export interface RunQuery {
  sessions?: string[];
  ids?: string[];
  trace?: string;
  parentRun?: string;
  runType?: string;
  isRoot?: boolean;
  error?: boolean;
  startTime?: string;
  endTime?: string;
  threadId?: string;
  /** Extra SQL conditions (from the filter language), with their parameters already added. */
  conditions?: string[];
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export class TraceStore {
  /** Day partitions known to exist (`YYYY-MM-DD`). */
  private readonly partitions = new Set<string>();

  constructor(private readonly pool: Pool) {}

  /** Creates the day partitions `days` need, once per process and day. */
  async ensurePartitions(days: Iterable<string>): Promise<void> {
    for (const day of days) {
      if (this.partitions.has(day)) continue;
      const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      const name = `trace_runs_p${day.replaceAll('-', '')}`;
      try {
        await this.pool.query(
          `CREATE TABLE IF NOT EXISTS ${name} PARTITION OF trace_runs
             FOR VALUES FROM ('${day} 00:00:00+00') TO ('${next} 00:00:00+00')`,
        );
      } catch (err) {
        // Another replica created it at the same moment.
        if (!PARTITION_EXISTS.has((err as { code?: string }).code ?? '')) throw err;
      }
      this.partitions.add(day);
    }
  }

  /**
   * Stores creates and applies updates to runs stored earlier, atomically. Returns the ids the
   * updates found and the updates that had been waiting for these creates (oldest first).
   */
  async ingestBatch(
    tenantId: string,
    runs: RunRecord[],
    patches: RunPatch[],
  ): Promise<{ updated: Set<string>; early: RunPatch[] }> {
    const { rows } = await this.pool.query<{
      updated: string | null;
      seq: string | null;
      patch: RunPatch | null;
    }>(INGEST_BATCH, [tenantId, jsonb(runs), jsonb(patches), patches.map((p) => p.id)]);
    const updated = new Set<string>();
    const early: { seq: bigint; patch: RunPatch }[] = [];
    for (const row of rows)
      if (row.updated !== null) updated.add(row.updated);
      else early.push({ seq: BigInt(row.seq!), patch: row.patch! });
    early.sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
    return { updated, early: early.map((e) => e.patch) };
  }

  /** Applies updates to stored runs; returns the ids it found. */
  async updateRuns(tenantId: string, patches: RunPatch[]): Promise<Set<string>> {
    if (!patches.length) return new Set();
    const { rows } = await this.pool.query<{ id: string }>(UPDATE_RUNS, [
      tenantId,
      jsonb(patches),
      patches.map((p) => p.id),
    ]);
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Pending updates whose run is stored by now: an update that raced its create (each saw
   * nothing of the other before committing). At most `limit` (tenant, id) pairs.
   */
  async pendingWithRuns(limit: number): Promise<{ tenant_id: string; id: string }[]> {
    const { rows } = await this.pool.query<{ tenant_id: string; id: string }>(
      `SELECT DISTINCT p.tenant_id::text, p.id::text FROM trace_pending_updates p
        WHERE EXISTS (SELECT 1 FROM trace_runs r WHERE r.tenant_id = p.tenant_id AND r.id = p.id)
        LIMIT $1`,
      [limit],
    );
    return rows;
  }

  async addPendingUpdates(tenantId: string, patches: RunPatch[]): Promise<void> {
    if (!patches.length) return;
    await this.pool.query(
      `INSERT INTO trace_pending_updates (tenant_id, id, patch)
         SELECT $1, p.id, p.patch FROM jsonb_to_recordset($2::jsonb) AS p(id uuid, patch jsonb)`,
      [tenantId, jsonb(patches.map((patch) => ({ id: patch.id, patch })))],
    );
  }

  /** Takes (deletes and returns, oldest first) the pending updates of `ids`. */
  async takePendingUpdates(tenantId: string, ids: string[]): Promise<RunPatch[]> {
    if (!ids.length) return [];
    const { rows } = await this.pool.query<{ patch: RunPatch }>(
      `WITH taken AS (
         DELETE FROM trace_pending_updates
          WHERE tenant_id = $1 AND id = ANY($2::uuid[]) RETURNING seq, patch)
       SELECT patch FROM taken ORDER BY seq`,
      [tenantId, ids],
    );
    return rows.map((r) => r.patch);
  }

  /** Dotted orders of stored runs, for children that did not send theirs. */
  async dottedOrders(tenantId: string, ids: string[]): Promise<Map<string, string>> {
    if (!ids.length) return new Map();
    const { rows } = await this.pool.query<{ id: string; dotted_order: string }>(
      'SELECT id::text, dotted_order FROM trace_runs WHERE tenant_id = $1 AND id = ANY($2::uuid[])',
      [tenantId, ids],
    );
    return new Map(rows.map((r) => [r.id, r.dotted_order]));
  }

  async sessionsByName(tenantId: string, names: string[]): Promise<SessionRow[]> {
    const { rows } = await this.pool.query<SessionRow>(
      `SELECT ${SESSION_SELECT} FROM trace_sessions WHERE tenant_id = $1 AND name = ANY($2::text[])`,
      [tenantId, names],
    );
    return rows;
  }

  /** Creates the sessions that do not exist yet (concurrent creators agree on one row). */
  async upsertSessions(tenantId: string, sessions: { id: string; name: string }[]): Promise<void> {
    if (!sessions.length) return;
    await this.pool.query(
      `INSERT INTO trace_sessions (id, tenant_id, name)
         SELECT s.id, $1, s.name FROM jsonb_to_recordset($2::jsonb) AS s(id uuid, name text)
       ON CONFLICT DO NOTHING`,
      [tenantId, jsonb(sessions)],
    );
  }

  async createSession(
    tenantId: string,
    session: { id: string; name: string; description: string | null; extra: unknown },
    upsert: boolean,
  ): Promise<SessionRow | undefined> {
    const { rows } = await this.pool.query<SessionRow>(
      `INSERT INTO trace_sessions (id, tenant_id, name, description, extra)
         VALUES ($1, $2, $3, $4, $5::jsonb)
       ON CONFLICT (tenant_id, name) DO ${
         upsert
           ? 'UPDATE SET description = coalesce(EXCLUDED.description, trace_sessions.description), extra = coalesce(EXCLUDED.extra, trace_sessions.extra)'
           : 'NOTHING'
       }
       RETURNING ${SESSION_SELECT}`,
      [session.id, tenantId, session.name, session.description, jsonb(session.extra ?? null)],
    );
    return rows[0];
  }

  async session(tenantId: string, id: string): Promise<SessionRow | undefined> {
    const { rows } = await this.pool.query<SessionRow>(
      `SELECT ${SESSION_SELECT} FROM trace_sessions WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id],
    );
    return rows[0];
  }

  async sessionIds(tenantId: string, ids: string[]): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ id: string }>(
      'SELECT id::text FROM trace_sessions WHERE tenant_id = $1 AND id = ANY($2::uuid[])',
      [tenantId, ids],
    );
    return new Set(rows.map((r) => r.id));
  }

  async listSessions(
    tenantId: string,
    filter: { name?: string; nameContains?: string; ids?: string[] },
    limit: number,
    offset: number,
  ): Promise<SessionRow[]> {
    const params = new SqlParams();
    const conditions = [`tenant_id = ${params.add(tenantId)}`];
    if (filter.name !== undefined) conditions.push(`name = ${params.add(filter.name)}`);
    if (filter.nameContains !== undefined)
      conditions.push(`strpos(lower(name), lower(${params.add(filter.nameContains)})) > 0`);
    if (filter.ids?.length) conditions.push(`id = ANY(${params.add(filter.ids)}::uuid[])`);
    const { rows } = await this.pool.query<SessionRow>(
      `SELECT ${SESSION_SELECT} FROM trace_sessions ${whereClause(conditions)}
        ORDER BY start_time DESC, id LIMIT ${params.add(limit)} OFFSET ${params.add(offset)}`,
      params.values,
    );
    return rows;
  }

  async run(tenantId: string, id: string): Promise<StoredRun | undefined> {
    const { rows } = await this.pool.query<StoredRun>(
      `SELECT ${RUN_SELECT} FROM trace_runs r WHERE r.tenant_id = $1 AND r.id = $2 LIMIT 1`,
      [tenantId, id],
    );
    return rows[0];
  }

  /** Runs matching `query`; `params` may already hold the filter conditions' values. */
  async queryRuns(
    tenantId: string,
    query: RunQuery,
    params = new SqlParams(),
  ): Promise<StoredRun[]> {
    const c = [`r.tenant_id = ${params.add(tenantId)}`];
    if (query.sessions?.length) c.push(`r.session_id = ANY(${params.add(query.sessions)}::uuid[])`);
    if (query.ids?.length) c.push(`r.id = ANY(${params.add(query.ids)}::uuid[])`);
    if (query.trace) c.push(`r.trace_id = ${params.add(query.trace)}`);
    if (query.parentRun) c.push(`r.parent_run_id = ${params.add(query.parentRun)}`);
    if (query.runType) c.push(`r.run_type = ${params.add(query.runType)}`);
    if (query.isRoot !== undefined) c.push(`r.is_root = ${params.add(query.isRoot)}`);
    if (query.error !== undefined) c.push(query.error ? 'r.error IS NOT NULL' : 'r.error IS NULL');
    if (query.startTime) c.push(`r.start_time >= ${params.add(query.startTime)}::timestamptz`);
    if (query.endTime) c.push(`r.start_time < ${params.add(query.endTime)}::timestamptz`);
    if (query.threadId) c.push(`r.thread_id = ${params.add(query.threadId)}`);
    c.push(...(query.conditions ?? []));
    const order = query.trace
      ? `r.dotted_order ${query.order === 'desc' ? 'DESC' : 'ASC'}`
      : `r.start_time ${query.order === 'asc' ? 'ASC' : 'DESC'}, r.dotted_order`;
    const { rows } = await this.pool.query<StoredRun>(
      `SELECT ${RUN_SELECT} FROM trace_runs r ${whereClause(c)} ORDER BY ${order}
        LIMIT ${params.add(query.limit)} OFFSET ${params.add(query.offset)}`,
      params.values,
    );
    return rows;
  }

  /**
   * One page of a project's runs in `[start, end)` for bulk export, in keyset order
   * (start_time, id) after `after`: JSON as its text and times as epoch microseconds, so no
   * value is parsed only to be encoded again. `conditions` come from the filter language.
   */
  async exportPage(
    tenantId: string,
    query: ExportQuery,
    params = new SqlParams(),
  ): Promise<ExportedRun[]> {
    const where = exportWhere(tenantId, query, params);
    const micros = (col: string) => `${MICROS(col)}::text AS ${col.slice(2)}`;
    const { rows } = await this.pool.query<ExportedRun>(
      `SELECT r.id::text, r.tenant_id::text, r.session_id::text, r.trace_id::text,
         r.parent_run_id::text, r.parent_run_ids::text[] AS parent_run_ids,
         r.reference_example_id::text, r.name, r.run_type, ${micros('r.start_time')},
         ${micros('r.end_time')}, r.status, r.is_root, r.dotted_order, r.trace_tier,
         r.inputs::text, r.outputs::text, r.error, r.extra::text, r.events::text, r.tags,
         ${FEEDBACK_STATS}::text AS feedback_stats, r.total_tokens::text, r.prompt_tokens::text,
         r.completion_tokens::text, r.total_cost::float8, r.prompt_cost::float8,
         r.completion_cost::float8, ${micros('r.first_token_time')}
       FROM trace_runs r ${where} ORDER BY r.start_time, r.id
       LIMIT ${params.add(query.limit)}`,
      params.values,
    );
    return rows;
  }

  /**
   * Where the next export file ends: of the rows after `after` (keyset order), the first `limit`;
   * their count and the last one's cursor, or undefined when none is left.
   */
  async exportChunkEnd(
    tenantId: string,
    query: ExportQuery,
    params = new SqlParams(),
  ): Promise<{ rows: number; last: { startMicros: string; id: string } } | undefined> {
    const where = exportWhere(tenantId, query, params);
    const { rows } = await this.pool.query<{ n: number; micros: string; id: string }>(
      `WITH c AS (SELECT r.start_time, r.id FROM trace_runs r ${where}
                   ORDER BY r.start_time, r.id LIMIT ${params.add(query.limit)})
       SELECT (SELECT count(*) FROM c)::int AS n,
              ${MICROS('start_time')}::text AS micros, id::text
         FROM c ORDER BY start_time DESC, id DESC LIMIT 1`,
      params.values,
    );
    const row = rows[0];
    return row ? { rows: row.n, last: { startMicros: row.micros, id: row.id } } : undefined;
  }

  /**
   * Writes the rows after `after` up to and including `until` (keyset order) to `path` as CSV
   * in the dialect `EXPORT_CSV` through `COPY … TO STDOUT`, with the columns `fields` in that order: JSON as its text, times
   * as epoch microseconds, arrays as JSON arrays. Nothing is parsed in this process: the rows go
   * from PostgreSQL's output to the file. Returns the row count and the longest row's bytes.
   */
  async copyExportRows(
    tenantId: string,
    query: ExportQuery & { until: { startMicros: string; id: string } },
    fields: readonly (keyof ExportedRun)[],
    path: string,
    params = new SqlParams(),
  ): Promise<CopyResult> {
    const c = exportWhere(tenantId, query, params);
    const until = `(r.start_time, r.id) <= (${keysetTime(params.add(query.until.startMicros))}, ${params.add(query.until.id)}::uuid)`;
    const select = `SELECT ${fields.map((f) => EXPORT_CSV_COLUMNS[f]).join(', ')}
       FROM trace_runs r ${c} AND ${until} ORDER BY r.start_time, r.id`;
    const client = await this.pool.connect();
    try {
      return await copyToFile(
        client,
        `COPY (${inlineParams(select, params.values)}) TO STDOUT (FORMAT csv, DELIMITER ${pgChar(EXPORT_CSV.delimiter)}, QUOTE ${pgChar(EXPORT_CSV.quote)})`,
        path,
      );
    } finally {
      client.release();
    }
  }

  /** A thread's runs in execution order: traces by start, each trace in dotted order. */
  async threadRuns(tenantId: string, threadId: string, sessionId?: string): Promise<StoredRun[]> {
    const params = new SqlParams();
    const c = [`r.tenant_id = ${params.add(tenantId)}`, `r.thread_id = ${params.add(threadId)}`];
    if (sessionId) c.push(`r.session_id = ${params.add(sessionId)}`);
    const { rows } = await this.pool.query<StoredRun>(
      `SELECT ${RUN_SELECT} FROM trace_runs r
         JOIN LATERAL (SELECT min(t.start_time) AS trace_start FROM trace_runs t
                        WHERE t.tenant_id = r.tenant_id AND t.trace_id = r.trace_id) t ON true
        ${whereClause(c)} ORDER BY t.trace_start, r.trace_id, r.dotted_order LIMIT 10000`,
      params.values,
    );
    return rows;
  }

  async setRetention(tenantId: string, ttlDays: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO trace_retention (tenant_id, ttl_days) VALUES ($1, $2)
       ON CONFLICT (tenant_id) DO UPDATE SET ttl_days = EXCLUDED.ttl_days, updated_at = now()`,
      [tenantId, ttlDays],
    );
  }

  async retention(tenantId: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ ttl_days: number }>(
      'SELECT ttl_days FROM trace_retention WHERE tenant_id = $1',
      [tenantId],
    );
    return rows[0]?.ttl_days;
  }

  /** The longest retention any workspace has (the default included). */
  async longestTtlDays(defaultDays: number): Promise<number> {
    const { rows } = await this.pool.query<{ days: number }>(
      'SELECT greatest($1::int, coalesce(max(ttl_days), 0)) AS days FROM trace_retention',
      [defaultDays],
    );
    return rows[0]?.days ?? defaultDays;
  }

  /** Day partitions, as `YYYY-MM-DD`, with their table names. */
  async partitionDays(): Promise<{ day: string; table: string }[]> {
    const { rows } = await this.pool.query<{ table: string }>(
      `SELECT c.relname AS table FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid
         JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relname = 'trace_runs' AND c.relname ~ '^trace_runs_p[0-9]{8}$'`,
    );
    return rows.map(({ table }) => {
      const d = table.slice(-8);
      return { table, day: `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}` };
    });
  }

  /** Drops a day partition, and first the feedback of its runs. */
  async dropPartition(table: string, day: string): Promise<void> {
    this.partitions.delete(day);
    const exists = await this.pool.query<{ e: boolean }>(
      'SELECT to_regclass($1) IS NOT NULL AS e',
      [table],
    );
    if (exists.rows[0]?.e)
      await this.pool.query(
        `DELETE FROM trace_feedback f USING ${table} r
          WHERE f.tenant_id = r.tenant_id AND f.run_id = r.id`,
      );
    await this.pool.query(`DROP TABLE IF EXISTS ${table}`);
  }

  /** Deletes up to `limit` runs older than their workspace's retention, with their feedback. */
  async deleteExpired(defaultDays: number, limit: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `WITH doomed AS (
         SELECT r.tenant_id, r.start_time, r.id FROM trace_runs r
           LEFT JOIN trace_retention t ON t.tenant_id = r.tenant_id
          WHERE r.start_time < now() - make_interval(days => coalesce(t.ttl_days, $1::int))
          LIMIT $2),
       gone AS (
         DELETE FROM trace_runs x USING doomed d
          WHERE x.tenant_id = d.tenant_id AND x.start_time = d.start_time AND x.id = d.id
          RETURNING x.tenant_id, x.id),
       feedback AS (
         DELETE FROM trace_feedback f USING gone g
          WHERE f.tenant_id = g.tenant_id AND f.run_id = g.id)
       SELECT count(*)::int AS n FROM gone`,
      [defaultDays, limit],
    );
    return rows[0]?.n ?? 0;
  }

  /**
   * Deletes up to `limit` feedback stored (or last updated) longer ago than their workspace's
   * retention: feedback of runs that never arrived, as the runs' own feedback goes with them. And
   * tokens a day past their expiry (until then a use is told the token expired, not unknown).
   */
  async deleteStaleFeedback(defaultDays: number, limit: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `WITH doomed AS (
         SELECT f.tenant_id, f.id FROM trace_feedback f
           LEFT JOIN trace_retention t ON t.tenant_id = f.tenant_id
          WHERE f.modified_at < now() - make_interval(days => coalesce(t.ttl_days, $1::int))
          LIMIT $2),
       feedback AS (
         DELETE FROM trace_feedback x USING doomed d
          WHERE x.tenant_id = d.tenant_id AND x.id = d.id RETURNING 1),
       tokens AS (
         DELETE FROM trace_feedback_tokens WHERE expires_at < now() - interval '1 day' RETURNING 1)
       SELECT ((SELECT count(*) FROM feedback) + (SELECT count(*) FROM tokens))::int AS n`,
      [defaultDays, limit],
    );
    return rows[0]?.n ?? 0;
  }

  /** Stores feedback (one row per id; a repeated id updates it). Ids must be distinct. */
  async upsertFeedback(tenantId: string, records: FeedbackRecord[]): Promise<StoredFeedback[]> {
    if (!records.length) return [];
    const { rows } = await this.pool.query<StoredFeedback>(UPSERT_FEEDBACK, [
      tenantId,
      jsonb(records),
    ]);
    return rows;
  }

  async feedback(tenantId: string, id: string): Promise<StoredFeedback | undefined> {
    const { rows } = await this.pool.query<StoredFeedback>(
      `SELECT ${FEEDBACK_SELECT} FROM trace_feedback WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id],
    );
    return rows[0];
  }

  /** Sets the fields given of a feedback (`updateFeedback`); undefined when it is not there. */
  async updateFeedback(
    tenantId: string,
    id: string,
    patch: {
      score?: number | null;
      value?: unknown;
      comment?: string | null;
      correction?: unknown;
    },
  ): Promise<StoredFeedback | undefined> {
    const params = new SqlParams();
    const set = ['modified_at = now()'];
    if (patch.score !== undefined) set.push(`score = ${params.add(patch.score)}::float8`);
    if (patch.value !== undefined) set.push(`value = ${params.add(jsonb(patch.value))}::jsonb`);
    if (patch.comment !== undefined) set.push(`comment = ${params.add(patch.comment)}::text`);
    if (patch.correction !== undefined)
      set.push(`correction = ${params.add(jsonb(patch.correction))}::jsonb`);
    const { rows } = await this.pool.query<StoredFeedback>(
      `UPDATE trace_feedback SET ${set.join(', ')}
        WHERE tenant_id = ${params.add(tenantId)} AND id = ${params.add(id)}
        RETURNING ${FEEDBACK_SELECT}`,
      params.values,
    );
    return rows[0];
  }

  /** Deletes a feedback (`deleteFeedback`); whether there was one. */
  async deleteFeedback(tenantId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      'DELETE FROM trace_feedback WHERE tenant_id = $1 AND id = $2',
      [tenantId, id],
    );
    return (rowCount ?? 0) > 0;
  }

  /** Feedback of any of `runs` with any of `keys` and `sources` (each optional), newest first. */
  async listFeedback(
    tenantId: string,
    filter: { runs?: string[]; keys?: string[]; sources?: string[] },
    limit: number,
    offset: number,
  ): Promise<StoredFeedback[]> {
    const params = new SqlParams();
    const c = [`tenant_id = ${params.add(tenantId)}`];
    if (filter.runs?.length) c.push(`run_id = ANY(${params.add(filter.runs)}::uuid[])`);
    if (filter.keys?.length) c.push(`key = ANY(${params.add(filter.keys)}::text[])`);
    if (filter.sources?.length)
      c.push(`feedback_source->>'type' = ANY(${params.add(filter.sources)}::text[])`);
    const { rows } = await this.pool.query<StoredFeedback>(
      `SELECT ${FEEDBACK_SELECT} FROM trace_feedback ${whereClause(c)}
        ORDER BY created_at DESC, id LIMIT ${params.add(limit)} OFFSET ${params.add(offset)}`,
      params.values,
    );
    return rows;
  }

  async createFeedbackTokens(
    tenantId: string,
    tokens: { id: string; run_id: string; feedback_key: string; expires_at: string }[],
  ): Promise<{ id: string; expires_at: string }[]> {
    const { rows } = await this.pool.query<{ id: string; expires_at: string }>(
      `INSERT INTO trace_feedback_tokens (id, tenant_id, run_id, feedback_key, expires_at)
         SELECT t.id, $1, t.run_id, t.feedback_key, t.expires_at
           FROM jsonb_to_recordset($2::jsonb)
             AS t(id uuid, run_id uuid, feedback_key text, expires_at timestamptz)
       RETURNING id::text, ${iso('expires_at')} AS expires_at`,
      [tenantId, jsonb(tokens)],
    );
    return rows;
  }

  /** A run's presigned tokens, newest first. */
  async listFeedbackTokens(
    tenantId: string,
    runId: string,
    limit: number,
    offset: number,
  ): Promise<{ id: string; expires_at: string }[]> {
    const { rows } = await this.pool.query<{ id: string; expires_at: string }>(
      `SELECT id::text, ${iso('expires_at')} AS expires_at FROM trace_feedback_tokens
        WHERE tenant_id = $1 AND run_id = $2 ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
      [tenantId, runId, limit, offset],
    );
    return rows;
  }

  /** A presigned token by its id (any workspace's: the id is the secret). */
  async feedbackToken(id: string): Promise<FeedbackToken | undefined> {
    const { rows } = await this.pool.query<FeedbackToken>(
      `SELECT id::text, tenant_id::text, run_id::text, feedback_key,
              ${iso('expires_at')} AS expires_at, expires_at <= now() AS expired
         FROM trace_feedback_tokens WHERE id = $1`,
      [id],
    );
    return rows[0];
  }

  /** Pending updates whose run never arrived. */
  async deleteStalePending(olderThanSeconds: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM trace_pending_updates
        WHERE received_at < now() - make_interval(secs => $1::int)`,
      [olderThanSeconds],
    );
    return rowCount ?? 0;
  }
}

/** The window of an export read: one project's runs in `[start, end)` after a keyset cursor. */
export interface ExportQuery {
  sessionId: string;
  start: string;
  end: string;
  after?: { startMicros: string; id: string };
  limit: number;
  conditions?: string[];
}

const MICROS = (col: string) => `(extract(epoch FROM ${col}) * 1000000)::bigint`;

// Integer microseconds from the epoch: exact, unlike to_timestamp's double.
const keysetTime = (micros: string) =>
  `(timestamptz 'epoch' + ${micros}::bigint * interval '1 microsecond')`;

function exportWhere(tenantId: string, query: ExportQuery, params: SqlParams): string {
  const c = [
    `r.tenant_id = ${params.add(tenantId)}`,
    `r.session_id = ${params.add(query.sessionId)}`,
    `r.start_time >= ${params.add(query.start)}::timestamptz`,
    `r.start_time < ${params.add(query.end)}::timestamptz`,
  ];
  if (query.after)
    c.push(
      `(r.start_time, r.id) > (${keysetTime(params.add(query.after.startMicros))}, ${params.add(query.after.id)}::uuid)`,
    );
  c.push(...(query.conditions ?? []));
  return whereClause(c);
}

/** One character as a PostgreSQL escape-string literal (`E'\\x09'`). */
const pgChar = (c: string) => `E'\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}'`;

/** Each exportable field as a CSV column of `copyExportRows`. */
const EXPORT_CSV_COLUMNS: Record<keyof ExportedRun, string> = {
  id: 'r.id',
  tenant_id: 'r.tenant_id',
  session_id: 'r.session_id',
  trace_id: 'r.trace_id',
  parent_run_id: 'r.parent_run_id',
  parent_run_ids: 'array_to_json(r.parent_run_ids)',
  reference_example_id: 'r.reference_example_id',
  name: 'r.name',
  run_type: 'r.run_type',
  start_time: MICROS('r.start_time'),
  end_time: MICROS('r.end_time'),
  status: 'r.status',
  is_root: 'r.is_root',
  dotted_order: 'r.dotted_order',
  trace_tier: 'r.trace_tier',
  inputs: 'r.inputs',
  outputs: 'r.outputs',
  error: 'r.error',
  extra: 'r.extra',
  events: 'r.events',
  tags: 'array_to_json(r.tags)',
  feedback_stats: FEEDBACK_STATS,
  total_tokens: 'r.total_tokens',
  prompt_tokens: 'r.prompt_tokens',
  completion_tokens: 'r.completion_tokens',
  total_cost: 'r.total_cost::float8',
  prompt_cost: 'r.prompt_cost::float8',
  completion_cost: 'r.completion_cost::float8',
  first_token_time: MICROS('r.first_token_time'),
};
