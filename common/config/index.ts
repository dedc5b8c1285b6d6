// The process environment, parsed once at start-up. Nothing else reads `process.env` for settings.
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const listOfKeys = z
  .string()
  .optional()
  .transform((v) => (v ?? '').split(/[\s,]+/).filter(Boolean));

const EnvSchema = z.object({
  DATABASE_URL: z.string().min(1).optional(),
  // The runtime's port when --port is not given (as the official server's PORT).
  PORT: z.coerce.number().int().min(0).max(65535).optional(),
  GRAPHDOCK_API_KEYS: listOfKeys,
  GRAPHDOCK_API_KEYS_FILE: z.string().min(1).optional(),
  // Set by the operator on deployed runtimes: keys are checked with this control plane.
  GRAPHDOCK_CONTROL_PLANE_URL: z.string().url().optional(),
  GRAPHDOCK_WORKSPACE_ID: z.string().uuid().optional(),
  // Set by the operator: refuse to start without a way to check keys (no silent open server).
  GRAPHDOCK_AUTH_REQUIRED: z.enum(['true', 'false']).default('false'),
  // A deployment's explicit opt-out (one of its secrets): serve without authentication.
  GRAPHDOCK_AUTH_TYPE: z.enum(['noop', 'api-keys']).default('api-keys'),
  GRAPHDOCK_HOME: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_POOL_MAX: z.coerce.number().int().positive().default(20),
  // How long start-up keeps trying a database that does not answer yet (0: one try).
  GRAPHDOCK_DATABASE_WAIT_SECS: z.coerce.number().nonnegative().max(3600).default(30),
  // 0: a replica that serves the API only; runs execute on replicas with slots (as the official
  // chart's API pods, with the queue split off).
  N_JOBS_PER_WORKER: z.coerce.number().int().nonnegative().default(10),
  // `graphdock runtime`'s processes in one pod, each its own replica (the operator sets it from
  // the deployment's CPU).
  GRAPHDOCK_WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS: z.coerce.number().nonnegative().default(180),
  BG_JOB_MAX_ATTEMPTS: z.coerce.number().int().positive().default(3),
  BG_JOB_TIMEOUT_SECS: z.coerce.number().positive().default(3600),
  GRAPHDOCK_RUN_LEASE_SECS: z.coerce.number().positive().default(30),
  GRAPHDOCK_SHUTDOWN_DRAIN_SECS: z.coerce.number().nonnegative().default(0),
  // Seconds without work before an idle server gives memory back (0: never).
  GRAPHDOCK_IDLE_TRIM_SECS: z.coerce.number().nonnegative().default(60),
  RESUMABLE_STREAM_TTL_SECONDS: z.coerce.number().positive().default(120),
  GRAPHDOCK_CRON_TICK_MS: z.coerce.number().int().positive().default(1000),
  GRAPHDOCK_WEBHOOK_SECRET: z.string().optional(),
  GRAPHDOCK_WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().positive().default(5),
  GRAPHDOCK_WEBHOOK_CONNECT_TIMEOUT_SECS: z.coerce.number().positive().default(5),
  GRAPHDOCK_WEBHOOK_TIMEOUT_SECS: z.coerce.number().positive().default(30),
  GRAPHDOCK_WEBHOOK_RETRY_BASE_MS: z.coerce.number().positive().default(1000),
  GRAPHDOCK_WEBHOOK_RETRY_MAX_SECS: z.coerce.number().positive().default(600),
  GRAPHDOCK_WEBHOOK_CONCURRENCY: z.coerce.number().int().positive().default(16),
  GRAPHDOCK_A2A_DEFAULT_ASSISTANT: z.string().min(1).optional(),
  GRAPHDOCK_RESPONSE_LOG: z.string().min(1).optional(),
  GRAPHDOCK_UNHANDLED_REJECTION_EXIT_CODE: z.coerce.number().int().min(1).max(255).optional(),
});

export interface ProcessEnv {
  databaseUrl: string | undefined;
  /** `graphdock runtime`'s port without --port. */
  port: number | undefined;
  apiKeys: string[];
  /** The control plane that checks keys of this workspace, when deployed by the operator. */
  controlPlaneAuth: { url: string; workspaceId: string } | undefined;
  /** GRAPHDOCK_AUTH_TYPE=noop: every request is served without a key. */
  authDisabled: boolean;
  home: string | undefined;
  logLevel: string;
  poolMax: number;
  /** GRAPHDOCK_DATABASE_WAIT_SECS, in ms: start-up's wait for a database that does not answer yet. */
  databaseWaitMs: number;
  /** Server processes `graphdock runtime` runs on one port, each acting as its own replica. */
  workers: number;
  /** After SIGTERM, how long `graphdock runtime` keeps serving (closing each connection) before it stops. */
  shutdownDrainMs: number;
  /**
   * Seconds of idleness before the server collects its garbage down to what it holds (and once
   * right after its start, when it first goes quiet); 0: never.
   */
  idleTrimSeconds: number;
  runs: {
    concurrency: number;
    shutdownGraceMs: number;
    maxAttempts: number;
    leaseSeconds: number;
    timeoutMs: number;
    /** How long a finished run's events stay for joins and Last-Event-ID. */
    eventRetentionSeconds: number;
  };
  crons: { tickMs: number };
  /** Test support: a directory where the server notes each (route, status) it answers. */
  responseLog: string | undefined;
  /**
   * Test support: an unhandled promise rejection exits the process with this code (Node's own
   * exit code for one is 1, shared with every other fatal error).
   */
  unhandledRejectionExitCode: number | undefined;
  webhooks: {
    /** Standard Webhooks signing secrets (`whsec_...`, space separated); none: unsigned. */
    secret: string | undefined;
    /** Attempts per delivery, the first included, before it is marked failed. */
    maxAttempts: number;
    connectTimeoutMs: number;
    /** Time allowed for the receiver's response headers (and, separately, between body chunks). */
    responseTimeoutMs: number;
    /** First retry delay; doubles each attempt, plus up to one base of jitter. */
    retryBaseMs: number;
    /** Upper bound of the computed backoff (a receiver's Retry-After may ask for longer, to 1 h). */
    retryMaxMs: number;
    /** Deliveries in flight at once per process. */
    concurrency: number;
  };
  a2a: {
    /** Assistant UUID or graph id whose card `/.well-known/agent-card.json` serves by default. */
    defaultAssistant: string | undefined;
  };
}

/**
 * The grace a runtime started with `env` gives its runs at shutdown, in seconds, read by the same
 * rule as at its start (the default for a value it would refuse): the operator sizes pods by it.
 */
export function runShutdownGraceSeconds(env: Record<string, string | undefined>): number {
  const field = EnvSchema.shape.BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS;
  const parsed = field.safeParse(env.BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS);
  return parsed.success ? parsed.data : field.parse(undefined);
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function readKeysFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `GRAPHDOCK_API_KEYS_FILE: cannot read ${path}: ${(err as Error).message}`,
    );
  }
}

export function loadProcessEnv(env: NodeJS.ProcessEnv): Readonly<ProcessEnv> {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const apiKeys = [...e.GRAPHDOCK_API_KEYS];
  if (e.GRAPHDOCK_API_KEYS_FILE) {
    // One key per line, as mounted from a Kubernetes Secret.
    const text = readKeysFile(e.GRAPHDOCK_API_KEYS_FILE);
    apiKeys.push(...text.split(/\s+/).filter(Boolean));
  }
  if (!e.GRAPHDOCK_CONTROL_PLANE_URL !== !e.GRAPHDOCK_WORKSPACE_ID)
    throw new ConfigError(
      'GRAPHDOCK_CONTROL_PLANE_URL and GRAPHDOCK_WORKSPACE_ID are set together or not at all',
    );
  const controlPlaneAuth = e.GRAPHDOCK_CONTROL_PLANE_URL
    ? { url: e.GRAPHDOCK_CONTROL_PLANE_URL, workspaceId: e.GRAPHDOCK_WORKSPACE_ID! }
    : undefined;
  const authDisabled = e.GRAPHDOCK_AUTH_TYPE === 'noop';
  if (e.GRAPHDOCK_AUTH_REQUIRED === 'true' && !authDisabled && !apiKeys.length && !controlPlaneAuth)
    throw new ConfigError(
      'GRAPHDOCK_AUTH_REQUIRED: no API keys and no GRAPHDOCK_CONTROL_PLANE_URL to check them with (GRAPHDOCK_AUTH_TYPE=noop serves without authentication)',
    );
  return Object.freeze({
    databaseUrl: e.DATABASE_URL,
    port: e.PORT,
    apiKeys: authDisabled ? [] : apiKeys,
    controlPlaneAuth: authDisabled ? undefined : controlPlaneAuth,
    authDisabled,
    home: e.GRAPHDOCK_HOME,
    logLevel: e.LOG_LEVEL,
    poolMax: e.DATABASE_POOL_MAX,
    databaseWaitMs: e.GRAPHDOCK_DATABASE_WAIT_SECS * 1000,
    workers: e.GRAPHDOCK_WORKERS,
    shutdownDrainMs: e.GRAPHDOCK_SHUTDOWN_DRAIN_SECS * 1000,
    idleTrimSeconds: e.GRAPHDOCK_IDLE_TRIM_SECS,
    runs: {
      concurrency: e.N_JOBS_PER_WORKER,
      shutdownGraceMs: e.BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS * 1000,
      maxAttempts: e.BG_JOB_MAX_ATTEMPTS,
      leaseSeconds: e.GRAPHDOCK_RUN_LEASE_SECS,
      timeoutMs: e.BG_JOB_TIMEOUT_SECS * 1000,
      eventRetentionSeconds: e.RESUMABLE_STREAM_TTL_SECONDS,
    },
    crons: { tickMs: e.GRAPHDOCK_CRON_TICK_MS },
    responseLog: e.GRAPHDOCK_RESPONSE_LOG,
    unhandledRejectionExitCode: e.GRAPHDOCK_UNHANDLED_REJECTION_EXIT_CODE,
    webhooks: {
      secret: e.GRAPHDOCK_WEBHOOK_SECRET,
      maxAttempts: e.GRAPHDOCK_WEBHOOK_MAX_ATTEMPTS,
      connectTimeoutMs: e.GRAPHDOCK_WEBHOOK_CONNECT_TIMEOUT_SECS * 1000,
      responseTimeoutMs: e.GRAPHDOCK_WEBHOOK_TIMEOUT_SECS * 1000,
      retryBaseMs: e.GRAPHDOCK_WEBHOOK_RETRY_BASE_MS,
      retryMaxMs: e.GRAPHDOCK_WEBHOOK_RETRY_MAX_SECS * 1000,
      concurrency: e.GRAPHDOCK_WEBHOOK_CONCURRENCY,
    },
    a2a: { defaultAssistant: e.GRAPHDOCK_A2A_DEFAULT_ASSISTANT },
  });
}

export { loadControlPlaneEnv, ORGANIZATION_PLANS, type ControlPlaneEnv } from './control-plane.js';
export { loadOperatorEnv, type OperatorEnv, type ExportJobSettings } from './operator.js';
export { parseWatchNamespaces } from './watch-namespaces.js';
export { loadDefaultKubeConfig } from './kubeconfig.js';
export { loadExportEnv, type ExportEnv, type ExportRunnerSettings } from './exports.js';
