// The control-plane OpenAPI document, built from the same routes and schemas, with no database
// or cluster: the services are never called while the document is built.
import { createLogger } from '../../common/logging/index.js';
import type { DeploymentService } from '../deployments/index.js';
import type { ListenerService } from '../listeners/index.js';
import type { TenancyService } from '../tenancy/index.js';
import type { TraceService } from '../../traces/index.js';
import type { DestinationService, ExportService } from '../../exports/index.js';
import { buildControlPlaneApp } from './app.js';

function unavailable<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get: () => {
      throw new Error(`${name} is not available while building the OpenAPI document`);
    },
  });
}

export async function buildControlPlaneOpenApi(version: string): Promise<unknown> {
  const app = await buildControlPlaneApp({
    logger: createLogger({ level: 'silent' }),
    version,
    tenancy: unavailable<TenancyService>('tenancy'),
    listeners: unavailable<ListenerService>('listeners'),
    deployments: unavailable<DeploymentService>('deployments'),
    traces: unavailable<TraceService>('traces'),
    destinations: unavailable<DestinationService>('destinations'),
    exports: unavailable<ExportService>('exports'),
    checkReady: () => Promise.resolve(),
  });
  await app.ready();
  const document = app.swagger();
  await app.close();
  return document;
}
