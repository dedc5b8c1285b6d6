// The pool prepares hot parameterised statements on the server and leaves everything else alone.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, type Pool } from '../../common/db/index.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

let db: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  pool = createPool({ url: db.url, max: 1 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const preparedTexts = async () =>
  (await pool.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).rows
    .map((r) => r.statement)
    .join('\n');

describe('prepared hot statements', () => {
  it('prepares a parameterised text after a few runs and answers the same', async () => {
    const text = 'SELECT $1::int + 1 AS next';
    const answers: number[] = [];
    for (let i = 0; i < 5; i++)
      answers.push((await pool.query<{ next: number }>(text, [i])).rows[0]!.next);
    expect(answers).toEqual([1, 2, 3, 4, 5]);
    const viaConfig = await pool.query<{ next: number }>({ text, values: [41] });
    expect(viaConfig.rows[0]?.next).toBe(42);
    expect(await preparedTexts()).toContain(text);
  });

  it('keeps multi-statement texts, selects of * and array rows working', async () => {
    for (let i = 0; i < 4; i++) {
      await pool.query('CREATE TEMP TABLE IF NOT EXISTS t (v int); INSERT INTO t VALUES (1)');
      const star = await pool.query('SELECT * FROM t WHERE v = $1', [1]);
      expect(star.rows.length).toBe(i + 1);
      const arrays = await pool.query({
        text: 'SELECT $1::int AS v, 2 AS w',
        values: [i],
        rowMode: 'array',
      });
      expect(arrays.rows).toEqual([[i, 2]]);
    }
    const prepared = await preparedTexts();
    expect(prepared).not.toContain('SELECT * FROM t');
    expect(prepared).toContain('SELECT $1::int AS v, 2 AS w');
  });

  it('can be turned off', async () => {
    const plain = createPool({ url: db.url, max: 1, prepareHotStatements: false });
    try {
      for (let i = 0; i < 5; i++) await plain.query('SELECT $1::int AS off', [i]);
      const { rows } = await plain.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_prepared_statements',
      );
      expect(rows[0]?.n).toBe(0);
    } finally {
      await plain.end();
    }
  });
});
