// The control plane's composition root: database, tenancy, Kubernetes client, services, HTTP.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { FastifyInstance } from 'fastify';
import { createPool, migrate, readMigrationDir, type Pool } from '../common/db/index.js';
import type { Logger } from '../common/logging/index.js';
import { TraceKeyVerifier } from './auth/index.js';
import { DeploymentService } from './deployments/index.js';
import { buildControlPlaneApp } from './http/index.js';
import { KubeResources } from './kube/index.js';
import { ListenerService } from './listeners/index.js';
import { TenancyService, TenancyStore, type BootstrapSettings } from './tenancy/index.js';
import { createTraceService, type TraceSettings } from '../traces/index.js';

const require = createRequire(import.meta.url);
const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');
const VERSION = (require('../package.json') as { version: string }).version;

export interface ControlPlaneOptions {
  databaseUrl: string;
  logger: Logger;
  poolMax?: number;
  fieldManager?: string;
  bootstrap?: BootstrapSettings;
  /** Namespaces the api reads and writes namespaced resources in; empty: all. */
  watchNamespaces?: readonly string[];
  /** The trace store's settings (retention); see docs/traces.md. */
  traces?: Partial<TraceSettings>;
  /** Defaults to KUBECONFIG / in-cluster service account, like kubectl. */
  kubeConfig?: KubeConfig;
  /** Builds the Kubernetes client; tests substitute one that fails at a chosen write. */
  kubeResources?: (
    kubeConfig: KubeConfig,
    fieldManager: string,
    watchNamespaces: readonly string[],
  ) => KubeResources;
}

export interface ControlPlane {
  app: FastifyInstance;
  pool: Pool;
  tenancy: TenancyService;
  close(): Promise<void>;
}

export function migrateControlPlaneDatabase(pool: Pool): Promise<number[]> {
  return migrate(pool, { area: 'control-plane', migrations: readMigrationDir(MIGRATIONS_DIR) });
}

export async function createControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const { logger } = options;
  const pool = createPool({
    url: options.databaseUrl,
    max: options.poolMax ?? 10,
    applicationName: 'graphdock-api',
  });
  pool.on('error', (err) => logger.error({ err }, 'idle database connection failed'));
  try {
    const applied = await migrateControlPlaneDatabase(pool);
    if (applied.length) logger.info({ applied }, 'database migrated');
    const tenancy = new TenancyService(
      pool,
      new TenancyStore(pool),
      logger.child({ context: 'tenancy' }),
    );
    if (options.bootstrap) await tenancy.bootstrap(options.bootstrap);
    const traces = await createTraceService(
      pool,
      logger.child({ context: 'traces' }),
      options.traces,
    );

    let kubeConfig = options.kubeConfig;
    if (!kubeConfig) {
      kubeConfig = new KubeConfig();
      kubeConfig.loadFromDefault();
    }
    const kube = (options.kubeResources ?? ((...args) => new KubeResources(...args)))(
      kubeConfig,
      options.fieldManager ?? 'graphdock-api',
      options.watchNamespaces ?? [],
    );
    const listeners = new ListenerService(kube);
    const deployments = new DeploymentService(kube, listeners);
    const app = await buildControlPlaneApp({
      logger,
      version: VERSION,
      tenancy,
      traceKeys: new TraceKeyVerifier(kube, tenancy),
      listeners,
      deployments,
      traces,
      checkReady: async () => {
        await pool.query('SELECT 1');
      },
    });
    logger.info(
      {
        cluster: kubeConfig.getCurrentCluster()?.server,
        watchNamespaces: kube.watchNamespaces.length ? kube.watchNamespaces : 'all',
      },
      'control plane ready',
    );
    const sweep = setInterval(() => {
      traces.sweepExpired().then(
        (n) => n && logger.info({ swept: n }, 'expired traces swept'),
        (err: unknown) => logger.warn({ err }, 'trace retention sweep failed'),
      );
    }, 60_000);
    sweep.unref();
    return {
      app,
      pool,
      tenancy,
      close: async () => {
        clearInterval(sweep);
        await app.close();
        await pool.end();
      },
    };
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}
