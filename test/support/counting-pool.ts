import type { Pool } from '../../common/db/index.js';

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
