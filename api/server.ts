// The control plane's composition root: database, tenancy, Kubernetes client, services, HTTP.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { FastifyInstance } from 'fastify';
import {
  createPool,
  migrate,
  readMigrationDir,
  startWait,
  type Pool,
  type StartWait,
} from '../common/db/index.js';
import type { Logger } from '../common/logging/index.js';
import { TraceKeyVerifier } from './auth/index.js';
import { BulkExportPublisher } from './bulk-exports/index.js';
import { DeploymentService } from './deployments/index.js';
import { buildControlPlaneApp } from './http/index.js';
import { KubeResources } from './kube/index.js';
import { ListenerService } from './listeners/index.js';
import { TenancyService, TenancyStore, type BootstrapSettings } from './tenancy/index.js';
import { createTraceService, type TraceSettings } from '../traces/index.js';
import {
  createDestinationService,
  createExportParts,
  type ExportSettings,
} from '../exports/index.js';
import { loadDefaultKubeConfig, loadExportEnv, type ExportEnv } from '../common/config/index.js';

const require = createRequire(import.meta.url);
const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');
const VERSION = (require('../package.json') as { version: string }).version;

export interface ControlPlaneOptions {
  databaseUrl: string;
  logger: Logger;
  poolMax?: number;
  /** How long start-up waits for the database to answer (default: one try). */
  databaseWaitMs?: number;
  fieldManager?: string;
  bootstrap?: BootstrapSettings;
  /** Namespaces the api reads and writes namespaced resources in; empty: all. */
  watchNamespaces?: readonly string[];
  /** The trace store's settings (retention); see docs/traces.md. */
  traces?: Partial<TraceSettings>;
  /** The trace store's `/api/v1` as users reach it: the base of presigned feedback URLs. */
  tracesPublicUrl?: string | undefined;
  /** Bulk export: the credential key ring and the self-hosted credential setting. */
  exports?: ExportSettings;
  /** Bulk export runs: who executes them, file and row group sizes, retries (docs/bulk-export.md). */
  exportRuns?: ExportEnv;
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

export function migrateControlPlaneDatabase(pool: Pool, wait?: StartWait): Promise<number[]> {
  return migrate(pool, {
    area: 'control-plane',
    migrations: readMigrationDir(MIGRATIONS_DIR),
    wait,
  });
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
    const applied = await migrateControlPlaneDatabase(
      pool,
      startWait(options.databaseWaitMs ?? 0, logger),
    );
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

    const destinations = await createDestinationService(
      pool,
      logger.child({ context: 'exports' }),
      options.exports ?? { encryptionKeys: undefined, allowDefaultCredentials: false },
    );
    // After a key rotation: move rows sealed with an older key to the newest, in the background.
    void (async () => {
      let moved = 0;
      for (let n = 1; n > 0; moved += n) n = await destinations.resealOldKeys();
      if (moved) logger.info({ moved }, 'destination credentials re-sealed with the newest key');
    })().catch((err: unknown) => logger.warn({ err }, 'destination credentials re-seal failed'));

    let kubeConfig = options.kubeConfig;
    if (!kubeConfig) {
      kubeConfig = loadDefaultKubeConfig(new KubeConfig());
    }
    const kube = (options.kubeResources ?? ((...args) => new KubeResources(...args)))(
      kubeConfig,
      options.fieldManager ?? 'graphdock-api',
      options.watchNamespaces ?? [],
    );
    const exportEnv = options.exportRuns ?? loadExportEnv({});
    const exportLogger = logger.child({ context: 'exports' });
    const exportParts = createExportParts(pool, destinations, exportEnv, exportLogger, (store) => {
      const publisher = new BulkExportPublisher(
        kube,
        store,
        {
          namespace: exportEnv.jobsNamespace ?? 'default',
          maxAttempts: exportEnv.runner.maxAttempts,
          recheckMs: 10_000,
          cancelledWithinMs: 3_600_000,
        },
        exportLogger,
      );
      return () => publisher.sync();
    });
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
      tracesPublicUrl: options.tracesPublicUrl,
      destinations,
      exports: exportParts.service,
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
    // Scheduled exports' windows, and the runs themselves unless the operator runs them as Jobs.
    exportParts.worker.start();
    return {
      app,
      pool,
      tenancy,
      close: async () => {
        clearInterval(sweep);
        await exportParts.worker.stop();
        await app.close();
        await pool.end();
      },
    };
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}
