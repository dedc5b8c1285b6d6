// Settings of `graphdock api`, read from the process environment once at start-up.
import { z } from 'zod';
import { ConfigError } from './index.js';
import { WatchNamespacesSchema } from './watch-namespaces.js';

const ORGANIZATION_PLANS = ['self_hosted_enterprise', 'enterprise', 'plus', 'developer'] as const;

const ControlPlaneEnvSchema = z.object({
  DATABASE_URL: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_POOL_MAX: z.coerce.number().int().positive().default(10),
  // How long start-up keeps trying a database that does not answer yet (0: one try).
  GRAPHDOCK_DATABASE_WAIT_SECS: z.coerce.number().nonnegative().max(3600).default(30),
  /** The first API key; with it the first organization and workspace are created. */
  GRAPHDOCK_BOOTSTRAP_API_KEY: z.string().min(16).optional(),
  GRAPHDOCK_BOOTSTRAP_ORGANIZATION_NAME: z.string().min(1).default('default'),
  GRAPHDOCK_BOOTSTRAP_ORGANIZATION_PLAN: z
    .enum(ORGANIZATION_PLANS)
    .default('self_hosted_enterprise'),
  GRAPHDOCK_BOOTSTRAP_WORKSPACE_ID: z.uuid().optional(),
  GRAPHDOCK_BOOTSTRAP_WORKSPACE_NAME: z.string().min(1).default('default'),
  /** Field manager for server-side apply of the custom resources. */
  GRAPHDOCK_FIELD_MANAGER: z.string().min(1).default('graphdock-api'),
  /** Comma list: read and write namespaced resources only there (the chart's watchNamespaces). */
  GRAPHDOCK_WATCH_NAMESPACES: WatchNamespacesSchema,
  /** Bulk export credential keys, `id:base64` (32 bytes) comma-separated, the newest first. */
  GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS: z.string().optional(),
  /** Self-hosted: destinations may omit credentials (the AWS SDK's default chain). */
  GRAPHDOCK_BULK_EXPORT_DEFAULT_CREDENTIALS: z.enum(['true', 'false']).default('false'),
  /** Timeout of each S3 request of a destination's test write. */
  GRAPHDOCK_BULK_EXPORT_S3_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  /**
   * Where users reach the trace store (`https://<host>/api/v1`): the base of presigned feedback
   * URLs, which otherwise name the host the runtime asked on (the api's in-cluster Service).
   */
  GRAPHDOCK_TRACES_PUBLIC_URL: z
    .url({ protocol: /^https?$/, error: 'expected an http(s) URL' })
    .transform((url) => url.replace(/\/+$/, ''))
    .optional(),
});

export interface ControlPlaneEnv {
  databaseUrl: string | undefined;
  logLevel: string;
  poolMax: number;
  /** GRAPHDOCK_DATABASE_WAIT_SECS, in ms: start-up's wait for a database that does not answer yet. */
  databaseWaitMs: number;
  fieldManager: string;
  /** Empty: all namespaces. */
  watchNamespaces: string[];
  bulkExport: {
    encryptionKeys: string | undefined;
    allowDefaultCredentials: boolean;
    s3TimeoutMs: number;
  };
  /** GRAPHDOCK_TRACES_PUBLIC_URL: the base of presigned feedback URLs, when set. */
  tracesPublicUrl: string | undefined;
  bootstrap:
    | {
        apiKey: string;
        organizationName: string;
        organizationPlan: (typeof ORGANIZATION_PLANS)[number];
        workspaceId: string | undefined;
        workspaceName: string;
      }
    | undefined;
}

export { ORGANIZATION_PLANS };

export function loadControlPlaneEnv(env: NodeJS.ProcessEnv): Readonly<ControlPlaneEnv> {
  const parsed = ControlPlaneEnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  return Object.freeze({
    databaseUrl: e.DATABASE_URL,
    logLevel: e.LOG_LEVEL,
    poolMax: e.DATABASE_POOL_MAX,
    databaseWaitMs: e.GRAPHDOCK_DATABASE_WAIT_SECS * 1000,
    fieldManager: e.GRAPHDOCK_FIELD_MANAGER,
    watchNamespaces: e.GRAPHDOCK_WATCH_NAMESPACES,
    bulkExport: {
      encryptionKeys: e.GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS,
      allowDefaultCredentials: e.GRAPHDOCK_BULK_EXPORT_DEFAULT_CREDENTIALS === 'true',
      s3TimeoutMs: e.GRAPHDOCK_BULK_EXPORT_S3_TIMEOUT_MS,
    },
    tracesPublicUrl: e.GRAPHDOCK_TRACES_PUBLIC_URL,
    bootstrap: e.GRAPHDOCK_BOOTSTRAP_API_KEY
      ? {
          apiKey: e.GRAPHDOCK_BOOTSTRAP_API_KEY,
          organizationName: e.GRAPHDOCK_BOOTSTRAP_ORGANIZATION_NAME,
          organizationPlan: e.GRAPHDOCK_BOOTSTRAP_ORGANIZATION_PLAN,
          workspaceId: e.GRAPHDOCK_BOOTSTRAP_WORKSPACE_ID,
          workspaceName: e.GRAPHDOCK_BOOTSTRAP_WORKSPACE_NAME,
        }
      : undefined,
  });
}
