// A process's first connection to its database, at start: a database still starting (a pod
// scheduled beside it, a failover) is waited for, and one that cannot be used ends the start with
// a message that names it, rather than the driver's stack trace.
import type { Pool, PoolClient } from './pool.js';
import { retryWhileUnavailable } from './unavailable.js';

/** The database could not be reached, or refused this process; the message says where and why. */
export class DatabaseUnreachableError extends Error {
  override name = 'DatabaseUnreachableError';
}

export interface StartWait {
  /** How long to keep trying while the server is away (0: one try). */
  withinMs: number;
  /** Called before each wait, with the failure and where the database is. */
  onWait?: (err: unknown, target: string) => void;
}

/**
 * Besides what `isUnavailable` counts, at start a name not resolved yet (a Service created with
 * the pod) or a socket file not there yet is worth waiting for.
 */
const NOT_YET = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ENOENT']);

/** `user@host:port/database` of a connection URL, never its password. */
export function describeDatabase(url: string | undefined): string {
  if (!url) return 'the configured database';
  try {
    // The socket form has credentials and no host (`postgres://user:pw@/db?host=/run/pg`), which
    // WHATWG URLs refuse: a placeholder host stands in.
    const u = URL.canParse(url) ? new URL(url) : new URL(url.replace(/@\//, '@_/'));
    const socket = u.searchParams.get('host');
    const host = socket || (u.hostname === '_' ? '' : u.hostname) || 'localhost';
    const where = `${host}${u.port ? `:${u.port}` : ''}${u.pathname.length > 1 ? u.pathname : ''}`;
    return u.username ? `${decodeURIComponent(u.username)}@${where}` : where;
  } catch {
    return 'the configured database (DATABASE_URL is not a URL)';
  }
}

/** A pooled connection, once the database answers; see StartWait. */
export async function firstConnection(pool: Pool, wait?: StartWait): Promise<PoolClient> {
  const target = describeDatabase((pool.options as { connectionString?: string }).connectionString);
  const started = Date.now();
  let waits = 0;
  try {
    return await retryWhileUnavailable(() => pool.connect(), {
      withinMs: wait?.withinMs ?? 0,
      retryAlso: (err) => NOT_YET.has(String((err as { code?: unknown }).code)),
      onRetry: (err) => (waits++, wait?.onWait?.(err, target)),
    });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const waited = ((Date.now() - started) / 1000).toFixed(1);
    const message = waits
      ? `cannot reach PostgreSQL at ${target} (tried for ${waited} s): ${reason}`
      : `cannot use PostgreSQL at ${target}: ${reason}`;
    throw new DatabaseUnreachableError(message, { cause: err });
  }
}

/** A StartWait that logs each wait as a warning. */
export function startWait(
  withinMs: number,
  logger: { warn: (fields: object, message: string) => void },
): StartWait {
  return {
    withinMs,
    onWait: (err, target) =>
      logger.warn(
        { database: target, reason: err instanceof Error ? err.message : String(err) },
        'waiting for PostgreSQL',
      ),
  };
}
