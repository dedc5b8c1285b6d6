// SQL for crons. Nothing outside this file reads or writes the table.
import {
  SqlParams,
  jsonb,
  whereClause,
  type Pool,
  type PoolClient,
} from '../../common/db/index.js';
import type { AuthFilter, Visible } from '../auth/index.js';
import type { CronField } from './schemas.js';

export interface CronRow {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  user_id: string | null;
  schedule: string;
  timezone: string | null;
  end_time: Date | null;
  enabled: boolean;
  on_run_completed: 'delete' | 'keep' | null;
  payload: Record<string, unknown>;
  metadata: Record<string, unknown>;
  next_run_date: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface CronFilter {
  assistant_id?: string | undefined;
  thread_id?: string | undefined;
  enabled?: boolean | undefined;
  metadata?: Record<string, unknown> | undefined;
  /** The caller's authorization filter (see runtime/auth). */
  auth?: AuthFilter | undefined;
}

type Queryable = Pool | PoolClient;

/** A cron that should fire now; the first two terms are crons_due_idx's predicate. */
const DUE = 'enabled AND next_run_date IS NOT NULL AND next_run_date <= now()';

type Writable = Omit<CronRow, 'created_at' | 'updated_at'>;

const quote = (column: string) => `"${column}"`;

function conditions(filter: CronFilter, params: SqlParams): string[] {
  const where: string[] = [];
  if (filter.assistant_id) where.push(`assistant_id = ${params.add(filter.assistant_id)}`);
  if (filter.thread_id) where.push(`thread_id = ${params.add(filter.thread_id)}`);
  if (filter.enabled !== undefined) where.push(`enabled = ${params.add(filter.enabled)}`);
  if (filter.metadata && Object.keys(filter.metadata).length)
    where.push(`metadata @> ${params.add(jsonb(filter.metadata))}::jsonb`);
  if (filter.auth) where.push(`metadata @> ${params.add(jsonb(filter.auth))}::jsonb`);
  return where;
}

export class CronStore {
  constructor(private readonly pool: Pool) {}

  /** Whether the row exists and matches an authorization filter (see runtime/auth). */
  async visibility(id: string, filter: AuthFilter): Promise<Visible> {
    const { rows } = await this.pool.query<{ visible: boolean }>(
      'SELECT metadata @> $2::jsonb AS visible FROM crons WHERE cron_id = $1',
      [id, jsonb(filter)],
    );
    return rows[0] === undefined ? 'missing' : rows[0].visible ? 'visible' : 'hidden';
  }

  async insert(cron: Writable): Promise<CronRow> {
    const { rows } = await this.pool.query<CronRow>(
      `INSERT INTO crons (cron_id, assistant_id, thread_id, user_id, schedule, timezone, end_time,
         enabled, on_run_completed, payload, metadata, next_run_date)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       RETURNING *`,
      [
        cron.cron_id,
        cron.assistant_id,
        cron.thread_id,
        cron.user_id,
        cron.schedule,
        cron.timezone,
        cron.end_time,
        cron.enabled,
        cron.on_run_completed,
        jsonb(cron.payload),
        jsonb(cron.metadata),
        cron.next_run_date,
      ],
    );
    const row = rows[0];
    if (!row) throw new Error('cron insert returned nothing');
    return row;
  }

  async get(cronId: string, db: Queryable = this.pool): Promise<CronRow | undefined> {
    const { rows } = await db.query<CronRow>('SELECT * FROM crons WHERE cron_id = $1', [cronId]);
    return rows[0];
  }

  /** Reads a cron and locks it until the transaction ends (updates wait for a firing). */
  async lock(cronId: string, db: PoolClient): Promise<CronRow | undefined> {
    const { rows } = await db.query<CronRow>('SELECT * FROM crons WHERE cron_id = $1 FOR UPDATE', [
      cronId,
    ]);
    return rows[0];
  }

  async update(
    cronId: string,
    fields: Pick<
      Writable,
      | 'schedule'
      | 'timezone'
      | 'end_time'
      | 'enabled'
      | 'on_run_completed'
      | 'payload'
      | 'metadata'
      | 'next_run_date'
    >,
    db: PoolClient,
  ): Promise<CronRow> {
    const { rows } = await db.query<CronRow>(
      `UPDATE crons SET schedule = $2, timezone = $3, end_time = $4, enabled = $5,
         on_run_completed = $6, payload = $7, metadata = $8, next_run_date = $9, updated_at = now()
       WHERE cron_id = $1 RETURNING *`,
      [
        cronId,
        fields.schedule,
        fields.timezone,
        fields.end_time,
        fields.enabled,
        fields.on_run_completed,
        jsonb(fields.payload),
        jsonb(fields.metadata),
        fields.next_run_date,
      ],
    );
    const row = rows[0];
    if (!row) throw new Error('cron update returned nothing');
    return row;
  }

  async delete(cronId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('DELETE FROM crons WHERE cron_id = $1', [cronId]);
    return (rowCount ?? 0) > 0;
  }

  async search(
    filter: CronFilter & {
      limit: number;
      offset: number;
      sortBy: string;
      sortOrder: 'asc' | 'desc';
      select: readonly CronField[];
    },
  ): Promise<Partial<CronRow>[]> {
    const params = new SqlParams();
    const where = whereClause(conditions(filter, params));
    const order = `${quote(filter.sortBy)} ${filter.sortOrder} NULLS LAST, cron_id ${filter.sortOrder}`;
    const { rows } = await this.pool.query<Partial<CronRow>>(
      `SELECT ${filter.select.map(quote).join(', ')} FROM crons ${where}
       ORDER BY ${order} LIMIT ${params.add(filter.limit)} OFFSET ${params.add(filter.offset)}`,
      params.values,
    );
    return rows;
  }

  async count(filter: CronFilter): Promise<number> {
    const params = new SqlParams();
    const { rows } = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM crons ${whereClause(conditions(filter, params))}`,
      params.values,
    );
    return rows[0]?.n ?? 0;
  }

  /**
   * Whether some cron is due, read without a transaction: the scheduler's tick asks this first,
   * so an idle replica spends one statement a tick, not a transaction's three.
   */
  async anyDue(db: Queryable): Promise<boolean> {
    const { rows } = await db.query<{ due: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM crons WHERE ${DUE}) AS due`,
    );
    return rows[0]?.due === true;
  }

  /**
   * Locks one due cron that no other transaction holds (SKIP LOCKED: replicas claim different
   * crons side by side, never the same one twice), with the database's clock as `now`.
   */
  async claimDue(db: PoolClient): Promise<{ cron: CronRow; now: Date } | undefined> {
    const { rows } = await db.query<CronRow & { db_now: Date }>(
      `SELECT *, now() AS db_now FROM crons
       WHERE ${DUE}
       ORDER BY next_run_date
       LIMIT 1
       FOR UPDATE SKIP LOCKED`,
    );
    const row = rows[0];
    if (!row) return undefined;
    const { db_now, ...cron } = row;
    return { cron, now: db_now };
  }

  async setNextRunDate(cronId: string, next: Date | null, db: PoolClient): Promise<void> {
    await db.query('UPDATE crons SET next_run_date = $2 WHERE cron_id = $1', [cronId, next]);
  }
}
