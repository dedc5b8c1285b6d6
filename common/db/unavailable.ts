// Telling a database that is away (restarting, failing over, unreachable) from a statement that
// failed on its own merits, and waiting for it to come back. Only the first kind is worth
// trying again: the same statement fails the same way otherwise.

/** SQLSTATE classes and codes of a server that is going away or not there yet. */
const UNAVAILABLE_CODES = new Set([
  '57P01', // admin_shutdown: a fast shutdown or a failover ended the session
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections: sessions of a server coming back still hold every slot
]);
const NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);
/** pg's own errors for a connection that broke, which carry no code. */
const BROKEN = /Connection terminated|connection error and is not queryable|Client was closed/;

/** What a request that found the database away is told (HTTP 503, a protocol error envelope). */
export const DATABASE_UNAVAILABLE = 'The database is unavailable; retry shortly';

/** Whether `err` says the database is unreachable, rather than that the statement failed. */
export function isUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string')
    return UNAVAILABLE_CODES.has(code) || code.startsWith('08') || NODE_CODES.has(code);
  return err instanceof Error && BROKEN.test(err.message);
}

export interface RetryOptions {
  /** Gives up (rethrows the last error) after this long. */
  withinMs: number;
  /** Stops waiting when aborted (rethrows the last error). */
  signal?: AbortSignal | undefined;
  /** Called before each wait, with the error that caused it. */
  onRetry?: (err: unknown) => void;
  /** Other failures worth waiting out, besides those `isUnavailable` counts. */
  retryAlso?: (err: unknown) => boolean;
}

/** First pause between tries; it doubles up to the cap, so a database back is used within 1 s. */
const FIRST_PAUSE_MS = 50;
const MAX_PAUSE_MS = 1000;

/**
 * Runs `fn`, and again while it fails because the database is unavailable, for up to
 * `withinMs`. Only for work that may run twice: one statement whose effect a second run repeats
 * harmlessly, or a transaction (one that failed was rolled back).
 */
export async function retryWhileUnavailable<T>(
  fn: () => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const deadline = Date.now() + options.withinMs;
  let pause = FIRST_PAUSE_MS;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      const transient = isUnavailable(err) || options.retryAlso?.(err) === true;
      if (!transient || Date.now() + pause > deadline || options.signal?.aborted) throw err;
      options.onRetry?.(err);
      await sleep(pause, options.signal);
      pause = Math.min(pause * 2, MAX_PAUSE_MS);
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });
}
