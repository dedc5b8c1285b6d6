// The runtime's composition root: config, database, graphs, services and HTTP, wired once.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createPool, migrate, readMigrationDir, type Pool } from '../common/db/index.js';
import type { ProcessEnv } from '../common/config/index.js';
import type { Logger } from '../common/logging/index.js';
import { createMetricsRegistry } from '../common/metrics/index.js';
import { A2aService, resolveDefaultAssistant } from './a2a/index.js';
import { AssistantService, AssistantStore } from './assistants/index.js';
import {
  CheckpointStore,
  GraphdockCheckpointer,
  latestCheckpointRead,
  latestCheckpointReadOf,
} from './checkpoints/index.js';
import { CronScheduler, CronService, CronStore } from './crons/index.js';
import { applyConfigEnv, loadLanggraphConfig } from './config/index.js';
import { GraphRegistry } from './graphs/index.js';
import { ProtocolService } from './protocol/index.js';
import { buildApp } from './http/index.js';
import {
  Notifier,
  RunEventLog,
  RunExecutor,
  RunService,
  RunStore,
  RunWorker,
  headerSelector,
} from './runs/index.js';
import { GraphdockStore, ItemStore, StoreService, storeSettings } from './store/index.js';
import { ThreadService, ThreadStore } from './threads/index.js';
import { checkpointerTtlSettings, startSweepers } from './ttl/index.js';
import {
  createWebhookModule,
  DEFAULT_WEBHOOK_SETTINGS,
  type WebhookSettings,
} from './webhooks/index.js';

const require = createRequire(import.meta.url);
const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');
export const GRAPHDOCK_VERSION = (require('../package.json') as { version: string }).version;

export interface RuntimeOptions {
  configPath: string;
  databaseUrl: string;
  apiKeys: string[];
  logger: Logger;
  poolMax?: number;
  runs?: ProcessEnv['runs'];
  crons?: ProcessEnv['crons'];
  webhooks?: WebhookSettings;
  a2a?: ProcessEnv['a2a'];
  responseLog?: string | undefined;
}

const DEFAULT_RUNS = {
  concurrency: 10,
  shutdownGraceMs: 180_000,
  maxAttempts: 3,
  leaseSeconds: 30,
  timeoutMs: 3_600_000,
  eventRetentionSeconds: 120,
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
  // Loads the embedding function too: a bad `store.index.embed` fails before any connection.
  const storeConfig = await storeSettings(loaded);

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
    const store = new StoreService({ pool, items: new ItemStore(pool), settings: storeConfig });
    const graphs = await GraphRegistry.load(loaded, checkpointer, new GraphdockStore(store));
    const threadTtl = checkpointerTtlSettings(loaded);
    const threads = new ThreadService({
      pool,
      store: new ThreadStore(pool),
      checkpoints: new CheckpointStore(),
      graphs,
      logger: logger.child({ context: 'threads' }),
      defaultTtl: threadTtl.defaultTtl,
    });
    const assistants = new AssistantService({
      pool,
      store: new AssistantStore(pool),
      graphs,
      threads,
      logger: logger.child({ context: 'assistants' }),
    });
    await assistants.ensureSystemAssistants();
    // Checked before anything else starts: a default that names nothing stops start-up.
    const a2aDefault = await resolveDefaultAssistant(
      options.a2a?.defaultAssistant,
      graphs.ids(),
      (id) => assistants.get(id),
    );

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
    const runStore = new RunStore(pool, webhooks.onRunsFinished, (channel, payload) => {
      void notifier.notifyCommitted(channel, payload);
    });
    const runEvents = new RunEventLog(runStore, notifier);
    const executor = new RunExecutor({
      timeoutMs: runSettings.timeoutMs,
      checkpoints: checkpointer,
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
      { ...runSettings, pollMs: 1000, claimRead: latestCheckpointReadOf },
      logger.child({ context: 'worker' }),
    );
    const runs = new RunService({
      pool,
      runs: runStore,
      events: runEvents,
      notifier,
      assistants,
      threads,
      configurableHeaders: headerSelector(loaded.config.http?.configurable_headers),
      validateWebhook: (url) => webhooks.validator.validate(url),
      dispatcher: worker,
      startRead: latestCheckpointRead,
    });
    worker.start();
    webhooks.start();

    const cronStore = new CronStore(pool);
    const crons = new CronService({
      pool,
      store: cronStore,
      assistants,
      threads,
      validateWebhook: (url, loc) => webhooks.validator.validate(url, loc),
    });
    const cronScheduler = new CronScheduler(
      pool,
      cronStore,
      runs,
      options.crons ?? { tickMs: 1000 },
      logger.child({ context: 'crons' }),
    );
    cronScheduler.start();

    const app = await buildApp({
      logger,
      responseLog: options.responseLog,
      metrics,
      apiKeys: options.apiKeys,
      http: {
        ...loaded.config.http,
        // The official servers also read the prefix from the environment.
        mount_prefix: loaded.config.http?.mount_prefix ?? process.env.MOUNT_PREFIX,
      },
      info: {
        version: GRAPHDOCK_VERSION,
        langgraphJsVersion: packageVersion('@langchain/langgraph'),
      },
      assistants,
      threads,
      runs,
      runEvents,
      protocol: new ProtocolService({
        runs,
        runStore,
        events: runEvents,
        notifier,
        threads,
      }),
      a2a: new A2aService({
        runs,
        events: runEvents,
        assistants,
        defaultAssistant: a2aDefault,
      }),
      crons,
      store,
      webhooks: webhooks.deliveries,
      checkDb: async () => {
        await pool.query('SELECT 1');
      },
    });

    const stopSweepers = startSweepers(
      [
        {
          name: 'threads',
          intervalMs: threadTtl.sweepIntervalMs,
          run: () => threads.sweepExpired(threadTtl.sweepLimit),
        },
        { name: 'store', intervalMs: storeConfig.sweepIntervalMs, run: () => store.sweepExpired() },
        {
          // Finished runs' event logs stay only as long as a client may still join or resume.
          name: 'run events',
          intervalMs: Math.min(60_000, Math.max(1000, runSettings.eventRetentionSeconds * 500)),
          run: () => runEvents.sweep(runSettings.eventRetentionSeconds),
        },
      ],
      logger.child({ context: 'ttl' }),
    );

    logger.info({ graphs: graphs.ids(), config: loaded.path }, 'runtime ready');
    return {
      app,
      pool,
      close: async () => {
        await cronScheduler.stop();
        stopSweepers();
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
