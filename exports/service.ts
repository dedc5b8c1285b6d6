// Bulk exports' domain service: create (validated, split into day runs or scheduled), list, get,
// cancel, runs with their progress, and the scheduler that spawns a scheduled export's windows.
import { randomUUID } from 'node:crypto';
import { SqlParams } from '../common/db/index.js';
import { AppError, invalid, notFound, type ValidationIssue } from '../common/errors/index.js';
import type { Logger } from '../common/logging/index.js';
import { compileFilter, type TraceStore } from '../traces/index.js';
import { dayWindows, dueWindows, runFolder } from './model.js';
import { EXPORT_FIELDS } from './parquet.js';
import type { BulkExport, BulkExportRun, ExportCreate } from './schemas.js';
import type { ExportRow, ExportStore, NewExport, RunRow, WindowRun } from './store.js';

export interface ExportServiceSettings {
  /** A scheduled window is spawned this long after its end (late runs still arrive). */
  scheduleGraceMs: number;
}

export const DEFAULT_EXPORT_SERVICE_SETTINGS: ExportServiceSettings = {
  scheduleGraceMs: 10 * 60_000,
};

/** Whether a destination exists in a workspace (the destinations part of this context). */
export type DestinationCheck = (tenantId: string, destinationId: string) => Promise<boolean>;

export class ExportService {
  constructor(
    private readonly store: ExportStore,
    private readonly traces: TraceStore,
    private readonly destinationExists: DestinationCheck,
    readonly settings: ExportServiceSettings,
    private readonly logger: Logger,
  ) {}

  async create(tenantId: string, body: ExportCreate): Promise<BulkExport> {
    const issues: ValidationIssue[] = [];
    const start = new Date(body.start_time);
    const end = body.end_time ? new Date(body.end_time) : undefined;
    if (body.interval_hours && end)
      issues.push(
        issue(['body', 'end_time'], 'end_time must be omitted when interval_hours is set'),
      );
    if (!body.interval_hours && !end)
      issues.push(issue(['body', 'end_time'], 'end_time is required unless interval_hours is set'));
    if (end && end <= start)
      issues.push(issue(['body', 'end_time'], 'end_time must be after start_time'));
    body.export_fields?.forEach((f, i) => {
      if (!(EXPORT_FIELDS as readonly string[]).includes(f))
        issues.push(
          issue(
            ['body', 'export_fields', i],
            `unknown field ${f}; exportable: ${EXPORT_FIELDS.join(', ')}`,
          ),
        );
    });
    if (issues.length) throw new AppError('VALIDATION', issues);
    // An invalid filter answers 422 at its place (loc body.filter), never at run time.
    if (body.filter) compileFilter(body.filter, new SqlParams());
    if (!(await this.destinationExists(tenantId, body.bulk_export_destination_id)))
      throw notFound(`Bulk export destination ${body.bulk_export_destination_id} not found`);
    if (!(await this.traces.session(tenantId, body.session_id)))
      throw notFound(`Session ${body.session_id} not found`);

    const row: NewExport = {
      id: randomUUID(),
      tenant_id: tenantId,
      bulk_export_destination_id: body.bulk_export_destination_id,
      session_id: body.session_id,
      start_time: start.toISOString(),
      end_time: end?.toISOString() ?? null,
      filter: body.filter ?? null,
      format: 'Parquet',
      compression: body.compression,
      interval_hours: body.interval_hours ?? null,
      export_fields: body.export_fields ?? null,
      status: body.interval_hours ? 'IntervalScheduled' : 'Created',
      source_bulk_export_id: null,
      next_window_start: body.interval_hours ? start.toISOString() : null,
    };
    await this.store.createExport(row, end ? windowRuns(start, end) : []);
    if (body.interval_hours) await this.spawnDue(new Date());
    return this.get(tenantId, row.id);
  }

  async list(tenantId: string, limit: number, offset: number): Promise<BulkExport[]> {
    return (await this.store.listExports(tenantId, limit, offset)).map(exportOut);
  }

  async get(tenantId: string, id: string): Promise<BulkExport> {
    const row = await this.store.getExport(tenantId, id);
    if (!row) throw notFound(`Bulk export ${id} not found`);
    return exportOut(row);
  }

  /** Cancels an export; one already finished answers 409. */
  async cancel(tenantId: string, id: string): Promise<BulkExport> {
    const before = await this.get(tenantId, id);
    if (!(await this.store.cancelExport(tenantId, id)))
      throw new AppError(
        'CONFLICT',
        `Bulk export ${id} is ${before.status} and cannot be cancelled`,
      );
    return this.get(tenantId, id);
  }

  async runs(tenantId: string, exportId: string): Promise<BulkExportRun[]> {
    const exp = await this.store.getExport(tenantId, exportId);
    if (!exp) throw notFound(`Bulk export ${exportId} not found`);
    return (await this.store.listRuns(exportId)).map((r) => runOut(r, exp));
  }

  async run(tenantId: string, exportId: string, runId: string): Promise<BulkExportRun> {
    const found = (await this.runs(tenantId, exportId)).find((r) => r.id === runId);
    if (!found) throw notFound(`Bulk export run ${runId} not found`);
    return found;
  }

  /** Runs of the exports a scheduled export spawned. */
  async runsOfSource(tenantId: string, sourceId: string): Promise<BulkExportRun[]> {
    const rows = await this.store.runsOfSource(tenantId, sourceId);
    const exports = new Map<string, ExportRow>();
    const out: BulkExportRun[] = [];
    for (const r of rows) {
      let exp = exports.get(r.bulk_export_id);
      if (!exp) {
        exp = await this.store.getExport(tenantId, r.bulk_export_id);
        if (!exp) continue;
        exports.set(exp.id, exp);
      }
      out.push(runOut(r, exp));
    }
    return out;
  }

  /** Spawns every scheduled window due at `now`; returns how many. */
  async spawnDue(now: Date): Promise<number> {
    let spawned = 0;
    for (const parent of await this.store.dueSchedules(now, this.settings.scheduleGraceMs)) {
      let next = parent.next_window_start!;
      for (const w of dueWindows(
        new Date(next),
        parent.interval_hours!,
        this.settings.scheduleGraceMs,
        now,
      )) {
        const child: NewExport = {
          ...parent,
          id: randomUUID(),
          start_time: w.start.toISOString(),
          end_time: w.end.toISOString(),
          interval_hours: null,
          status: 'Created',
          source_bulk_export_id: parent.id,
          next_window_start: null,
        };
        const ok = await this.store.spawnWindow(
          parent.id,
          next,
          w.end.toISOString(),
          child,
          windowRuns(w.start, w.end),
        );
        if (!ok) break; // another scheduler got there first
        next = w.end.toISOString();
        spawned++;
        this.logger.info({ export: parent.id, window: w }, 'scheduled export window spawned');
      }
    }
    return spawned;
  }
}

function issue(loc: (string | number)[], msg: string): ValidationIssue {
  return invalid(loc, msg).detail[0] as ValidationIssue;
}

function windowRuns(start: Date, end: Date): WindowRun[] {
  return dayWindows(start, end).map((w) => ({
    id: randomUUID(),
    start_time: w.start.toISOString(),
    end_time: w.end.toISOString(),
  }));
}

function exportOut(row: ExportRow): BulkExport {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    bulk_export_destination_id: row.bulk_export_destination_id,
    session_id: row.session_id,
    start_time: row.start_time,
    end_time: row.end_time,
    filter: row.filter,
    format: 'Parquet',
    compression: row.compression,
    interval_hours: row.interval_hours,
    export_fields: row.export_fields,
    status: row.status,
    source_bulk_export_id: row.source_bulk_export_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    finished_at: row.finished_at,
  };
}

function runOut(run: RunRow, exp: ExportRow): BulkExportRun {
  const folder = runFolder(
    '',
    { exportId: exp.id, tenantId: exp.tenant_id, sessionId: exp.session_id },
    new Date(run.start_time),
  );
  return {
    id: run.id,
    bulk_export_id: run.bulk_export_id,
    status: run.status,
    retry_number: run.retry_number,
    errors: Object.keys(run.errors).length ? run.errors : null,
    start_time: run.start_time,
    end_time: run.end_time,
    created_at: run.created_at,
    updated_at: run.updated_at,
    finished_at: run.finished_at,
    metadata: {
      prefix: folder,
      start_time: run.start_time,
      end_time: run.end_time,
      execution_backend: 'postgres',
      result: {
        rows_written: run.rows_written,
        exported_files: run.files,
        export_path: folder,
        latest_cursor: run.cursor,
        pending_upload: run.pending_upload,
      },
    },
  };
}
