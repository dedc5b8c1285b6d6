// The runtime's commands: `dev`, `runtime` and `migrate`.
import module from 'node:module';
import { ConfigError, loadProcessEnv } from '../common/config/index.js';
import { createPool, startWait } from '../common/db/index.js';
import { createLogger, type Logger } from '../common/logging/index.js';
import { startIdleTrim } from '../common/memory/index.js';
import {
  createRuntime,
  migrateRuntimeDatabase,
  warmUpRuntime,
  type Runtime,
} from '../runtime/index.js';
import { openDevStore } from './dev-store.js';
import { ensurePortFree, listenFailure } from './port.js';
import { workerIndex } from './workers.js';

export interface ServeOptions {
  config: string;
  port: number | undefined;
  host: string | undefined;
}

/**
 * Resolves when SIGTERM or SIGINT arrives. A cluster worker keeps ignoring later ones: a
 * terminal's Ctrl-C reaches it both directly and from its primary, and must not kill it mid-drain.
 */
function shutdownSignal(): Promise<NodeJS.Signals> {
  const on = workerIndex() === undefined ? process.once.bind(process) : process.on.bind(process);
  return new Promise((resolve) => {
    on('SIGTERM', () => resolve('SIGTERM'));
    on('SIGINT', () => resolve('SIGINT'));
  });
}

/** Test support: an unhandled rejection ends the process with a code of its own. */
function exitOnUnhandledRejection(code: number | undefined, logger: Logger): void {
  if (code === undefined) return;
  process.on('unhandledRejection', (reason) => {
    logger.fatal({ err: reason }, 'unhandled promise rejection');
    process.exit(code);
  });
}

interface ServeSettings {
  drainMs: number;
  idleTrimSeconds: number;
  onStop?: () => Promise<void>;
  /** On the stop signal, take no new connection (a dev worker: another one has the port). */
  handOverPort?: boolean;
  /** `graphdock dev`: say where Studio and the API docs open this server, as `langgraph dev` does. */
  announceStudio?: boolean;
}

/** LangSmith Studio, pointed at a server the browser reaches at `address`. */
const studioUrl = (address: string) => `https://smith.langchain.com/studio?baseUrl=${address}`;

async function serve(
  runtime: Runtime,
  port: number,
  host: string,
  logger: Logger,
  { drainMs, idleTrimSeconds, onStop, handOverPort, announceStudio }: ServeSettings,
) {
  let address: string;
  try {
    address = await runtime.app.listen({ port, host });
  } catch (err) {
    // Taken since ensurePortFree looked: stop the workers and connections before saying so.
    await runtime.close();
    throw listenFailure(err, port, host);
  }
  logger.info(
    announceStudio ? { address, studio: studioUrl(address), docs: `${address}/docs` } : { address },
    'listening',
  );
  const idleTrim = startIdleTrim({ idleSeconds: idleTrimSeconds, logger });
  const signal = await shutdownSignal();
  idleTrim.stop();
  logger.info({ signal, drainMs }, 'shutting down');
  if (handOverPort) runtime.stopListening();
  await runtime.drain(drainMs);
  await runtime.close();
  await onStop?.();
  return 0;
}

export async function runRuntime(options: ServeOptions): Promise<number> {
  const env = loadProcessEnv(process.env);
  if (!env.databaseUrl)
    throw new ConfigError(
      'DATABASE_URL is required for `graphdock runtime` (use `graphdock dev` for the embedded store)',
    );
  const port = options.port ?? env.port ?? 8000;
  const host = options.host ?? '0.0.0.0';
  // A cluster worker shares the port its primary checked and holds.
  const worker = workerIndex();
  if (worker === undefined) await ensurePortFree(port, host);
  const root = createLogger({ level: env.logLevel });
  const logger = worker === undefined ? root : root.child({ worker, pid: process.pid });
  exitOnUnhandledRejection(env.unhandledRejectionExitCode, logger);
  if (env.authDisabled) logger.warn('GRAPHDOCK_AUTH_TYPE=noop: serving without authentication');
  else if (env.controlPlaneAuth)
    logger.info(
      { controlPlane: env.controlPlaneAuth.url, workspace: env.controlPlaneAuth.workspaceId },
      'API keys are checked with the control plane',
    );
  const runtime = await createRuntime({
    configPath: options.config,
    databaseUrl: env.databaseUrl,
    apiKeys: env.apiKeys,
    controlPlaneAuth: env.controlPlaneAuth,
    logger,
    poolMax: env.poolMax,
    databaseWaitMs: env.databaseWaitMs,
    runs: env.runs,
    crons: env.crons,
    webhooks: env.webhooks,
    a2a: env.a2a,
    responseLog: env.responseLog,
  });
  return serve(runtime, port, host, logger, {
    drainMs: env.shutdownDrainMs,
    idleTrimSeconds: env.idleTrimSeconds,
  });
}

export async function runDev(options: ServeOptions): Promise<number> {
  const env = loadProcessEnv(process.env);
  const port = options.port ?? 2024;
  const host = options.host ?? '127.0.0.1';
  // A reloading primary's worker: the primary checked the port and holds it, and owns the store.
  const worker = workerIndex() !== undefined;
  // Before the embedded PostgreSQL starts: a taken port should cost nothing.
  if (!worker) await ensurePortFree(port, host);
  const root = createLogger({ level: env.logLevel });
  const logger = worker ? root.child({ pid: process.pid }) : root;
  exitOnUnhandledRejection(env.unhandledRejectionExitCode, logger);
  const { databaseUrl, embedded } = await openDevStore(env, logger);
  if (!env.apiKeys.length && !env.controlPlaneAuth)
    logger.warn('no API keys configured: serving without authentication');
  try {
    const runtime = await createRuntime({
      configPath: options.config,
      databaseUrl,
      apiKeys: env.apiKeys,
      controlPlaneAuth: env.controlPlaneAuth,
      logger,
      poolMax: env.poolMax,
      databaseWaitMs: env.databaseWaitMs,
      runs: env.runs,
      crons: env.crons,
      webhooks: env.webhooks,
      a2a: env.a2a,
      responseLog: env.responseLog,
      // The dev server is its own trace store (see docs/traces.md).
      devTraces: { url: `http://${selfHost(host)}:${port}` },
    });
    return await serve(runtime, port, host, logger, {
      drainMs: env.shutdownDrainMs,
      idleTrimSeconds: env.idleTrimSeconds,
      onStop: () => embedded?.stop() ?? Promise.resolve(),
      // Replaced by a reload, new requests go to the new worker: one accepted here meanwhile
      // (a run to wait for) could only be handed over when this one stops.
      handOverPort: worker,
      announceStudio: true,
    });
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
}

/** Where this process reaches its own listener. */
function selfHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

export async function runMigrate(): Promise<number> {
  const env = loadProcessEnv(process.env);
  if (!env.databaseUrl) throw new ConfigError('DATABASE_URL is required for `graphdock migrate`');
  const logger = createLogger({ level: env.logLevel });
  const pool = createPool({ url: env.databaseUrl, max: 2 });
  try {
    const applied = await migrateRuntimeDatabase(pool, startWait(env.databaseWaitMs, logger));
    logger.info({ applied }, applied.length ? 'migrations applied' : 'database already up to date');
    return 0;
  } finally {
    await pool.end();
  }
}

/**
 * `graphdock warm-up`: loads the runtime's modules and the config's graphs, then exits, with no
 * database. Its use is filling V8's compile cache while an image is built (see the Dockerfile).
 */
export async function runWarmUp(options: Pick<ServeOptions, 'config'>): Promise<number> {
  const env = loadProcessEnv(process.env);
  const logger = createLogger({ level: env.logLevel });
  const graphs = await warmUpRuntime(options.config, logger);
  // Node.js 22.1+ (the typings are Node 20's). Written at exit anyway; now, so that it is on disk
  // when the command returns.
  const cache = module as { flushCompileCache?: () => void; getCompileCacheDir?: () => string };
  cache.flushCompileCache?.();
  logger.info({ graphs, compileCache: cache.getCompileCacheDir?.() }, 'modules loaded');
  return 0;
}
