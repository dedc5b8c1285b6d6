// `graphdock operator`: parses its flags and runs the operator until SIGTERM/SIGINT.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { ConfigError, loadOperatorEnv, parseWatchNamespaces } from '../common/config/index.js';
import { createLogger } from '../common/logging/index.js';
import { startOperator } from '../operator/index.js';
import { ensurePortFree, listenFailure } from './port.js';

const require = createRequire(import.meta.url);
const VERSION = (require('../package.json') as { version: string }).version;

export const OPERATOR_USAGE = `Usage: graphdock operator --compute-id <id> [options]

Reconciles AgentDeployments placed on listeners with this compute id, and, with
GRAPHDOCK_EXPORT_JOB_IMAGE set, BulkExports into Jobs. See docs/operator.md.

Options:
  --compute-id <id>                  required
  --port <n>                         /healthz, /readyz, /metrics (default 8081)
  --host <h>                         default 0.0.0.0
  --workers <n>                      default 8
  --field-manager <name>             default graphdock-operator
  --leader-election-namespace <ns>   default $POD_NAMESPACE or "default"
  --leader-election-id <name>        default graphdock-operator-<compute-id>
  --identity <id>                    default $POD_NAME or <hostname>-<pid>
  --lease-duration-seconds <n>       default 15
  --renew-deadline-seconds <n>       default 10
  --retry-period-seconds <n>         default 2
  --progress-deadline-seconds <n>    default 600
  --control-plane-url <url>          \`graphdock api\` as agent pods reach it (default
                                     $GRAPHDOCK_CONTROL_PLANE_URL); their runtimes accept the
                                     keys of the deployment's workspace it accepts. Without it,
                                     agent pods need keys of their own or GRAPHDOCK_AUTH_TYPE=noop
  --heartbeat-seconds <n>            default 10
  --database-retain-policy <p>       Delete (default) or Retain
  --orphan-grace-seconds <n>         default 120: an api write unfinished this long is taken as
                                     abandoned and its objects removed
  --watch-namespaces <a,b>           only these namespaces (default $GRAPHDOCK_WATCH_NAMESPACES,
                                     empty: all); Listeners are always watched cluster-wide
`;

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new ConfigError(`--${name} must be a positive number, got "${value}"`);
  return n;
}

/** Lease names are DNS subdomains; a long or odd compute id is hashed. */
function leaseName(computeId: string): string {
  const name = `graphdock-operator-${computeId}`.toLowerCase();
  if (/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name)) return name;
  return `graphdock-operator-${createHash('sha256').update(computeId).digest('hex').slice(0, 32)}`;
}

function controlPlaneUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
    throw new ConfigError(`--control-plane-url must be an http(s) URL, got "${value}"`);
  return value;
}

/** --watch-namespaces, when given, replaces GRAPHDOCK_WATCH_NAMESPACES. */
function flagNamespaces(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  try {
    return parseWatchNamespaces(value);
  } catch {
    throw new ConfigError(
      `--watch-namespaces must be a comma-separated list of namespace names, got "${value}"`,
    );
  }
}

export async function runOperator(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'compute-id': { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      workers: { type: 'string' },
      'field-manager': { type: 'string' },
      'leader-election-namespace': { type: 'string' },
      'leader-election-id': { type: 'string' },
      identity: { type: 'string' },
      'lease-duration-seconds': { type: 'string' },
      'renew-deadline-seconds': { type: 'string' },
      'retry-period-seconds': { type: 'string' },
      'progress-deadline-seconds': { type: 'string' },
      'control-plane-url': { type: 'string' },
      'heartbeat-seconds': { type: 'string' },
      'database-retain-policy': { type: 'string' },
      'orphan-grace-seconds': { type: 'string' },
      'watch-namespaces': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(OPERATOR_USAGE);
    return 0;
  }
  const computeId = values['compute-id'];
  if (!computeId) throw new ConfigError('--compute-id is required for `graphdock operator`');
  const retainPolicy = values['database-retain-policy'] ?? 'Delete';
  if (retainPolicy !== 'Delete' && retainPolicy !== 'Retain')
    throw new ConfigError(
      `--database-retain-policy must be Delete or Retain, got "${retainPolicy}"`,
    );
  const port = values.port === undefined ? 8081 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`--port must be a port number, got "${values.port}"`);
  const leaseDuration = positive('lease-duration-seconds', values['lease-duration-seconds'], 15);
  const renewDeadline = positive('renew-deadline-seconds', values['renew-deadline-seconds'], 10);
  const retryPeriod = positive('retry-period-seconds', values['retry-period-seconds'], 2);
  if (!(retryPeriod < renewDeadline && renewDeadline < leaseDuration))
    throw new ConfigError(
      'leader election needs retry-period < renew-deadline < lease-duration seconds',
    );

  const host = values.host ?? '0.0.0.0';
  await ensurePortFree(port, host);
  const env = loadOperatorEnv(process.env);
  const watchNamespaces = flagNamespaces(values['watch-namespaces']) ?? env.watchNamespaces;
  const logger = createLogger({ level: env.logLevel, name: 'graphdock-operator' });
  const operator = await startOperator({
    computeId,
    watchNamespaces,
    version: VERSION,
    logger,
    port,
    host,
    workers: Math.round(positive('workers', values.workers, 8)),
    fieldManager: values['field-manager'] ?? 'graphdock-operator',
    leaderElection: {
      namespace: values['leader-election-namespace'] ?? env.podNamespace ?? 'default',
      name: values['leader-election-id'] ?? leaseName(computeId),
      identity: values.identity ?? env.podName ?? `${hostname()}-${process.pid}`,
      leaseDurationMs: leaseDuration * 1000,
      renewDeadlineMs: renewDeadline * 1000,
      retryPeriodMs: retryPeriod * 1000,
    },
    progressDeadlineSeconds: Math.round(
      positive('progress-deadline-seconds', values['progress-deadline-seconds'], 600),
    ),
    controlPlaneUrl: controlPlaneUrl(values['control-plane-url']) ?? env.controlPlaneUrl,
    heartbeatMs: positive('heartbeat-seconds', values['heartbeat-seconds'], 10) * 1000,
    retainDatabases: retainPolicy === 'Retain',
    orphanGraceMs: positive('orphan-grace-seconds', values['orphan-grace-seconds'], 120) * 1000,
    database: env.databaseUrl
      ? { adminUrl: env.databaseUrl, podHost: env.databaseHost }
      : undefined,
    exportJobs: env.exportJobs,
  }).catch((err: unknown) => {
    // Its probe port was taken since ensurePortFree looked.
    throw listenFailure(err, port, host);
  });
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  logger.info({ signal }, 'shutting down');
  await operator.stop();
  return 0;
}
