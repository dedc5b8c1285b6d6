// The durable sender: claims due deliveries from the outbox (any replica, SKIP LOCKED), sends
// them, and records each attempt with its outcome. Woken by the NOTIFY that the transaction
// finishing a run sends; a poll covers lost notifications and due retries.
import type { Logger } from '../../common/logging/index.js';
import type { WebhookMetrics } from './metrics.js';
import { CHANNELS, type Notifier } from '../runs/index.js';
import { webhookPayload } from './payload.js';
import type { AttemptResult } from './sender.js';
import type { WebhookTransport } from './transport-handle.js';
import { retryDelayMs, type WebhookSettings } from './settings.js';
import type { WebhookSigner } from './signing.js';
import type { AttemptOutcome, DeliveryRow, WebhookStore } from './store.js';
import { checkWebhookUrl, type UrlPolicy } from './url-policy.js';

/** Finished deliveries are kept this long for the debug listing, then deleted. */
export const RETENTION_DAYS = 30;
const PURGE_INTERVAL_MS = 3_600_000;

export interface DispatcherDeps {
  store: WebhookStore;
  notifier: Pick<Notifier, 'on'>;
  policy: UrlPolicy;
  /** Loads undici on the first delivery. */
  transport: WebhookTransport;
  signer: WebhookSigner | undefined;
  /** `webhooks.headers`, already resolved. */
  headers: Record<string, string>;
  /** The thread's latest values; rejects or resolves null when the thread is gone. */
  threadValues: (threadId: string) => Promise<unknown>;
  settings: WebhookSettings;
  userAgent: string;
  logger: Logger;
  metrics?: WebhookMetrics | undefined;
  pollMs?: number;
}

export class WebhookDispatcher {
  private readonly inflight = new Map<string, AbortController>();
  private readonly wakers = new Set<() => void>();
  private stopping = false;
  /** Set by a wake-up that found nobody sleeping (it came while claiming): skip the next sleep. */
  private woken = false;
  private loopDone: Promise<void> = Promise.resolve();
  private nextRetryAt = Infinity;
  private offNotify: (() => void) | undefined;
  private purger: NodeJS.Timeout | undefined;
  private readonly leaseSeconds: number;

  constructor(private readonly deps: DispatcherDeps) {
    // Long enough for the slowest attempt, so a live sender never loses its row to another.
    this.leaseSeconds =
      (deps.settings.connectTimeoutMs + 2 * deps.settings.responseTimeoutMs) / 1000 + 10;
  }

  start(): void {
    this.offNotify = this.deps.notifier.on(CHANNELS.webhooks, () => this.wake());
    this.loopDone = this.loop();
    const purge = () => {
      this.deps.store.purgeFinished(RETENTION_DAYS).then(
        (n) => n && this.deps.logger.info({ purged: n }, 'old webhook deliveries deleted'),
        (err: unknown) => this.deps.logger.warn({ err }, 'webhook purge failed'),
      );
    };
    this.purger = setInterval(purge, PURGE_INTERVAL_MS);
    this.purger.unref();
    purge();
  }

  private wake(): void {
    this.woken = true;
    for (const wake of this.wakers) wake();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.woken) {
        this.woken = false;
        resolve();
        return;
      }
      const done = () => {
        this.woken = false;
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }

  private async loop(): Promise<void> {
    const pollMs = this.deps.pollMs ?? 1000;
    while (!this.stopping) {
      this.woken = false;
      const free = this.deps.settings.concurrency - this.inflight.size;
      let claimed = 0;
      if (free > 0) {
        const rows = await this.deps.store.claim(free, this.leaseSeconds).catch((err: unknown) => {
          this.deps.logger.warn({ err }, 'webhook claim failed');
          return [];
        });
        claimed = rows.length;
        for (const row of rows) void this.deliver(row);
      }
      if (claimed && claimed === free) continue;
      if (this.nextRetryAt <= Date.now()) this.nextRetryAt = Infinity;
      await this.sleep(Math.max(0, Math.min(pollMs, this.nextRetryAt - Date.now())));
    }
  }

  private async attempt(row: DeliveryRow, signal: AbortSignal): Promise<AttemptResult> {
    const check = checkWebhookUrl(row.url, this.deps.policy);
    if (!check.ok)
      return {
        outcome: 'give-up',
        statusCode: null,
        latencyMs: 0,
        error: `refused at send (${check.rule}): ${check.reason}`,
      };
    // Stateless runs have no values; a stateful run whose thread is gone reports null.
    const values = row.stateful
      ? ((await this.deps.threadValues(row.thread_id).catch(() => null)) ?? null)
      : undefined;
    const sentAt = new Date();
    const body = JSON.stringify(webhookPayload(row.run, values, sentAt));
    const timestamp = Math.floor(sentAt.getTime() / 1000);
    const headers: Record<string, string> = {
      ...this.deps.headers,
      'content-type': 'application/json',
      'user-agent': this.deps.userAgent,
      'webhook-id': row.delivery_id,
      'webhook-timestamp': String(timestamp),
    };
    if (this.deps.signer)
      headers['webhook-signature'] = this.deps.signer.sign(row.delivery_id, timestamp, body);
    const { sendWebhook, agent } = await this.deps.transport.get();
    return sendWebhook(agent, check.url, headers, body, signal);
  }

  private outcomeOf(row: DeliveryRow, result: AttemptResult): AttemptOutcome {
    if (result.outcome === 'delivered') return { status: 'delivered' };
    if (result.outcome === 'give-up' || row.attempts >= this.deps.settings.maxAttempts)
      return { status: 'failed' };
    const delay = retryDelayMs(row.attempts, this.deps.settings, result.retryAfterMs);
    return { status: 'pending', retryAt: new Date(Date.now() + delay) };
  }

  private observe(row: DeliveryRow, result: AttemptResult, outcome: AttemptOutcome): void {
    const metrics = this.deps.metrics;
    if (!metrics) return;
    const label = outcome.status === 'pending' ? 'retry' : outcome.status;
    metrics.attempts.inc({ outcome: label });
    metrics.attemptSeconds.observe({ outcome: label }, result.latencyMs / 1000);
    const ended = row.run.run_ended_at ? Date.parse(row.run.run_ended_at) : NaN;
    if (outcome.status === 'delivered' && !Number.isNaN(ended))
      metrics.deliveredAfterRunEnd.observe(Math.max(0, Date.now() - ended) / 1000);
  }

  private async deliver(row: DeliveryRow): Promise<void> {
    const controller = new AbortController();
    this.inflight.set(row.delivery_id, controller);
    const log = this.deps.logger.child({
      delivery_id: row.delivery_id,
      run_id: row.run_id,
      attempt: row.attempts,
    });
    try {
      const startedAt = new Date();
      const result = await this.attempt(row, controller.signal);
      const outcome = this.outcomeOf(row, result);
      const recorded = await this.deps.store.settleAttempt(
        row,
        {
          started_at: startedAt,
          status_code: result.statusCode,
          latency_ms: result.latencyMs,
          error: result.error,
        },
        outcome,
      );
      if (recorded) this.observe(row, result, outcome);
      if (outcome.status === 'pending' && recorded)
        this.nextRetryAt = Math.min(this.nextRetryAt, outcome.retryAt.getTime());
      if (outcome.status === 'delivered') log.debug({ status: result.statusCode }, 'webhook sent');
      else log.warn({ error: result.error, outcome: outcome.status }, 'webhook attempt failed');
    } catch (err) {
      log.error({ err }, 'webhook delivery failed');
    } finally {
      this.inflight.delete(row.delivery_id);
      this.wake();
    }
  }

  /** Stops claiming; lets attempts in flight finish within `graceMs`, then aborts them. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    clearInterval(this.purger);
    this.offNotify?.();
    this.wake();
    await this.loopDone;
    const deadline = Date.now() + graceMs;
    while (this.inflight.size && Date.now() < deadline) await this.sleep(20);
    for (const controller of this.inflight.values()) controller.abort('shutdown');
    // Aborted attempts are recorded (and rescheduled) before the pool closes.
    while (this.inflight.size) await new Promise((r) => setTimeout(r, 10));
  }
}
