// Wires the webhook context from configuration: checks everything that can be wrong at
// start-up (header templates, signing secret), then hands the composition root its parts.
import type { Pool, PoolClient } from '../../common/db/index.js';
import type { Logger } from '../../common/logging/index.js';
import type { Registry } from '../../common/metrics/index.js';
import type { LanggraphConfig } from '../config/index.js';
import type { Notifier } from '../runs/index.js';
import { WebhookDeliveries } from './deliveries.js';
import { WebhookDispatcher } from './dispatcher.js';
import { SsrfGuard, systemResolver, type Resolver } from './guard.js';
import { DEFAULT_ENV_PREFIX, resolveWebhookHeaders } from './headers.js';
import { createWebhookMetrics } from './metrics.js';
import { WebhookOutbox } from './outbox.js';
import type { FinishedRun } from './payload.js';
import type { WebhookSettings } from './settings.js';
import { WebhookSigner } from './signing.js';
import { WebhookStore } from './store.js';
import { WebhookTransport } from './transport-handle.js';
import { urlPolicyFrom } from './url-policy.js';
import { WebhookUrlValidator } from './validator.js';

export interface WebhookModuleOptions {
  pool: Pool;
  notifier: Notifier;
  config: Pick<LanggraphConfig, 'webhooks' | 'http'>;
  settings: WebhookSettings;
  /** The process environment, for `${{ env.NAME }}` header templates. */
  env: NodeJS.ProcessEnv;
  threadValues: (threadId: string) => Promise<unknown>;
  runExists: (runId: string, threadId?: string) => Promise<boolean>;
  userAgent: string;
  logger: Logger;
  metrics?: Registry;
  resolver?: Resolver;
}

export interface WebhookModule {
  validator: WebhookUrlValidator;
  deliveries: WebhookDeliveries;
  /** The runs' finish hook; undefined when `http.disable_webhooks` is set (nothing is queued). */
  onRunsFinished: ((runs: FinishedRun[], db: PoolClient) => Promise<void>) | undefined;
  start(): void;
  stop(graceMs: number): Promise<void>;
}

export function createWebhookModule(options: WebhookModuleOptions): WebhookModule {
  const { config, settings } = options;
  const headers = resolveWebhookHeaders(
    config.webhooks?.headers,
    config.webhooks?.env_prefix ?? DEFAULT_ENV_PREFIX,
    options.env,
  );
  const signer = WebhookSigner.fromSecrets(settings.secret, 'GRAPHDOCK_WEBHOOK_SECRET');
  const policy = urlPolicyFrom(config.webhooks?.url);
  const guard = new SsrfGuard(policy, options.resolver ?? systemResolver);
  const store = new WebhookStore(options.pool);
  const validator = new WebhookUrlValidator(policy, guard, options.logger);
  const deliveries = new WebhookDeliveries(store, options.runExists);
  if (config.http?.disable_webhooks) {
    options.logger.info('webhooks disabled (http.disable_webhooks): runs still execute');
    return { validator, deliveries, onRunsFinished: undefined, start() {}, stop: async () => {} };
  }
  const outbox = new WebhookOutbox(store);
  const transport = new WebhookTransport(guard, settings);
  const dispatcher = new WebhookDispatcher({
    store,
    notifier: options.notifier,
    policy,
    transport,
    signer,
    headers,
    threadValues: options.threadValues,
    settings,
    userAgent: options.userAgent,
    logger: options.logger,
    metrics: options.metrics ? createWebhookMetrics(options.metrics) : undefined,
  });
  return {
    validator,
    deliveries,
    onRunsFinished: (runs, db) => outbox.enqueue(runs, db),
    start: () => dispatcher.start(),
    stop: async (graceMs) => {
      await dispatcher.stop(graceMs);
      await transport.close();
    },
  };
}
