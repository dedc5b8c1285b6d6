// Wiring of bulk export over the destinations of this context: the api (service, scheduler, and
// the in-process executor) and `graphdock export-run` (one run in a Job pod) build the same parts.
import { AppError } from '../common/errors/index.js';
import type { ExportEnv } from '../common/config/index.js';
import type { Pool } from '../common/db/index.js';
import type { Logger } from '../common/logging/index.js';
import { TraceStore } from '../traces/index.js';
import type { DestinationService } from './destinations/service.js';
import { ExportRunner, type TargetResolver } from './runner.js';
import { ExportService, type DestinationCheck } from './service.js';
import { ExportStore } from './store.js';
import { ExportWorker } from './worker.js';

/** A destination opened with its current credentials, as the engine writes to it. */
export function exportTargets(destinations: DestinationService): TargetResolver {
  return async (tenantId, id) => {
    const open = await destinations.open(tenantId, id);
    const { bucket_name, include_bucket_in_prefix } = open.destination.config;
    return {
      client: open.client,
      bucket: open.bucket,
      key: (path) => open.key(path),
      close: () => open.close(),
      pathOf: (key) => (include_bucket_in_prefix ? `${bucket_name}/${key}` : key),
    };
  };
}

function destinationCheck(destinations: DestinationService): DestinationCheck {
  return async (tenantId, id) => {
    try {
      (await destinations.open(tenantId, id)).close();
      return true;
    } catch (err) {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return false;
      throw err;
    }
  };
}

export interface ExportParts {
  service: ExportService;
  store: ExportStore;
  runner: ExportRunner;
  worker: ExportWorker;
}

/** The export parts over `pool` (migrated by the destinations' migration set). */
export function createExportParts(
  pool: Pool,
  destinations: DestinationService,
  env: ExportEnv,
  logger: Logger,
  /** The Jobs executor's publication of exports to the operator, run on each worker tick. */
  publish?: (store: ExportStore) => () => Promise<void>,
): ExportParts {
  const store = new ExportStore(pool);
  const traces = new TraceStore(pool);
  const service = new ExportService(
    store,
    traces,
    destinationCheck(destinations),
    { scheduleGraceMs: env.scheduleGraceMs },
    logger,
  );
  const runner = new ExportRunner(store, traces, exportTargets(destinations), env.runner, logger);
  const worker = new ExportWorker(
    service,
    store,
    runner,
    {
      pollMs: env.pollMs,
      executeRuns: env.executor === 'api',
      concurrency: env.concurrency,
      publish: env.executor === 'jobs' ? publish?.(store) : undefined,
    },
    logger,
  );
  return { service, store, runner, worker };
}
