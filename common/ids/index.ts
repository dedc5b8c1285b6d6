// Time-ordered ids (UUIDv7) for threads, runs, assistants and crons, and random hex suffixes.
import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * Random bytes for many ids at once: `uuid` asks the kernel for 16 bytes per id, a system call
 * that showed up in profiles of thread creation. Refilled every 4 KiB.
 */
const pool = new Uint8Array(16 * 256);
let used = pool.length;

/** The next `n` (at most 16) bytes of the pool; valid until the next call. */
function pooled(n: number): Uint8Array {
  if (used + n > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  return pool.subarray(used, (used += n));
}

/** `bytes` random bytes (at most 16) as lowercase hex, from the same pool as the ids. */
export function randomHex(bytes: number): string {
  return Buffer.from(pooled(bytes)).toString('hex');
}
/** Last timestamp and counter, so ids made in the same millisecond still sort in order. */
const last = { msecs: -Infinity, seq: 0 };

/** A new UUIDv7: the `uuid` package's layout and ordering, with pooled random bytes. */
export function uuid7(): string {
  const random = pooled(16);
  const now = Date.now();
  if (now > last.msecs) {
    last.msecs = now;
    // The counter starts at a random point each millisecond, as `uuid` starts it.
    last.seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
  } else {
    last.seq = (last.seq + 1) | 0;
    if (last.seq === 0) last.msecs++;
  }
  return v7({ random, msecs: last.msecs, seq: last.seq });
}

/**
 * A checkpoint id as LangGraph writes them (UUIDv6, or v1 from older versions): any version of
 * the 8-4-4-4-12 hex layout, so ids of every LangGraph release are accepted.
 */
export const CHECKPOINT_ID_PATTERN =
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const CHECKPOINT_ID_MESSAGE = 'Invalid checkpoint ID: must be a UUID';
