// Environment settings of `graphdock operator` (its flags are parsed by the CLI).
import { z } from 'zod';
import { ConfigError } from './index.js';
import { WatchNamespacesSchema } from './watch-namespaces.js';

const OperatorEnvSchema = z.object({
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Admin connection to the server that holds per-deployment databases. */
  GRAPHDOCK_OPERATOR_DATABASE_URL: z.string().min(1).optional(),
  /** host:port agent pods use to reach that server, when not the admin URL's. */
  GRAPHDOCK_OPERATOR_DATABASE_HOST: z.string().min(1).optional(),
  /** Base URL of `graphdock api` as agent pods reach it (--control-plane-url overrides). */
  GRAPHDOCK_CONTROL_PLANE_URL: z.string().url().optional(),
  POD_NAMESPACE: z.string().min(1).optional(),
  POD_NAME: z.string().min(1).optional(),
  /** Comma list: watch namespaced resources only there (--watch-namespaces overrides). */
  GRAPHDOCK_WATCH_NAMESPACES: WatchNamespacesSchema,
  /** The Graphdock image of export Jobs; set, it turns BulkExports into Jobs. */
  GRAPHDOCK_EXPORT_JOB_IMAGE: z.string().min(1).optional(),
  GRAPHDOCK_EXPORT_JOB_PULL_POLICY: z.enum(['Always', 'IfNotPresent', 'Never']).optional(),
  /** Namespace of the BulkExports and their Jobs (the api's); defaults to POD_NAMESPACE. */
  GRAPHDOCK_EXPORT_JOBS_NAMESPACE: z.string().min(1).max(63).optional(),
  /** `secret` or `secret:key` holding DATABASE_URL (the api's database) for export pods. */
  GRAPHDOCK_EXPORT_JOB_DATABASE_SECRET: z.string().min(1).optional(),
  /** `secret` or `secret:key` holding GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS for export pods. */
  GRAPHDOCK_EXPORT_JOB_KEYS_SECRET: z.string().min(1).optional(),
  /** Jobs of one export at once. */
  GRAPHDOCK_EXPORT_JOB_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(2),
  GRAPHDOCK_EXPORT_JOB_DEADLINE_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .default(72 * 3600),
  /** Service account of export pods (e.g. for IRSA credentials of destinations). */
  GRAPHDOCK_EXPORT_JOB_SERVICE_ACCOUNT: z.string().min(1).optional(),
});

const PASSED_TO_EXPORT_JOBS =
  /^GRAPHDOCK_(EXPORT_(?!JOB|EXECUTOR)|BULK_EXPORT_(?!ENCRYPTION_KEYS))/;

function secretRef(value: string, defaultKey: string) {
  const [name, key] = value.split(':');
  return { name: name!, key: key || defaultKey };
}

export interface OperatorEnv {
  logLevel: string;
  databaseUrl: string | undefined;
  databaseHost: string | undefined;
  controlPlaneUrl: string | undefined;
  podNamespace: string | undefined;
  podName: string | undefined;
  /** Empty: all namespaces. */
  watchNamespaces: string[];
  /** Bulk export runs as Jobs; undefined: the operator leaves BulkExports alone. */
  exportJobs: ExportJobSettings | undefined;
}

export interface ExportJobSettings {
  namespace: string;
  image: string;
  imagePullPolicy: 'Always' | 'IfNotPresent' | 'Never' | undefined;
  databaseSecret: { name: string; key: string };
  keysSecret: { name: string; key: string };
  concurrency: number;
  activeDeadlineSeconds: number;
  serviceAccountName: string | undefined;
  /** The operator's own GRAPHDOCK_EXPORT_* run settings, passed on to the pods. */
  env: Record<string, string>;
}

export function loadOperatorEnv(env: NodeJS.ProcessEnv): Readonly<OperatorEnv> {
  const parsed = OperatorEnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  let exportJobs: ExportJobSettings | undefined;
  if (e.GRAPHDOCK_EXPORT_JOB_IMAGE) {
    const namespace = e.GRAPHDOCK_EXPORT_JOBS_NAMESPACE ?? e.POD_NAMESPACE;
    if (
      !namespace ||
      !e.GRAPHDOCK_EXPORT_JOB_DATABASE_SECRET ||
      !e.GRAPHDOCK_EXPORT_JOB_KEYS_SECRET
    )
      throw new ConfigError(
        'GRAPHDOCK_EXPORT_JOB_IMAGE needs GRAPHDOCK_EXPORT_JOBS_NAMESPACE (or POD_NAMESPACE), ' +
          'GRAPHDOCK_EXPORT_JOB_DATABASE_SECRET and GRAPHDOCK_EXPORT_JOB_KEYS_SECRET',
      );
    exportJobs = {
      namespace,
      image: e.GRAPHDOCK_EXPORT_JOB_IMAGE,
      imagePullPolicy: e.GRAPHDOCK_EXPORT_JOB_PULL_POLICY,
      databaseSecret: secretRef(e.GRAPHDOCK_EXPORT_JOB_DATABASE_SECRET, 'DATABASE_URL'),
      keysSecret: secretRef(
        e.GRAPHDOCK_EXPORT_JOB_KEYS_SECRET,
        'GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS',
      ),
      concurrency: e.GRAPHDOCK_EXPORT_JOB_CONCURRENCY,
      activeDeadlineSeconds: e.GRAPHDOCK_EXPORT_JOB_DEADLINE_SECONDS,
      serviceAccountName: e.GRAPHDOCK_EXPORT_JOB_SERVICE_ACCOUNT,
      env: Object.fromEntries(
        Object.entries(env).filter(
          (kv): kv is [string, string] => PASSED_TO_EXPORT_JOBS.test(kv[0]) && kv[1] !== undefined,
        ),
      ),
    };
  }
  return Object.freeze({
    logLevel: e.LOG_LEVEL,
    databaseUrl: e.GRAPHDOCK_OPERATOR_DATABASE_URL,
    databaseHost: e.GRAPHDOCK_OPERATOR_DATABASE_HOST,
    controlPlaneUrl: e.GRAPHDOCK_CONTROL_PLANE_URL,
    podNamespace: e.POD_NAMESPACE,
    podName: e.POD_NAME,
    watchNamespaces: e.GRAPHDOCK_WATCH_NAMESPACES,
    exportJobs,
  });
}
