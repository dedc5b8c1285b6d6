// Bulk export: exports of a project's runs to S3 destinations as Parquet (Hive layout), split
// into one run per day, executed in the api or as Kubernetes Jobs (`graphdock export-run`).
import { join } from 'node:path';
import { migrate, readMigrationDir, type Pool } from '../common/db/index.js';

export {
  ExportService,
  DEFAULT_EXPORT_SERVICE_SETTINGS,
  type DestinationCheck,
} from './service.js';
export { ExportStore } from './store.js';
export {
  ExportRunner,
  DEFAULT_RUNNER_SETTINGS,
  type ExportTarget,
  type TargetResolver,
  type RunnerSettings,
  type RunOutcome,
} from './runner.js';
export { ExportWorker, type ExportWorkerSettings } from './worker.js';
export { exportRoutes, EXPORTS_PREFIX } from './routes.js';
export { EXPORT_FIELDS, ParquetRunWriter, type Compression, type ExportRow } from './parquet.js';
export { dayWindows, dueWindows, runFolder, fileName } from './model.js';

const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');

export function migrateExportsDatabase(pool: Pool): Promise<number[]> {
  return migrate(pool, { area: 'exports', migrations: readMigrationDir(MIGRATIONS_DIR) });
}
