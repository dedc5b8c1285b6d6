import pg from 'pg';
import { useFastByteaArrays } from './bytea-array.js';
import { decodeJsonOnRead } from './jsonb.js';
import { preparingClient, StatementNames } from './prepared.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// Return bigint counts as numbers and timestamps as Date objects (the default).
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
useFastByteaArrays();
// json and jsonb values are written through `jsonb()` and come back decoded (jsonb.ts).
decodeJsonOnRead();

export interface PoolOptions {
  url: string;
  max?: number;
  applicationName?: string;
  /** Prepare hot parameterised statements on the server (default true; see StatementNames). */
  prepareHotStatements?: boolean;
}

export function createPool(options: PoolOptions): Pool {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 20,
    application_name: options.applicationName ?? 'graphdock',
    idleTimeoutMillis: 30_000,
    ...(options.prepareHotStatements === false
      ? {}
      : { Client: preparingClient(new StatementNames()) }),
  });
  // A checked-out client has no listener of the pool's: one whose server ends the session (a
  // restart, a failover) between two of its queries would emit an unhandled 'error' and end
  // the process. Its holder sees the failure on its next query; the pool drops it on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  // An idle client whose session ends is dropped by the pool, which then emits 'error': with no
  // listener that too would end the process (a test dropping its database while a pool ends).
  // Servers add a listener that logs it.
  pool.on('error', () => undefined);
  retryDeadlockVictims(pool);
  return pool;
}

/** SQLSTATE of a statement PostgreSQL rolled back to break a deadlock. */
const DEADLOCK = '40P01';
const DEADLOCK_TRIES = 3;

/**
 * A statement sent through the pool runs alone in its own transaction: one PostgreSQL rolled
 * back to break a deadlock left nothing behind, so it is sent again. (A run's end, a thread's
 * values after a state update: failing them would fail the run or leave the thread behind its
 * checkpoint.) Statements of an explicit transaction are not: the caller retries the whole.
 */
function retryDeadlockVictims(pool: Pool): void {
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  const retried = async (args: unknown[]) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await query(...args);
      } catch (err) {
        if ((err as { code?: string }).code !== DEADLOCK || attempt >= DEADLOCK_TRIES) throw err;
      }
    }
  };
  pool.query = ((...args: unknown[]) =>
    // The callback form and submittables (cursors, streams) are left as pg has them.
    typeof args.at(-1) === 'function' ||
    typeof (args[0] as { submit?: unknown } | null)?.submit === 'function'
      ? query(...args)
      : retried(args)) as Pool['query'];
}

/** Runs `fn` in a transaction on one pooled connection. */
export async function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
