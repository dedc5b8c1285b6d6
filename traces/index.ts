// Traces: a LangSmith-compatible trace store (ingest, reads, retention) that the control-plane
// api and `graphdock dev` mount under /api/v1, and the runtime's tracing of its graph runs with
// the official `langsmith` tracer.
import { join } from 'node:path';
import { migrate, readMigrationDir, type Pool } from '../common/db/index.js';
import type { Logger } from '../common/logging/index.js';
import { TraceService, type TraceSettings, DEFAULT_TRACE_SETTINGS } from './service.js';
import { TraceStore } from './store.js';

export {
  TraceService,
  DEFAULT_TRACE_SETTINGS,
  DEFAULT_SESSION,
  type TraceSettings,
} from './service.js';
export { TraceStore } from './store.js';
export { compileFilter } from './filter.js';
export type { ExportedRun, StoredFeedback } from './model.js';
export { EXPORT_CSV } from './model.js';
export type { ExportQuery } from './store.js';
export {
  traceRoutes,
  isFeedbackTokenUse,
  TRACES_PREFIX,
  type TraceRouteOptions,
} from './routes.js';
export {
  RuntimeTracing,
  resolveTracingTarget,
  DEV_TRACES_TENANT,
  type TracingTarget,
} from './tracing.js';

const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');

export function migrateTraceDatabase(pool: Pool): Promise<number[]> {
  return migrate(pool, { area: 'traces', migrations: readMigrationDir(MIGRATIONS_DIR) });
}

/** The trace store's service over `pool`, its tables migrated. */
export async function createTraceService(
  pool: Pool,
  logger: Logger,
  settings: Partial<TraceSettings> = {},
): Promise<TraceService> {
  await migrateTraceDatabase(pool);
  return new TraceService(new TraceStore(pool), { ...DEFAULT_TRACE_SETTINGS, ...settings }, logger);
}
