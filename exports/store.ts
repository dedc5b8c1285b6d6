// SQL of bulk exports and their runs. Every write of a run by an executor is fenced by its claim
// (claimed_by), so an executor that lost the run (lease expired, taken over) writes nothing.
import { withTransaction, type Pool } from '../common/db/index.js';
import type { ExportStatus, RunStatus } from './model.js';

export interface ExportRow {
  id: string;
  tenant_id: string;
  bulk_export_destination_id: string;
  session_id: string;
  start_time: string;
  end_time: string | null;
  filter: string | null;
  format: string;
  compression: string;
  interval_hours: number | null;
  export_fields: string[] | null;
  status: ExportStatus;
  source_bulk_export_id: string | null;
  next_window_start: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface RunRow {
  id: string;
  bulk_export_id: string;
  tenant_id: string;
  start_time: string;
  end_time: string;
  status: RunStatus;
  retry_number: number;
  errors: Record<string, string>;
  cursor: string | null;
  rows_written: number;
  files: string[];
  pending_upload: { file_path: string; from_cursor: string | null } | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export type NewExport = Omit<
  ExportRow,
  'created_at' | 'updated_at' | 'finished_at' | 'next_window_start'
> & { next_window_start: string | null };

const iso = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const EXPORT_SELECT = `e.id::text, e.tenant_id::text, e.bulk_export_destination_id::text,
  e.session_id::text, ${iso('e.start_time')} AS start_time, ${iso('e.end_time')} AS end_time,
  e.filter, e.format, e.compression, e.interval_hours, e.export_fields, e.status,
  e.source_bulk_export_id::text, ${iso('e.next_window_start')} AS next_window_start,
  ${iso('e.created_at')} AS created_at, ${iso('e.updated_at')} AS updated_at,
  ${iso('e.finished_at')} AS finished_at`;

const RUN_SELECT = `r.id::text, r.bulk_export_id::text, r.tenant_id::text,
  ${iso('r.start_time')} AS start_time, ${iso('r.end_time')} AS end_time, r.status,
  r.retry_number, r.errors, r.cursor, r.rows_written::float8 AS rows_written, r.files,
  r.pending_upload, ${iso('r.created_at')} AS created_at, ${iso('r.updated_at')} AS updated_at,
  ${iso('r.finished_at')} AS finished_at`;

const INSERT_EXPORT = `INSERT INTO bulk_exports (id, tenant_id, bulk_export_destination_id,
    session_id, start_time, end_time, filter, format, compression, interval_hours, export_fields,
    status, source_bulk_export_id, next_window_start)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`;

const INSERT_RUNS = `INSERT INTO bulk_export_runs (id, bulk_export_id, tenant_id, start_time, end_time, status)
  SELECT w.id, $1, $2, w.start_time, w.end_time, 'Created'
    FROM jsonb_to_recordset($3::jsonb) AS w(id uuid, start_time timestamptz, end_time timestamptz)`;

/** An export's status from its runs: done when all are, failed when one failed. */
const SETTLE_EXPORT = `UPDATE bulk_exports e SET
    status = s.status, updated_at = now(),
    finished_at = CASE WHEN s.status IN ('Completed', 'Failed') THEN now() END
  FROM (SELECT CASE
      WHEN bool_or(status = 'Failed') THEN 'Failed'
      WHEN bool_and(status = 'Completed') THEN 'Completed'
      WHEN bool_or(status IN ('Running', 'Completed')) THEN 'Running'
      ELSE 'Created' END AS status
    FROM bulk_export_runs WHERE bulk_export_id = $1) s
  WHERE e.id = $1 AND e.status IN ('Created', 'Running') AND e.status <> s.status`;

export interface WindowRun {
  id: string;
  start_time: string;
  end_time: string;
}

export class ExportStore {
  constructor(private readonly pool: Pool) {}

  /** Creates an export and its runs in one transaction. */
  async createExport(row: NewExport, runs: WindowRun[]): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      await client.query(INSERT_EXPORT, exportValues(row));
      if (runs.length)
        await client.query(INSERT_RUNS, [row.id, row.tenant_id, JSON.stringify(runs)]);
    });
  }

  async getExport(tenantId: string, id: string): Promise<ExportRow | undefined> {
    const { rows } = await this.pool.query<ExportRow>(
      `SELECT ${EXPORT_SELECT} FROM bulk_exports e WHERE e.tenant_id = $1 AND e.id = $2`,
      [tenantId, id],
    );
    return rows[0];
  }

  async exportById(id: string): Promise<ExportRow | undefined> {
    const { rows } = await this.pool.query<ExportRow>(
      `SELECT ${EXPORT_SELECT} FROM bulk_exports e WHERE e.id = $1`,
      [id],
    );
    return rows[0];
  }

  async listExports(tenantId: string, limit: number, offset: number): Promise<ExportRow[]> {
    const { rows } = await this.pool.query<ExportRow>(
      `SELECT ${EXPORT_SELECT} FROM bulk_exports e WHERE e.tenant_id = $1
        ORDER BY e.created_at DESC, e.id LIMIT $2 OFFSET $3`,
      [tenantId, limit, offset],
    );
    return rows;
  }

  /**
   * Cancels an export that has not finished, and its runs that have not (a scheduled export's
   * spawned exports are left alone, as LangSmith does). Returns false when it had finished.
   */
  async cancelExport(tenantId: string, id: string): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      const { rowCount } = await client.query(
        `UPDATE bulk_exports SET status = 'Cancelled', updated_at = now(), finished_at = now()
          WHERE tenant_id = $1 AND id = $2
            AND status IN ('Created', 'Running', 'IntervalScheduled')`,
        [tenantId, id],
      );
      if (!rowCount) return false;
      await client.query(
        `UPDATE bulk_export_runs SET status = 'Cancelled', updated_at = now(), finished_at = now(),
           claimed_by = NULL, lease_until = NULL
          WHERE bulk_export_id = $1 AND status IN ('Created', 'Running')`,
        [id],
      );
      return true;
    });
  }

  async listRuns(exportId: string): Promise<RunRow[]> {
    const { rows } = await this.pool.query<RunRow>(
      `SELECT ${RUN_SELECT} FROM bulk_export_runs r WHERE r.bulk_export_id = $1
        ORDER BY r.start_time`,
      [exportId],
    );
    return rows;
  }

  /** Runs of the exports a scheduled export spawned. */
  async runsOfSource(tenantId: string, sourceId: string): Promise<RunRow[]> {
    const { rows } = await this.pool.query<RunRow>(
      `SELECT ${RUN_SELECT} FROM bulk_export_runs r
         JOIN bulk_exports e ON e.id = r.bulk_export_id
        WHERE e.tenant_id = $1 AND e.source_bulk_export_id = $2
        ORDER BY r.start_time`,
      [tenantId, sourceId],
    );
    return rows;
  }

  async getRun(id: string): Promise<RunRow | undefined> {
    const { rows } = await this.pool.query<RunRow>(
      `SELECT ${RUN_SELECT} FROM bulk_export_runs r WHERE r.id = $1`,
      [id],
    );
    return rows[0];
  }

  /**
   * Claims run `id` for `owner` until the lease ends: a run not yet final whose lease is free
   * or expired (or already `owner`'s). Undefined when it cannot be claimed.
   */
  async claimRun(id: string, owner: string, leaseMs: number): Promise<RunRow | undefined> {
    const { rows } = await this.pool.query<RunRow>(
      `UPDATE bulk_export_runs r SET status = 'Running', claimed_by = $2,
          lease_until = now() + make_interval(secs => $3::float8 / 1000), updated_at = now()
        WHERE r.id = $1 AND r.status IN ('Created', 'Running')
          AND (r.lease_until IS NULL OR r.lease_until < now() OR r.claimed_by = $2)
        RETURNING ${RUN_SELECT}`,
      [id, owner, leaseMs],
    );
    const run = rows[0];
    if (run) await this.pool.query(SETTLE_EXPORT, [run.bulk_export_id]);
    return run;
  }

  /** The id of a run an in-process executor may claim next (oldest first). */
  async nextClaimable(except: string[] = []): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT r.id::text FROM bulk_export_runs r
        WHERE r.status IN ('Created', 'Running')
          AND (r.lease_until IS NULL OR r.lease_until < now()) AND r.id <> ALL($1::uuid[])
        ORDER BY r.created_at, r.start_time LIMIT 1`,
      [except],
    );
    return rows[0]?.id;
  }

  /** Extends the lease; false when the run is no longer `owner`'s or no longer running. */
  async renewLease(id: string, owner: string, leaseMs: number): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE bulk_export_runs SET lease_until = now() + make_interval(secs => $3::float8 / 1000)
        WHERE id = $1 AND claimed_by = $2 AND status = 'Running'`,
      [id, owner, leaseMs],
    );
    return rowCount === 1;
  }

  /** Records the object about to be uploaded (visible as progress; cleared by its commit). */
  async setPending(id: string, owner: string, pending: RunRow['pending_upload']): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE bulk_export_runs SET pending_upload = $3::jsonb, updated_at = now()
        WHERE id = $1 AND claimed_by = $2 AND status = 'Running'`,
      [id, owner, JSON.stringify(pending)],
    );
    return rowCount === 1;
  }

  /**
   * Commits a verified object: the cursor moves to its last row, the rows and the file are
   * counted, all in one statement. Only from the cursor the file started at, so a stale
   * executor cannot count the same rows twice.
   */
  async commitFile(
    id: string,
    owner: string,
    from: string | null,
    commit: { cursor: string; file: string; rows: number },
  ): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE bulk_export_runs SET cursor = $4, rows_written = rows_written + $5,
          files = array_append(files, $6), pending_upload = NULL, updated_at = now()
        WHERE id = $1 AND claimed_by = $2 AND status = 'Running'
          AND cursor IS NOT DISTINCT FROM $3`,
      [id, owner, from, commit.cursor, commit.rows, commit.file],
    );
    return rowCount === 1;
  }

  /** Ends a run that went through its window; settles its export. */
  async completeRun(id: string, owner: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ bulk_export_id: string }>(
      `UPDATE bulk_export_runs SET status = 'Completed', finished_at = now(), updated_at = now(),
          claimed_by = NULL, lease_until = NULL, pending_upload = NULL
        WHERE id = $1 AND claimed_by = $2 AND status = 'Running'
        RETURNING bulk_export_id::text`,
      [id, owner],
    );
    if (!rows[0]) return false;
    await this.pool.query(SETTLE_EXPORT, [rows[0].bulk_export_id]);
    return true;
  }

  /**
   * Records a failed attempt under `retry_<n>`; the run is tried again until `maxAttempts`,
   * then it fails, and its export with it. `final`: an error no retry can cure.
   */
  async failAttempt(
    id: string,
    owner: string,
    message: string,
    maxAttempts: number,
    final: boolean,
    retryDelayMs: number,
  ): Promise<RunStatus | undefined> {
    const { rows } = await this.pool.query<{ status: RunStatus; bulk_export_id: string }>(
      `UPDATE bulk_export_runs SET
          errors = errors || jsonb_build_object('retry_' || retry_number, $3::text),
          status = CASE WHEN $5 OR retry_number + 1 >= $4 THEN 'Failed' ELSE 'Created' END,
          finished_at = CASE WHEN $5 OR retry_number + 1 >= $4 THEN now() END,
          retry_number = CASE WHEN $5 OR retry_number + 1 >= $4 THEN retry_number
                              ELSE retry_number + 1 END,
          claimed_by = NULL, updated_at = now(),
          -- Not claimable again before the retry delay.
          lease_until = now() + make_interval(secs => $6::float8 / 1000)
        WHERE id = $1 AND claimed_by = $2 AND status = 'Running'
        RETURNING status, bulk_export_id::text`,
      [id, owner, message, maxAttempts, final, retryDelayMs],
    );
    if (!rows[0]) return undefined;
    await this.pool.query(SETTLE_EXPORT, [rows[0].bulk_export_id]);
    return rows[0].status;
  }

  /**
   * Exports the Job executor publishes as BulkExport resources: those not finished, and those
   * cancelled in the last `cancelledWithinMs` (their running Jobs are still to be deleted).
   */
  async exportsForJobs(cancelledWithinMs: number): Promise<ExportRow[]> {
    const { rows } = await this.pool.query<ExportRow>(
      `SELECT ${EXPORT_SELECT} FROM bulk_exports e
        WHERE e.status IN ('Created', 'Running')
           OR (e.status = 'Cancelled'
               AND e.finished_at > now() - make_interval(secs => $1::float8 / 1000))
        ORDER BY e.created_at`,
      [cancelledWithinMs],
    );
    return rows;
  }

  /**
   * Fails a run whose Kubernetes Job gave up (its pods crashed or were killed without recording
   * an attempt, so the run itself still looks retryable); settles its export.
   */
  async failRunOfJob(id: string, message: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ bulk_export_id: string }>(
      `UPDATE bulk_export_runs SET
          errors = errors || jsonb_build_object('retry_' || retry_number, $2::text),
          status = 'Failed', finished_at = now(), updated_at = now(),
          claimed_by = NULL, lease_until = NULL
        WHERE id = $1 AND status IN ('Created', 'Running')
        RETURNING bulk_export_id::text`,
      [id, message],
    );
    if (!rows[0]) return false;
    await this.pool.query(SETTLE_EXPORT, [rows[0].bulk_export_id]);
    return true;
  }

  /** Scheduled exports with a window due by `now` (its end plus `graceMs` passed). */
  async dueSchedules(now: Date, graceMs: number): Promise<ExportRow[]> {
    const { rows } = await this.pool.query<ExportRow>(
      `SELECT ${EXPORT_SELECT} FROM bulk_exports e
        WHERE e.status = 'IntervalScheduled'
          AND e.next_window_start + make_interval(hours => e.interval_hours)
              + make_interval(secs => $2::float8 / 1000) <= $1`,
      [now.toISOString(), graceMs],
    );
    return rows;
  }

  /**
   * Spawns one window of a scheduled export: advances its next window from `expected` (so two
   * schedulers never spawn the same window) and creates the window's export and runs.
   */
  async spawnWindow(
    parentId: string,
    expected: string,
    nextStart: string,
    child: NewExport,
    runs: WindowRun[],
  ): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      const { rowCount } = await client.query(
        `UPDATE bulk_exports SET next_window_start = $3, updated_at = now()
          WHERE id = $1 AND status = 'IntervalScheduled' AND next_window_start = $2`,
        [parentId, expected, nextStart],
      );
      if (!rowCount) return false;
      await client.query(INSERT_EXPORT, exportValues(child));
      if (runs.length)
        await client.query(INSERT_RUNS, [child.id, child.tenant_id, JSON.stringify(runs)]);
      return true;
    });
  }
}

function exportValues(row: NewExport): unknown[] {
  return [
    row.id,
    row.tenant_id,
    row.bulk_export_destination_id,
    row.session_id,
    row.start_time,
    row.end_time,
    row.filter,
    row.format,
    row.compression,
    row.interval_hours,
    row.export_fields,
    row.status,
    row.source_bulk_export_id,
    row.next_window_start,
  ];
}
