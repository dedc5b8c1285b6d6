// Delivery settings that langgraph.json does not cover; read from the environment at start-up
// (common/config) and documented in the README's configuration table.
export interface WebhookSettings {
  /** Standard Webhooks signing secrets (`whsec_...`, space separated); none: unsigned. */
  secret: string | undefined;
  /** Attempts per delivery, the first included, before it is marked failed. */
  maxAttempts: number;
  connectTimeoutMs: number;
  /** Time allowed for the receiver's response headers (and, separately, between body chunks). */
  responseTimeoutMs: number;
  /** First retry delay; doubles each attempt, plus up to one base of jitter. */
  retryBaseMs: number;
  /** Upper bound of the computed backoff (a receiver's Retry-After may ask for longer, to 1 h). */
  retryMaxMs: number;
  /** Deliveries in flight at once per process. */
  concurrency: number;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  secret: undefined,
  maxAttempts: 5,
  connectTimeoutMs: 5_000,
  responseTimeoutMs: 30_000,
  retryBaseMs: 1_000,
  retryMaxMs: 600_000,
  concurrency: 16,
};

export const MAX_RETRY_AFTER_MS = 3_600_000;

/** Exponential backoff with jitter, never sooner than the receiver's Retry-After. */
export function retryDelayMs(
  failedAttempt: number,
  settings: Pick<WebhookSettings, 'retryBaseMs' | 'retryMaxMs'>,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const backoff = Math.min(settings.retryBaseMs * 2 ** (failedAttempt - 1), settings.retryMaxMs);
  const jittered = backoff + random() * Math.min(settings.retryBaseMs, backoff);
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
}
