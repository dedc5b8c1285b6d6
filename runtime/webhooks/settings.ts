// Delivery settings that langgraph.json does not cover; read from the environment at start-up
// (common/config, which holds their one definition) and documented in the README's
// configuration table.
import type { ProcessEnv } from '../../common/config/index.js';

export type WebhookSettings = ProcessEnv['webhooks'];

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
