// Settings of bulk export runs (the api's in-process executor and scheduler, and
// `graphdock export-run` in a Job pod), read from the process environment once at start-up.
import { z } from 'zod';
import { ConfigError } from './index.js';

const int = (min: number, dflt: number) => z.coerce.number().int().min(min).default(dflt);

const ExportEnvSchema = z.object({
  /** `api`: the api executes export runs itself; `jobs`: the operator runs each as a Job. */
  GRAPHDOCK_EXPORT_EXECUTOR: z.enum(['api', 'jobs']).default('api'),
  /** Where the api writes BulkExport resources (jobs executor); defaults to POD_NAMESPACE. */
  GRAPHDOCK_EXPORT_JOBS_NAMESPACE: z.string().min(1).max(63).optional(),
  POD_NAMESPACE: z.string().min(1).max(63).optional(),
  GRAPHDOCK_EXPORT_CONCURRENCY: int(1, 1),
  GRAPHDOCK_EXPORT_POLL_MS: int(10, 1000),
  GRAPHDOCK_EXPORT_ROWS_PER_FILE: int(1, 250_000),
  GRAPHDOCK_EXPORT_ROW_GROUP_SIZE: int(1, 10_000),
  GRAPHDOCK_EXPORT_MAX_ATTEMPTS: int(1, 20),
  GRAPHDOCK_EXPORT_RETRY_DELAY_MS: int(0, 30_000),
  GRAPHDOCK_EXPORT_LEASE_MS: int(1000, 60_000),
  GRAPHDOCK_EXPORT_SCHEDULE_GRACE_MS: int(0, 600_000),
  /** Multipart part size in bytes (S3's minimum is 5 MiB). */
  GRAPHDOCK_EXPORT_PART_SIZE: int(5 * 1024 * 1024, 8 * 1024 * 1024),
  /** Where a run keeps its file's CSV and Parquet while they are encoded and uploaded. */
  GRAPHDOCK_EXPORT_TEMP_DIR: z.string().min(1).optional(),
});

export interface ExportRunnerSettings {
  /** Rows per Parquet file (one committed cursor step). */
  rowsPerFile: number;
  /** Rows per row group, which is also the page read from the trace store. */
  rowGroupSize: number;
  /** Attempts per run before it fails (the first one included). */
  maxAttempts: number;
  /** How long a claim holds without renewal; renewed at a third of it. */
  leaseMs: number;
  /** Wait before a failed run may be claimed again. */
  retryDelayMs: number;
  /** Multipart part size (at least 5 MiB) and parts in flight. */
  partSize: number;
  queueSize: number;
  /** The folder of a run's temporary files (the system's temp folder when unset). */
  tempDir?: string;
}

export interface ExportEnv {
  executor: 'api' | 'jobs';
  /** The namespace of the BulkExport resources and their Jobs (set with the jobs executor). */
  jobsNamespace: string | undefined;
  concurrency: number;
  pollMs: number;
  scheduleGraceMs: number;
  runner: ExportRunnerSettings;
}

export function loadExportEnv(env: NodeJS.ProcessEnv): Readonly<ExportEnv> {
  const parsed = ExportEnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const jobsNamespace = e.GRAPHDOCK_EXPORT_JOBS_NAMESPACE ?? e.POD_NAMESPACE;
  // Without a namespace the api could not say where the operator should run the Jobs.
  if (e.GRAPHDOCK_EXPORT_EXECUTOR === 'jobs' && !jobsNamespace)
    throw new ConfigError(
      'GRAPHDOCK_EXPORT_EXECUTOR=jobs needs GRAPHDOCK_EXPORT_JOBS_NAMESPACE (or POD_NAMESPACE): ' +
        'the namespace of the BulkExport resources the operator turns into Jobs',
    );
  return Object.freeze({
    executor: e.GRAPHDOCK_EXPORT_EXECUTOR,
    jobsNamespace: e.GRAPHDOCK_EXPORT_EXECUTOR === 'jobs' ? jobsNamespace : undefined,
    concurrency: e.GRAPHDOCK_EXPORT_CONCURRENCY,
    pollMs: e.GRAPHDOCK_EXPORT_POLL_MS,
    scheduleGraceMs: e.GRAPHDOCK_EXPORT_SCHEDULE_GRACE_MS,
    runner: {
      rowsPerFile: e.GRAPHDOCK_EXPORT_ROWS_PER_FILE,
      rowGroupSize: e.GRAPHDOCK_EXPORT_ROW_GROUP_SIZE,
      maxAttempts: e.GRAPHDOCK_EXPORT_MAX_ATTEMPTS,
      leaseMs: e.GRAPHDOCK_EXPORT_LEASE_MS,
      retryDelayMs: e.GRAPHDOCK_EXPORT_RETRY_DELAY_MS,
      partSize: e.GRAPHDOCK_EXPORT_PART_SIZE,
      queueSize: 2,
      tempDir: e.GRAPHDOCK_EXPORT_TEMP_DIR,
    },
  });
}
