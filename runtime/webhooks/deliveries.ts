// Read side of the outbox for the debug endpoints.
import { notFound } from '../../common/errors/index.js';
import type { AttemptRow, DeliveryRow, WebhookStore } from './store.js';

/** Query values can be secrets (`?token=`): the listing shows which keys were sent, not values. */
export function maskedUrl(raw: string): string {
  try {
    const url = new URL(raw);
    for (const key of new Set(url.searchParams.keys())) url.searchParams.set(key, '***');
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return raw;
  }
}

function deliveryBody(delivery: DeliveryRow, attempts: AttemptRow[]) {
  const pending = delivery.status === 'pending' || delivery.status === 'delivering';
  return {
    webhook_id: delivery.delivery_id,
    run_id: delivery.run_id,
    thread_id: delivery.thread_id,
    url: maskedUrl(delivery.url),
    status: delivery.status,
    attempt_count: attempts.length,
    next_attempt_at: pending ? delivery.next_attempt_at.toISOString() : null,
    last_error: delivery.last_error,
    created_at: delivery.created_at.toISOString(),
    updated_at: delivery.updated_at.toISOString(),
    delivered_at: delivery.delivered_at?.toISOString() ?? null,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      started_at: a.started_at.toISOString(),
      status_code: a.status_code,
      latency_ms: a.latency_ms,
      error: a.error,
    })),
  };
}

export class WebhookDeliveries {
  constructor(
    private readonly store: WebhookStore,
    /** Whether the run exists (on that thread, when given): an empty list needs a real run. */
    private readonly runExists: (runId: string, threadId?: string) => Promise<boolean>,
  ) {}

  async list(runId: string, threadId?: string) {
    let found = await this.store.forRun(runId, threadId);
    if (!found.length && !(await this.runExists(runId, threadId))) {
      // A threadless run is deleted by the transaction that queues its delivery: if it ended
      // between the two reads, its delivery is visible now.
      found = await this.store.forRun(runId, threadId);
      if (!found.length) throw notFound('Run not found');
    }
    return found.map(({ delivery, attempts }) => deliveryBody(delivery, attempts));
  }
}
