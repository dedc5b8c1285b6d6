// The runtime's composition root: config, database, graphs, services and HTTP, wired once.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { validate as isUuid } from 'uuid';
import {
  createPool,
  migrate,
  readMigrationDir,
  startWait,
  type Pool,
  type StartWait,
} from '../common/db/index.js';
import type { ProcessEnv } from '../common/config/index.js';
import type { Logger } from '../common/logging/index.js';
import { createMetricsRegistry } from '../common/metrics/index.js';
import { A2aService, resolveDefaultAssistant } from './a2a/index.js';
import { loadCustomAuth, type AuthLookups } from './auth/index.js';
import { loadCustomApp } from './custom-app/index.js';
import { AssistantService, AssistantStore, systemAssistantDefaults } from './assistants/index.js';
import {
  CheckpointStore,
  GraphdockCheckpointer,
  latestCheckpointRead,
  latestCheckpointReadOf,
} from './checkpoints/index.js';
import { CronScheduler, CronService, CronStore } from './crons/index.js';
import {
  createTraceService,
  DEV_TRACES_TENANT,
  resolveTracingTarget,
  RuntimeTracing,
  traceRoutes,
  TRACES_PREFIX,
} from '../traces/index.js';
import { applyConfigEnv, loadLanggraphConfig } from './config/index.js';
import {
  GraphRegistry,
  registerSdkLogger,
  schemaTimeoutFrom,
  TypedSchemaResolver,
} from './graphs/index.js';
import { ProtocolService } from './protocol/index.js';
import {
  buildApp,
  ControlPlaneKeyVerifier,
  HttpConnections,
  type ControlPlaneAuthSettings,
} from './http/index.js';
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
import { bundleUi } from './ui/index.js';
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
  /** Also accept the keys the control plane accepts for this workspace. */
  controlPlaneAuth?: ControlPlaneAuthSettings | undefined;
  logger: Logger;
  poolMax?: number;
  /** How long start-up waits for the database to answer (default: one try). */
  databaseWaitMs?: number;
  runs?: ProcessEnv['runs'];
  crons?: ProcessEnv['crons'];
  webhooks?: WebhookSettings;
  a2a?: ProcessEnv['a2a'];
  responseLog?: string | undefined;
  /**
   * `graphdock dev`: serve the trace store under /api/v1 and trace into it through `url` (this
   * server's own address).
   */
  devTraces?: { url: string; ttlDays?: number };
}

/**
 * At shutdown, a kept-alive connection left idle this long (from the listener's close at the
 * earliest) is closed by the server; a client sending on it before then is answered.
 */
const IDLE_CONNECTION_GRACE_MS = 2_000;
/** At shutdown, how long answers in flight may go on once the worker has stopped. */
const ANSWER_GRACE_MS = 5_000;

/** `promise`, or nothing after `ms`. */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, ms));
    }),
  ]);
  clearTimeout(timer);
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
  /**
   * Keeps serving for `ms` while every answer closes its connection, so that clients behind a
   * Service reconnect to a pod that stays before this one stops listening (see close()).
   */
  drain(ms: number): Promise<void>;
  /**
   * Stops taking new connections now; those open are still served, each closing after its
   * answer. For a process whose port another process of the same listener takes over (a
   * reloaded `graphdock dev`): what it accepted while finishing its runs, it could not execute.
   */
  stopListening(): void;
  close(): Promise<void>;
}

export async function migrateRuntimeDatabase(pool: Pool, wait?: StartWait): Promise<number[]> {
  return migrate(pool, {
    area: 'runtime',
    wait,
    migrations: readMigrationDir(MIGRATIONS_DIR),
    afterMigrations: () => new GraphdockCheckpointer(pool).setup(),
  });
}

/**
 * The server as runs see it in their config metadata: the keys and values of the official
 * servers (a self-hosted install without a LangSmith plan), the API's URL when
 * LANGGRAPH_API_URL gives one.
 */
function serverMetadata(env: NodeJS.ProcessEnv, langgraphVersion: string): Record<string, string> {
  return {
    langgraph_version: langgraphVersion,
    langgraph_plan: 'developer',
    langgraph_host: 'self-hosted',
    ...(env.LANGGRAPH_API_URL ? { langgraph_api_url: env.LANGGRAPH_API_URL } : {}),
  };
}

function packageVersion(name: string): string {
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/**
 * Loads what createRuntime loads before it needs the database: the runtime's modules (imported
 * with this one) and the config's graphs, which are then dropped. `graphdock warm-up` runs it while
 * the image is built, so that V8's compile cache (bin/module-caches.mjs) holds all of them when a
 * pod starts.
 */
export async function warmUpRuntime(configPath: string, logger: Logger): Promise<string[]> {
  const loaded = loadLanggraphConfig(configPath);
  applyConfigEnv(loaded);
  registerSdkLogger(logger.child({ context: 'graph' }));
  return (await GraphRegistry.load(loaded)).ids();
}

export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { logger } = options;
  const loaded = loadLanggraphConfig(options.configPath);
  applyConfigEnv(loaded);
  // Graph and embedding modules may take the platform logger (`getLogger()`) as they load.
  registerSdkLogger(logger.child({ context: 'graph' }));
  // Read after `env` is applied (it may set it), and before any connection: bad JSON stops here.
  const systemDefaults = systemAssistantDefaults(process.env.LANGGRAPH_CONFIG);
  // Loads the embedding function too: a bad `store.index.embed` fails before any connection.
  const storeConfig = await storeSettings(loaded);
  // A project meant to be protected is never served without its auth module.
  const authPath = loaded.config.auth?.path;
  const customAuth = authPath ? await loadCustomAuth(authPath, loaded.dir) : undefined;
  // `ui` components are bundled before any connection too: one that does not build stops start-up.
  const { ui, ui_config: uiConfig } = loaded.config;
  const uiBundles =
    ui && !loaded.config.http?.disable_ui
      ? await bundleUi(ui, loaded.dir, uiConfig?.shared)
      : undefined;
  const appPath = loaded.config.http?.app;
  const customApp = appPath ? await loadCustomApp(appPath, loaded.dir) : undefined;

  const pool = createPool({
    url: options.databaseUrl,
    max: options.poolMax ?? 20,
    applicationName: 'graphdock-runtime',
  });
  pool.on('error', (err) => logger.error({ err }, 'idle database connection failed'));
  try {
    const applied = await migrateRuntimeDatabase(
      pool,
      startWait(options.databaseWaitMs ?? 0, logger),
    );
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
      // Read after `env` is applied (langgraph.json may set them), like LANGGRAPH_CONFIG.
      ...(process.env.GRAPHDOCK_SCHEMAS_FROM_TYPES === 'false'
        ? {}
        : {
            typedSchemas: new TypedSchemaResolver({
              sources: graphs.ids().flatMap((id) => graphs.entry(id) ?? []),
              timeoutMs: schemaTimeoutFrom(process.env.LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS),
              logger: logger.child({ context: 'schemas' }),
            }),
          }),
    });
    await assistants.ensureSystemAssistants(systemDefaults);
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
    const tracesPrefix = (
      loaded.config.http?.mount_prefix ??
      process.env.MOUNT_PREFIX ??
      ''
    ).replace(/\/+$/, '');
    const traceService = options.devTraces
      ? await createTraceService(pool, logger.child({ context: 'traces' }), {
          ...(options.devTraces.ttlDays ? { defaultTtlDays: options.devTraces.ttlDays } : {}),
        })
      : undefined;
    // Under custom auth the dev trace store takes API keys, not the app's users (AppDeps
    // .platformRoutes); without a configured key, one made for this process lets its tracer in.
    const traceKeys =
      traceService && customAuth && !options.apiKeys.length
        ? [randomBytes(32).toString('hex')]
        : options.apiKeys;
    const tracingTarget = resolveTracingTarget(process.env, {
      project: 'default',
      ...(options.devTraces
        ? {
            endpoint: `${options.devTraces.url}${tracesPrefix}${TRACES_PREFIX}`,
            apiKey: traceKeys[0],
          }
        : {}),
    });
    const tracing = tracingTarget
      ? new RuntimeTracing(tracingTarget, metrics, logger.child({ context: 'tracing' }))
      : undefined;
    const runStore = new RunStore(pool, webhooks.onRunsFinished, (channel, payload) => {
      void notifier.notifyCommitted(channel, payload);
    });
    const runEvents = new RunEventLog(runStore, notifier);
    const langgraphVersion = packageVersion('@langchain/langgraph');
    const executor = new RunExecutor({
      timeoutMs: runSettings.timeoutMs,
      serverMetadata: serverMetadata(process.env, langgraphVersion),
      checkpoints: checkpointer,
      runs: runStore,
      events: runEvents,
      assistants,
      threads,
      graphs,
      logger: logger.child({ context: 'runs' }),
      tracing,
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
      tracesRuns: tracing !== undefined,
      dispatcher: worker,
      startRead: latestCheckpointRead,
    });
    worker.start();
    webhooks.start();

    const cronStore = new CronStore(pool);
    const threadStore = new ThreadStore(pool);
    const assistantStore = new AssistantStore(pool);
    const uuidOr = <T>(id: string, fallback: T, look: (id: string) => Promise<T>) =>
      isUuid(id) ? look(id) : Promise.resolve(fallback);
    const authLookups: AuthLookups = {
      thread: (id, filter) => uuidOr(id, 'missing', (i) => threadStore.visibility(i, filter)),
      visibleThreads: (ids, filter) => threadStore.visibleIds(ids.filter(isUuid), filter),
      assistant: (idOrGraph, filter) => {
        let id: string;
        try {
          id = assistants.resolveId(idOrGraph);
        } catch {
          return Promise.resolve('missing');
        }
        return uuidOr(id, 'missing', (i) => assistantStore.visibility(i, filter));
      },
      cron: (id, filter) => uuidOr(id, 'missing', (i) => cronStore.visibility(i, filter)),
      threadOfRun: async (runId) =>
        isUuid(runId) ? (await runStore.getById(runId))?.thread_id : undefined,
    };
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
      keyVerifier: options.controlPlaneAuth
        ? new ControlPlaneKeyVerifier(options.controlPlaneAuth, logger.child({ context: 'auth' }))
        : undefined,
      customAuth: customAuth && { auth: customAuth, lookups: authLookups },
      platformRoutes:
        traceService && customAuth ? { path: TRACES_PREFIX, keys: traceKeys } : undefined,
      customApp,
      authSettings: loaded.config.auth,
      http: {
        ...loaded.config.http,
        // The official servers also read the prefix from the environment.
        mount_prefix: loaded.config.http?.mount_prefix ?? process.env.MOUNT_PREFIX,
      },
      info: {
        version: GRAPHDOCK_VERSION,
        langgraphJsVersion: langgraphVersion,
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
      ui: uiBundles,
      checkDb: async () => {
        await pool.query('SELECT 1');
      },
      routeGroups: traceService
        ? [
            {
              name: 'traces',
              routes: traceRoutes(traceService, {
                version: GRAPHDOCK_VERSION,
                tenantOf: () => DEV_TRACES_TENANT,
              }),
            },
          ]
        : [],
    });

    const stopSweepers = startSweepers(
      [
        {
          name: 'threads',
          intervalMs: threadTtl.sweepIntervalMs,
          run: () => threads.sweepExpired(threadTtl.sweepLimit),
        },
        { name: 'store', intervalMs: storeConfig.sweepIntervalMs, run: () => store.sweepExpired() },
        ...(traceService
          ? [{ name: 'traces', intervalMs: 60_000, run: () => traceService.sweepExpired() }]
          : []),
        {
          // Finished runs' event logs stay only as long as a client may still join or resume.
          name: 'run events',
          intervalMs: Math.min(60_000, Math.max(1000, runSettings.eventRetentionSeconds * 500)),
          run: () => runEvents.sweep(runSettings.eventRetentionSeconds),
        },
      ],
      logger.child({ context: 'ttl' }),
    );

    const connections = new HttpConnections(app.server);

    logger.info({ graphs: graphs.ids(), config: loaded.path }, 'runtime ready');
    if (runSettings.concurrency === 0)
      logger.warn(
        'N_JOBS_PER_WORKER=0: this process executes no runs; they wait for a replica that does',
      );
    return {
      app,
      pool,
      drain: async (ms) => {
        // Idle connections are left open: closing one races a client's next request on it
        // (seen as failed requests through a Service); each closes after its next answer.
        connections.startDraining();
        if (ms > 0) await new Promise((r) => setTimeout(r, ms));
      },
      stopListening: () => void connections.close(IDLE_CONNECTION_GRACE_MS),
      close: async () => {
        const closing = Date.now();
        await cronScheduler.stop();
        stopSweepers();
        await worker.stop(runSettings.shutdownGraceMs);
        // Traces of the last runs, before this server (the dev store) stops taking them.
        await tracing?.flush();
        // No new connections; those open are still served, each closing after its answer.
        const served = connections.close(IDLE_CONNECTION_GRACE_MS);
        // Answers in flight (a wait for a run another replica executes) may still end well
        // within the grace period, and a little after the worker stopped.
        await within(
          served,
          Math.min(closing + runSettings.shutdownGraceMs - Date.now(), ANSWER_GRACE_MS),
        );
        // Runs still here were handed back: their streams end, to be resumed elsewhere.
        runEvents.closeStreams();
        // A wait for a run's end gets it, within the grace period, wherever the run goes on.
        await within(runEvents.waitsEnded(), closing + runSettings.shutdownGraceMs - Date.now());
        runEvents.close();
        // The streams and waits just ended send their last bytes and close their connections.
        await within(served, IDLE_CONNECTION_GRACE_MS);
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
