// Prometheus metrics of webhook delivery, on the process's one registry.
import { Counter, Histogram, type Registry } from '../../common/metrics/index.js';

export interface WebhookMetrics {
  /** outcome: delivered, retry (another attempt is scheduled) or failed (given up). */
  attempts: Counter<'outcome'>;
  attemptSeconds: Histogram<'outcome'>;
  /** From the run's end to the receiver's 2xx, for delivered webhooks. */
  deliveredAfterRunEnd: Histogram;
}

export function createWebhookMetrics(registry: Registry): WebhookMetrics {
  return {
    attempts: new Counter({
      name: 'graphdock_webhook_attempts_total',
      help: 'Webhook delivery attempts, by outcome (delivered, retry, failed)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    attemptSeconds: new Histogram({
      name: 'graphdock_webhook_attempt_duration_seconds',
      help: 'Duration of one webhook attempt, by outcome',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    deliveredAfterRunEnd: new Histogram({
      name: 'graphdock_webhook_delivered_after_run_end_seconds',
      help: 'Time from a run ending to its webhook being delivered',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 120, 600, 3600],
      registers: [registry],
    }),
  };
}
