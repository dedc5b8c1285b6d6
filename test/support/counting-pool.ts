import type { Pool } from '../../common/db/index.js';

/** `pool`, counting the queries sent through it (how many statements a piece of code costs). */
export function countingPool(pool: Pool): { pool: Pool; queries: () => number } {
  let count = 0;
  const counting = new Proxy(pool, {
    get(target, key, receiver) {
      if (key === 'query')
        return (...args: unknown[]) => {
          count++;
          return (target.query as (...a: unknown[]) => unknown)(...args);
        };
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { pool: counting, queries: () => count };
}
