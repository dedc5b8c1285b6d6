// Bulk export: destinations (S3 and S3-compatible buckets, validated by a test write, their
// credentials sealed at rest) and exports of a project's runs to them as Parquet (Hive layout),
// split into one run per day, executed in the api or as Kubernetes Jobs (`graphdock export-run`);
// the control-plane api mounts both under /api/v1/bulk-exports.
import { join } from 'node:path';
import { migrate, readMigrationDir, type Pool, type StartWait } from '../common/db/index.js';
import type { Logger } from '../common/logging/index.js';
import { CredentialCipher, parseKeyring } from './destinations/crypto.js';
import { DEFAULT_S3_SETTINGS, type S3Settings } from './destinations/s3.js';
import { DestinationService } from './destinations/service.js';
import { DestinationStore } from './destinations/store.js';

export {
  CredentialCipher,
  KeyringError,
  parseKeyring,
  type EncryptionKey,
  type Sealed,
} from './destinations/crypto.js';
export {
  DESTINATION_ERRORS,
  DEFAULT_S3_SETTINGS,
  normalizePrefix,
  s3Target,
  testWrite,
  type S3Settings,
  type S3Target,
} from './destinations/s3.js';
export {
  DestinationService,
  MANAGE_PERMISSION,
  type Caller,
  type DestinationSettings,
  type OpenDestination,
} from './destinations/service.js';
export { DestinationStore, type DestinationRow } from './destinations/store.js';
export {
  Destination,
  DestinationConfig,
  DestinationCreateRequest,
  DestinationCredentials,
  DestinationPatchRequest,
} from './destinations/schemas.js';
export {
  destinationRoutes,
  DESTINATIONS_PATH,
  type DestinationRouteOptions,
} from './destinations/routes.js';

export {
  ExportService,
  DEFAULT_EXPORT_SERVICE_SETTINGS,
  type DestinationCheck,
} from './service.js';
export { ExportStore, type ExportRow as ExportRecord } from './store.js';
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

export { createExportParts, exportTargets, type ExportParts } from './compose.js';

const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');

export function migrateExportsDatabase(pool: Pool, wait?: StartWait): Promise<number[]> {
  return migrate(pool, { area: 'exports', migrations: readMigrationDir(MIGRATIONS_DIR), wait });
}

export interface ExportSettings {
  /** `id:base64,...`, the newest key first (GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS). */
  encryptionKeys: string | undefined;
  /** Self-hosted: destinations may omit credentials (GRAPHDOCK_BULK_EXPORT_DEFAULT_CREDENTIALS). */
  allowDefaultCredentials: boolean;
  s3?: Partial<S3Settings>;
}

/** The destination service over `pool`, its tables migrated. Throws KeyringError on bad keys. */
export async function createDestinationService(
  pool: Pool,
  logger: Logger,
  settings: ExportSettings,
  /** When this is the process's first use of the database: how long to wait for it. */
  wait?: StartWait,
): Promise<DestinationService> {
  const cipher = new CredentialCipher(parseKeyring(settings.encryptionKeys ?? ''));
  await migrateExportsDatabase(pool, wait);
  return new DestinationService(
    new DestinationStore(pool),
    cipher,
    {
      allowDefaultCredentials: settings.allowDefaultCredentials,
      s3: { ...DEFAULT_S3_SETTINGS, ...settings.s3 },
    },
    logger,
  );
}
