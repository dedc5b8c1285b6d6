// `graphdock export-run <run-id>`: executes one bulk export run (what a Job pod runs). One
// attempt per process: exit 0 when the run is done (completed, or already finished or
// cancelled), 1 when the attempt failed and the run will be retried (the Job starts another
// pod, up to its backoffLimit), 3 when the run failed for good (the Job's podFailurePolicy ends
// the Job on it).
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { ConfigError, loadControlPlaneEnv, loadExportEnv } from '../common/config/index.js';
import {
  DatabaseUnreachableError,
  MigrationError,
  createPool,
  startWait,
} from '../common/db/index.js';
import { createLogger } from '../common/logging/index.js';
import {
  createDestinationService,
  createExportParts,
  type DestinationService,
} from '../exports/index.js';

export const EXIT_RETRY = 1;
export const EXIT_FAILED = 3;

const USAGE = `Usage: graphdock export-run <run-id>

Executes one bulk export run from its last committed cursor (DATABASE_URL and the api's
GRAPHDOCK_BULK_EXPORT_* settings required). Exit 0: done; 1: attempt failed, retry; 3: failed.
`;

export async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv.slice(1),
    allowPositionals: true,
    options: { help: { type: 'boolean', short: 'h' } },
  });
  const runId = positionals[0];
  if (values.help || !runId) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  const env = loadControlPlaneEnv(process.env);
  const exportEnv = loadExportEnv(process.env);
  if (!env.databaseUrl)
    throw new ConfigError('DATABASE_URL is required for `graphdock export-run`');
  const logger = createLogger({ level: env.logLevel, name: 'graphdock-export-run' });
  const pool = createPool({
    url: env.databaseUrl,
    max: 3,
    applicationName: 'graphdock-export-run',
  });
  let destinations: DestinationService;
  try {
    destinations = await createDestinationService(
      pool,
      logger,
      {
        encryptionKeys: env.bulkExport.encryptionKeys,
        allowDefaultCredentials: env.bulkExport.allowDefaultCredentials,
        s3: { requestTimeoutMs: env.bulkExport.s3TimeoutMs },
      },
      startWait(env.databaseWaitMs, logger),
    );
  } catch (err) {
    await pool.end();
    if (!(err instanceof DatabaseUnreachableError || err instanceof MigrationError)) throw err;
    // The Job's next pod tries again (its backoffLimit), as after any failed attempt.
    process.stderr.write(`graphdock: ${err.message}\n`);
    return EXIT_RETRY;
  }
  try {
    const { runner, store } = createExportParts(pool, destinations, exportEnv, logger);
    const owner = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
    // A run just failed waits out its retry delay (and a dead pod's lease) before it is claimable.
    const deadline = Date.now() + exportEnv.runner.leaseMs + exportEnv.runner.retryDelayMs + 5000;
    for (;;) {
      const outcome = await runner.execute(runId, owner);
      logger.info({ exportRun: runId, outcome }, 'export run attempt ended');
      if (outcome === 'Completed') return 0;
      if (outcome === 'Retrying') return EXIT_RETRY;
      if (outcome === 'Failed') return EXIT_FAILED;
      const run = await store.getRun(runId);
      if (!run) throw new ConfigError(`no bulk export run ${runId}`);
      if (run.status === 'Failed') return EXIT_FAILED;
      if (run.status !== 'Created' && run.status !== 'Running') return 0;
      if (Date.now() > deadline) return EXIT_RETRY;
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    await pool.end();
  }
}
