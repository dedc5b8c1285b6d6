import type { Pool } from '../../common/db/index.js';
import pg from 'pg';

/** A statement as sent: its text and parameters. */
export interface SentStatement {
  text: string;
  values: unknown[];
}

/**
 * `pool`, counting the queries sent through it (how many statements a piece of code costs) and
 * keeping the last one sent (to explain it).
 */
export function countingPool(pool: Pool): {
  pool: Pool;
  queries: () => number;
  last: () => SentStatement | undefined;
} {
  let count = 0;
  let last: SentStatement | undefined;
  const counting = new Proxy(pool, {
    get(target, key, receiver) {
      if (key === 'query')
        return (...args: unknown[]) => {
          count++;
          const q = args[0] as string | { text: string; values?: unknown[] };
          last =
            typeof q === 'string'
              ? { text: q, values: (args[1] as unknown[] | undefined) ?? [] }
              : { text: q.text, values: q.values ?? [] };
          return (target.query as (...a: unknown[]) => unknown)(...args);
        };
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { pool: counting, queries: () => count, last: () => last };
}

/** A query as pg's `Client.query` receives it: text, or a config with text and a name. */
export type ClientQuery = string | { text?: string; name?: string; values?: unknown[] };

/**
 * Calls `onQuery` with every query any pg client of this process sends (pools inside code under
 * test included), and the values passed beside a text, until the returned function restores
 * `Client.query`.
 */
export function observeClientQueries(
  onQuery: (query: ClientQuery, values?: unknown) => void,
): () => void {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- only ever called with apply
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    onQuery(args[0] as ClientQuery, args[1]);
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
  return () => {
    pg.Client.prototype.query = query as typeof pg.Client.prototype.query;
  };
}
