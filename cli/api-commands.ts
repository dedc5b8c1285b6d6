// `graphdock api`: the control-plane REST API.
import { ConfigError, loadControlPlaneEnv, loadExportEnv } from '../common/config/index.js';
import { createLogger } from '../common/logging/index.js';
import { createControlPlane, type ControlPlaneOptions } from '../api/index.js';
import { KeyringError, parseKeyring } from '../exports/index.js';
import { ensurePortFree, listenFailure } from './port.js';

export interface ApiOptions {
  port: number | undefined;
  host: string | undefined;
}

/** `compose`: parts of the composition replaced, e.g. by a test's fault-injecting entry script. */
export async function runApi(
  options: ApiOptions,
  compose: Pick<ControlPlaneOptions, 'kubeResources'> = {},
): Promise<number> {
  const env = loadControlPlaneEnv(process.env);
  if (!env.databaseUrl) throw new ConfigError('DATABASE_URL is required for `graphdock api`');
  try {
    parseKeyring(env.bulkExport.encryptionKeys ?? '');
  } catch (err) {
    if (!(err instanceof KeyringError)) throw err;
    throw new ConfigError(`GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS: ${err.message}`);
  }
  const port = options.port ?? 8080;
  const host = options.host ?? '0.0.0.0';
  await ensurePortFree(port, host);
  const logger = createLogger({ level: env.logLevel, name: 'graphdock-api' });
  const controlPlane = await createControlPlane({
    databaseUrl: env.databaseUrl,
    logger,
    poolMax: env.poolMax,
    databaseWaitMs: env.databaseWaitMs,
    fieldManager: env.fieldManager,
    watchNamespaces: env.watchNamespaces,
    bootstrap: env.bootstrap,
    exports: {
      encryptionKeys: env.bulkExport.encryptionKeys,
      allowDefaultCredentials: env.bulkExport.allowDefaultCredentials,
      s3: { requestTimeoutMs: env.bulkExport.s3TimeoutMs },
    },
    exportRuns: loadExportEnv(process.env),
    tracesPublicUrl: env.tracesPublicUrl,
    ...compose,
  });
  let address: string;
  try {
    address = await controlPlane.app.listen({ port, host });
  } catch (err) {
    // Taken since ensurePortFree looked.
    await controlPlane.close();
    throw listenFailure(err, port, host);
  }
  logger.info({ address }, 'listening');
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  logger.info({ signal }, 'shutting down');
  await controlPlane.close();
  return 0;
}
