// The OpenAPI document, built from the same routes and zod schemas the server serves, without a
// database: the services behind the routes are never called while the document is built.
import { createLogger } from '../../common/logging/index.js';
import { createMetricsRegistry } from '../../common/metrics/index.js';
import type { A2aService } from '../a2a/index.js';
import type { AssistantService } from '../assistants/index.js';
import type { CronService } from '../crons/index.js';
import type { ProtocolService } from '../protocol/index.js';
import type { RunEventLog, RunService } from '../runs/index.js';
import type { StoreService } from '../store/index.js';
import type { ThreadService } from '../threads/index.js';
import type { WebhookDeliveries } from '../webhooks/index.js';
import { buildApp } from './app.js';

function unavailable<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get: () => {
      throw new Error(`${name} is not available while building the OpenAPI document`);
    },
  });
}

export async function buildOpenApiDocument(version: string): Promise<unknown> {
  const app = await buildApp({
    logger: createLogger({ level: 'silent' }),
    metrics: createMetricsRegistry(),
    apiKeys: [],
    http: {},
    info: { version, langgraphJsVersion: 'n/a' },
    assistants: unavailable<AssistantService>('assistants'),
    threads: unavailable<ThreadService>('threads'),
    runs: unavailable<RunService>('runs'),
    runEvents: unavailable<RunEventLog>('run events'),
    protocol: unavailable<ProtocolService>('thread protocol'),
    a2a: unavailable<A2aService>('a2a'),
    crons: unavailable<CronService>('crons'),
    store: unavailable<StoreService>('store'),
    webhooks: unavailable<WebhookDeliveries>('webhook deliveries'),
    // Documented as served when `ui` is set.
    ui: new Map(),
    checkDb: () => Promise.resolve(),
  });
  await app.ready();
  const document = app.swagger();
  await app.close();
  return document;
}
