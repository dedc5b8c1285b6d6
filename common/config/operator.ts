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
});

export interface OperatorEnv {
  logLevel: string;
  databaseUrl: string | undefined;
  databaseHost: string | undefined;
  controlPlaneUrl: string | undefined;
  podNamespace: string | undefined;
  podName: string | undefined;
  /** Empty: all namespaces. */
  watchNamespaces: string[];
}

export function loadOperatorEnv(env: NodeJS.ProcessEnv): Readonly<OperatorEnv> {
  const parsed = OperatorEnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  return Object.freeze({
    logLevel: e.LOG_LEVEL,
    databaseUrl: e.GRAPHDOCK_OPERATOR_DATABASE_URL,
    databaseHost: e.GRAPHDOCK_OPERATOR_DATABASE_HOST,
    controlPlaneUrl: e.GRAPHDOCK_CONTROL_PLANE_URL,
    podNamespace: e.POD_NAMESPACE,
    podName: e.POD_NAME,
    watchNamespaces: e.GRAPHDOCK_WATCH_NAMESPACES,
  });
}
