// `checkpointer.ttl` of langgraph.json: the TTL new threads get and how often expired threads
// (with their checkpoints) are swept.
import type { LoadedConfig } from '../config/index.js';

export interface CheckpointerTtlSettings {
  /** Applied to threads created without a TTL of their own. */
  defaultTtl: { minutes: number; strategy: 'delete' | 'keep_latest' } | undefined;
  sweepIntervalMs: number;
  sweepLimit: number;
}

// One minute rather than the official ~5: the sweep is one indexed query, and expired threads
// should not linger long after their time.
const DEFAULT_SWEEP_MINUTES = 1;
const DEFAULT_SWEEP_LIMIT = 1000;

export function checkpointerTtlSettings(loaded: LoadedConfig): CheckpointerTtlSettings {
  const ttl = loaded.config.checkpointer?.ttl ?? undefined;
  return {
    defaultTtl:
      ttl?.default_ttl != null
        ? { minutes: ttl.default_ttl, strategy: ttl.strategy ?? 'delete' }
        : undefined,
    sweepIntervalMs: (ttl?.sweep_interval_minutes ?? DEFAULT_SWEEP_MINUTES) * 60_000,
    sweepLimit: ttl?.sweep_limit ?? DEFAULT_SWEEP_LIMIT,
  };
}
