// `graphdock <command>`: parses arguments and hands over to one area's entry point.
import { parseArgs } from 'node:util';
import cluster from 'node:cluster';
import { ConfigError, loadProcessEnv } from '../common/config/index.js';
import { argumentErrorMessage, isArgumentError } from './args.js';
import { ListenError, ensurePortFree } from './port.js';

// Each command loads only its own area: `graphdock runtime` without the Kubernetes client and the
// api, `api` without LangGraph. A pod's start-up is mostly module loading (about half of it
// went to the other commands' modules).
const runtimeCommands = () => import('./runtime-commands.js');

const USAGE = `Usage: graphdock <command> [options]

Commands:
  dev       Serve the graphs of a langgraph.json for local development, reloading when the
            project's files change. Uses DATABASE_URL when set, otherwise an embedded
            PostgreSQL persisted under .graphdock/.
  runtime   Serve the graphs in production (DATABASE_URL required).
  migrate   Apply the runtime's database migrations and exit (DATABASE_URL required).
  warm-up   Load what \`runtime\` loads (its modules, the config's graphs) and exit, no database:
            fills Node's compile cache while an image is built (docs/performance.md).
  api       Serve the control-plane API /v2/deployments and /v2/listeners (DATABASE_URL
            required; the Kubernetes API from KUBECONFIG or the in-cluster account).
  operator  Reconcile AgentDeployments into running agent servers (--compute-id required;
            \`graphdock operator --help\` lists its options).
  dockerfile
            Write the Dockerfile of an image serving a langgraph.json's graphs on the Graphdock
            image (\`graphdock dockerfile --help\`).
  build     Build that image with docker or podman (\`graphdock build --help\`).
  export-run <run-id>
            Execute one bulk export run (what the operator's Job pods run; DATABASE_URL required).

Options:
  --config <path>   langgraph.json to serve (default: ./langgraph.json)
  --port <n>        port to listen on (dev: 2024, runtime: $PORT or 8000, api: 8080)
  --host <h>        address to bind (dev: 127.0.0.1, runtime: 0.0.0.0)
  --workers <n>     runtime: server processes sharing the port, each its own replica
                    (default: $GRAPHDOCK_WORKERS or 1)
  --no-reload       dev: do not restart the server when the project's files change
  --n-jobs-per-worker <n>
                    dev, runtime: runs executed at once per process ($N_JOBS_PER_WORKER)
  --no-browser      dev: accepted as \`langgraph dev\` takes it (graphdock dev opens no browser;
                    its log gives the Studio link)
  -h, --help        show this help
`;

export async function main(argv: string[]): Promise<number> {
  // The operator has its own flags; it parses them itself.
  if (argv[0] === 'operator') return (await import('./operator-main.js')).main(argv);
  // So do the image commands (-c, -t, --base-image and an engine's own arguments).
  if (argv[0] === 'dockerfile' || argv[0] === 'build')
    return (await import('./image-commands.js')).main(argv);
  try {
    if (argv[0] === 'export-run') return await (await import('./export-commands.js')).main(argv);
    return await runCommand(argv);
  } catch (err) {
    if (isArgumentError(err)) {
      process.stderr.write(`graphdock: ${argumentErrorMessage(err)}\n${HELP_HINT}`);
      return 2;
    }
    if (err instanceof ConfigError || err instanceof ListenError || isStartupError(err)) {
      process.stderr.write(`graphdock: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

const HELP_HINT = 'Run `graphdock --help` for the commands and their options.\n';

async function runCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      workers: { type: 'string' },
      'no-reload': { type: 'boolean' },
      'n-jobs-per-worker': { type: 'string' },
      'no-browser': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals[0];
  if (values.help || !command) {
    process.stdout.write(USAGE);
    return command || values.help ? 0 : 1;
  }
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
    process.stderr.write(`graphdock: --port must be a port number, got "${values.port}"\n`);
    return 2;
  }
  const workers = values.workers === undefined ? undefined : Number(values.workers);
  if (workers !== undefined && !(Number.isInteger(workers) && workers >= 1 && workers <= 64)) {
    process.stderr.write(`graphdock: --workers must be from 1 to 64, got "${values.workers}"\n`);
    return 2;
  }
  if (values['no-browser'] && command !== 'dev') {
    process.stderr.write(`graphdock: --no-browser is an option of dev only\n`);
    return 2;
  }
  const jobs = values['n-jobs-per-worker'];
  if (jobs !== undefined) {
    if (command !== 'dev' && command !== 'runtime') {
      process.stderr.write(`graphdock: --n-jobs-per-worker is an option of dev and runtime only\n`);
      return 2;
    }
    if (!/^\d{1,6}$/.test(jobs)) {
      process.stderr.write(
        `graphdock: --n-jobs-per-worker must be a whole number, got "${jobs}"\n`,
      );
      return 2;
    }
    // The setting's own variable: checked where the environment is read, and inherited by the
    // processes a reloading dev or a multi-worker runtime forks.
    process.env.N_JOBS_PER_WORKER = jobs;
  }
  const options = { config: values.config ?? 'langgraph.json', port, host: values.host };
  switch (command) {
    case 'dev':
      // Reloading on changes, this process only owns the port and the store (cli/dev-reload.ts);
      // its workers run this same command and find themselves workers.
      if (cluster.isPrimary && !values['no-reload'])
        return await (await import('./dev-reload.js')).runDevPrimary(options);
      try {
        return await (await runtimeCommands()).runDev(options);
      } finally {
        releasePrimary();
      }
    case 'runtime': {
      // With more than one worker this process only supervises them (cli/workers.ts); the
      // forked workers run this same command and find themselves workers.
      const count = workers ?? loadProcessEnv(process.env).workers;
      if (count > 1 && cluster.isPrimary) return await runPrimary(count, options);
      try {
        return await (await runtimeCommands()).runRuntime(options);
      } finally {
        releasePrimary();
      }
    }
    case 'migrate':
      return await (await runtimeCommands()).runMigrate();
    case 'warm-up':
      return await (await runtimeCommands()).runWarmUp(options);
    case 'api':
      return await (await import('./api-commands.js')).runApi(options);
    default:
      process.stderr.write(`graphdock: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

/**
 * In a cluster worker, once its command has ended: its channel to the primary would keep it
 * alive. Not process.disconnect(), after which Node's cluster ends a worker with code 0 whatever
 * the command returned, hiding a failure from the primary.
 */
function releasePrimary(): void {
  cluster.worker?.disconnect();
}

/** `graphdock runtime` with several workers: checks what a single process would, then forks. */
async function runPrimary(
  count: number,
  options: { port: number | undefined; host: string | undefined },
): Promise<number> {
  const env = loadProcessEnv(process.env);
  if (!env.databaseUrl)
    throw new ConfigError(
      'DATABASE_URL is required for `graphdock runtime` (use `graphdock dev` for the embedded store)',
    );
  const port = options.port ?? env.port ?? 8000;
  await ensurePortFree(port, options.host ?? '0.0.0.0');
  const [{ createLogger }, { superviseWorkers }] = await Promise.all([
    import('../common/logging/index.js'),
    import('./workers.js'),
  ]);
  const logger = createLogger({ level: env.logLevel }).child({ primary: process.pid });
  logger.info({ workers: count, port }, 'starting workers');
  return superviseWorkers({ count, logger });
}

/** Errors that stop a start for a reason its message gives: their line is all a user needs. */
const STARTUP_ERRORS = new Set([
  'ConfigFileError',
  'GraphLoadError',
  'UiBundleError',
  'DatabaseUnreachableError',
  'MigrationError',
  'EmbeddedPostgresError',
]);

/**
 * By class name along the prototype chain (an `AuthLoadError` is a `ConfigFileError`): the
 * runtime's error classes live in modules this command may not have loaded.
 */
function isStartupError(err: unknown): err is Error {
  if (!(err instanceof Error)) return false;
  for (
    let proto: unknown = Object.getPrototypeOf(err);
    proto && proto !== Error.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    if (STARTUP_ERRORS.has((proto as { constructor: { name: string } }).constructor.name))
      return true;
  }
  return false;
}
