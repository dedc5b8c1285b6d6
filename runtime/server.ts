// The runtime's composition root: config, database, graphs, services and HTTP, wired once.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createPool, migrate, readMigrationDir, type Pool } from '../common/db/index.js';
import type { Logger } from '../common/logging/index.js';
import { createMetricsRegistry } from '../common/metrics/index.js';
import { AssistantService, AssistantStore } from './assistants/index.js';
import { CheckpointStore, GraphdockCheckpointer } from './checkpoints/index.js';
import { applyConfigEnv, loadLanggraphConfig } from './config/index.js';
import { GraphRegistry } from './graphs/index.js';
import { buildApp } from './http/index.js';
import {
  Notifier,
  RunEventLog,
  RunExecutor,
  RunService,
  RunStore,
  RunWorker,
} from './runs/index.js';
import { ThreadService, ThreadStore } from './threads/index.js';
import {
  createWebhookModule,
  DEFAULT_WEBHOOK_SETTINGS,
  type WebhookSettings,
} from './webhooks/index.js';

const require = createRequire(import.meta.url);
const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');
const TTL_SWEEP_INTERVAL_MS = 60_000;
export const GRAPHDOCK_VERSION = (require('../package.json') as { version: string }).version;

export interface RuntimeOptions {
  configPath: string;
  databaseUrl: string;
  apiKeys: string[];
  logger: Logger;
  poolMax?: number;
  runs?: {
    concurrency: number;
    shutdownGraceMs: number;
    maxAttempts: number;
    leaseSeconds: number;
    timeoutMs: number;
  };
  webhooks?: WebhookSettings;
}

const DEFAULT_RUNS = {
  concurrency: 10,
  shutdownGraceMs: 180_000,
  maxAttempts: 3,
  leaseSeconds: 30,
  timeoutMs: 3_600_000,
};

export interface Runtime {
  app: FastifyInstance;
  pool: Pool;
  close(): Promise<void>;
}

export async function migrateRuntimeDatabase(pool: Pool): Promise<number[]> {
  return migrate(pool, {
    area: 'runtime',
    migrations: readMigrationDir(MIGRATIONS_DIR),
    afterMigrations: () => new GraphdockCheckpointer(pool).setup(),
  });
}

function packageVersion(name: string): string {
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { logger } = options;
  const loaded = loadLanggraphConfig(options.configPath);
  applyConfigEnv(loaded);

  const pool = createPool({
    url: options.databaseUrl,
    max: options.poolMax ?? 20,
    applicationName: 'graphdock-runtime',
  });
  pool.on('error', (err) => logger.error({ err }, 'idle database connection failed'));
  try {
    const applied = await migrateRuntimeDatabase(pool);
    if (applied.length) logger.info({ applied }, 'database migrated');

    const checkpointer = new GraphdockCheckpointer(pool);
    const graphs = await GraphRegistry.load(loaded, checkpointer);
    const threads = new ThreadService({
      pool,
      store: new ThreadStore(pool),
      checkpoints: new CheckpointStore(),
      graphs,
      logger: logger.child({ context: 'threads' }),
    });
    const assistants = new AssistantService({
      pool,
      store: new AssistantStore(pool),
      graphs,
      threads,
      logger: logger.child({ context: 'assistants' }),
    });
    await assistants.ensureSystemAssistants();

    const runSettings = options.runs ?? DEFAULT_RUNS;
    const notifier = new Notifier(options.databaseUrl, pool, logger.child({ context: 'notify' }));
    const metrics = createMetricsRegistry();
    // Before anything holds a connection open: bad webhook configuration stops start-up here.
    const webhooks = createWebhookModule({
      pool,
      notifier,
      config: loaded.config,
      settings: options.webhooks ?? DEFAULT_WEBHOOK_SETTINGS,
      env: process.env,
      threadValues: async (threadId) => (await threads.getRow(threadId)).values,
      runExists: async (runId, threadId) =>
        (threadId ? await runStore.get(threadId, runId) : await runStore.getById(runId)) !==
        undefined,
      userAgent: `graphdock/${GRAPHDOCK_VERSION}`,
      metrics,
      logger: logger.child({ context: 'webhooks' }),
    });
    await notifier.start();
    const runStore = new RunStore(pool, webhooks.onRunsFinished);
    const runEvents = new RunEventLog(runStore, notifier);
    const runs = new RunService({
      pool,
      runs: runStore,
      events: runEvents,
      notifier,
      assistants,
      threads,
      validateWebhook: (url) => webhooks.validator.validate(url),
    });
    const executor = new RunExecutor({
      timeoutMs: runSettings.timeoutMs,
      checkpointsIdle: (threadId) => checkpointer.idle(threadId),
      runs: runStore,
      events: runEvents,
      assistants,
      threads,
      graphs,
      logger: logger.child({ context: 'runs' }),
    });
    const worker = new RunWorker(
      runStore,
      executor,
      notifier,
      { ...runSettings, pollMs: 1000 },
      logger.child({ context: 'worker' }),
    );
    worker.start();
    webhooks.start();

    const app = await buildApp({
      logger,
      metrics,
      apiKeys: options.apiKeys,
      http: loaded.config.http ?? {},
      info: {
        version: GRAPHDOCK_VERSION,
        langgraphJsVersion: packageVersion('@langchain/langgraph'),
      },
      assistants,
      threads,
      runs,
      runEvents,
      webhooks: webhooks.deliveries,
      checkDb: async () => {
        await pool.query('SELECT 1');
      },
    });

    const sweeper = setInterval(() => {
      threads.sweepExpired().then(
        (n) => n && logger.info({ swept: n }, 'expired threads swept'),
        (err: unknown) => logger.warn({ err }, 'thread TTL sweep failed'),
      );
    }, TTL_SWEEP_INTERVAL_MS);
    sweeper.unref();

    logger.info({ graphs: graphs.ids(), config: loaded.path }, 'runtime ready');
    return {
      app,
      pool,
      close: async () => {
        clearInterval(sweeper);
        await worker.stop(runSettings.shutdownGraceMs);
        await app.close();
        await webhooks.stop(5_000);
        await notifier.stop();
        await pool.end();
      },
    };
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}
