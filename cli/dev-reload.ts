// `graphdock dev` reloads the project when its files change, as `langgraph dev` does. A primary
// process owns the port and the store (the embedded PostgreSQL survives reloads) and runs the
// server in a cluster worker. On a change it starts a new worker with the new code; once that one
// listens on the shared port, the old one takes no more connections, finishes its runs and what
// it was asked, and stops, as a replica does: requests keep being answered, by the new code. A new
// worker that fails (a syntax error, a graph that does not compile) is reported and the previous
// one keeps serving until the next change.
import cluster, { type Worker } from 'node:cluster';
import { basename, dirname, relative, resolve } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { loadProcessEnv } from '../common/config/index.js';
import { createLogger, type Logger } from '../common/logging/index.js';
import { openDevStore } from './dev-store.js';
import { ensurePortFree } from './port.js';
import { WORKER_INDEX_ENV } from './workers.js';

/** Folders whose files are not the project's source: tools, caches, the store itself. */
const IGNORED_DIRS = new Set([
  'node_modules',
  '.git',
  '.graphdock',
  '.cache',
  'dist',
  'build',
  'coverage',
  '__pycache__',
  '.venv',
  'venv',
]);
/** What a change of reloads: code, JSON (the config included) and environment files. */
const WATCHED = /\.(?:[cm]?[jt]sx?|json)$/;
const ENV_FILE = /^\.env(?:\..+)?$/;

/** A burst of saves (an editor's format-on-save, a git checkout) reloads once. */
const DEBOUNCE_MS = 150;

export function isWatchedFile(path: string): boolean {
  const name = basename(path);
  return WATCHED.test(name) || ENV_FILE.test(name);
}

export interface DevReloadOptions {
  /** The folder of the langgraph.json: everything under it is watched. */
  projectDir: string;
  /** Given to every worker (the store's DATABASE_URL). */
  env: Record<string, string>;
  logger: Logger;
}

/**
 * Runs the dev server in a worker and replaces it on every change; resolves with the exit code
 * once SIGTERM or SIGINT has stopped it, or with the first worker's code when it fails to start.
 */
export function superviseDev({ projectDir, env, logger }: DevReloadOptions): Promise<number> {
  let serving: Worker | undefined;
  let starting: Worker | undefined;
  let changedSince = false;
  let stopping = false;
  let exitCode = 0;
  let timer: NodeJS.Timeout | undefined;

  return new Promise<number>((done) => {
    const watcher: FSWatcher = watch(projectDir, {
      ignoreInitial: true,
      ignored: (path, stats) =>
        IGNORED_DIRS.has(basename(path)) || (stats?.isFile() === true && !isWatchedFile(path)),
    });

    const finishIfDone = () => {
      if (stopping && !serving && !starting) void watcher.close().then(() => done(exitCode));
    };

    const start = () => {
      changedSince = false;
      const worker = cluster.fork({ ...env, [WORKER_INDEX_ENV]: '1' });
      starting = worker;
      worker.once('listening', () => {
        if (starting !== worker) return;
        starting = undefined;
        const previous = serving;
        serving = worker;
        if (previous) {
          logger.info({ pid: worker.process.pid }, 'reloaded: the new server answers');
          previous.process.kill('SIGTERM');
        }
        if (changedSince) start();
      });
      worker.once('exit', (code, signal) => {
        if (worker === starting) {
          starting = undefined;
          if (!serving && !stopping) {
            // The first start failed: its own stderr said why; dev ends as a single process would.
            exitCode = code ?? 1;
            stopping = true;
          } else if (!stopping) {
            logger.error(
              { code, signal },
              'reload failed; the previous server keeps serving until the next change',
            );
            if (changedSince) start();
          }
        } else if (worker === serving) {
          serving = undefined;
          if (stopping) exitCode = code ?? (signal ? 0 : 1);
          else
            logger.error({ code, signal }, 'the server stopped; waiting for a change to start it');
        }
        finishIfDone();
      });
    };

    const reload = (event: string, path: string) => {
      if (stopping) return;
      logger.info({ file: relative(projectDir, path) || path, event }, 'change seen; reloading');
      if (starting) changedSince = true;
      else start();
    };

    watcher.on('all', (event, path) => {
      if (event === 'addDir' || event === 'unlinkDir' || !isWatchedFile(path)) return;
      clearTimeout(timer);
      timer = setTimeout(() => reload(event, path), DEBOUNCE_MS);
    });
    watcher.on('error', (err) => logger.warn({ err }, 'watching the project failed'));

    // Kept installed: a terminal's Ctrl-C reaches the worker too, and a second one must not
    // end the primary while the worker drains.
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      clearTimeout(timer);
      for (const worker of [serving, starting])
        if (worker && !worker.isDead()) worker.process.kill(signal);
      finishIfDone();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);

    watcher.once('ready', () => {
      logger.info({ dir: projectDir }, 'reloading on changes to the project files');
    });
    start();
  });
}

/** The folder a config path lives in, absolute. */
export function projectDirOf(configPath: string): string {
  return dirname(resolve(configPath));
}

/**
 * The primary of a reloading `graphdock dev`: checks the port, opens the store, then supervises
 * the server's workers; the embedded PostgreSQL stops after the last worker.
 */
export async function runDevPrimary(options: {
  config: string;
  port: number | undefined;
  host: string | undefined;
}): Promise<number> {
  const env = loadProcessEnv(process.env);
  await ensurePortFree(options.port ?? 2024, options.host ?? '127.0.0.1');
  const logger = createLogger({ level: env.logLevel });
  const store = await openDevStore(env, logger);
  try {
    return await superviseDev({
      projectDir: projectDirOf(options.config),
      env: { DATABASE_URL: store.databaseUrl },
      logger,
    });
  } finally {
    await store.embedded?.stop();
  }
}
