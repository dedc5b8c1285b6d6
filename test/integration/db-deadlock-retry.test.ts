// A statement sent through the pool that PostgreSQL picks to break a deadlock is sent again, and
// succeeds once the other transaction is through: its caller never sees `deadlock detected`. A
// statement of an explicit transaction is not: only its caller can go again.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, withTransaction, type Pool } from '../../common/db/index.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

let db: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  pool = createPool({ url: db.url, max: 4 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/**
 * Rows 2 then 1 (a scan meets them in that order). `other` locks row 1 and, once the statement
 * under test holds row 2 and waits for row 1, asks for row 2: a deadlock. `other` waits longer
 * before checking for one, so the statement under test is the one PostgreSQL rolls back.
 */
async function deadlockWith(statement: (sql: string) => Promise<unknown>) {
  await pool.query('DROP TABLE IF EXISTS pairs; CREATE TABLE pairs (id int PRIMARY KEY, n int)');
  await pool.query('INSERT INTO pairs VALUES (2, 0); INSERT INTO pairs VALUES (1, 0)');
  const other = new pg.Client({ connectionString: db.url });
  await other.connect();
  try {
    await other.query("BEGIN; SET LOCAL deadlock_timeout = '5s'");
    await other.query('UPDATE pairs SET n = n + 10 WHERE id = 1');
    const result = statement('UPDATE pairs SET n = n + 1 WHERE id IN (1, 2)').then(
      () => 'ok',
      (err: { code?: string }) => err.code,
    );
    // The statement holds row 2 and waits for row 1.
    for (let waited = 0; ; waited += 20) {
      const { rows } = await pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE pairs SET n = n + 1%'",
      );
      if (rows[0]!.n > 0) break;
      if (waited > 10_000) throw new Error('the statement never waited');
      await new Promise((r) => setTimeout(r, 20));
    }
    await other.query('UPDATE pairs SET n = n + 10 WHERE id = 2');
    await other.query('COMMIT');
    const outcome = await result;
    const { rows } = await pool.query<{ id: number; n: number }>(
      'SELECT id, n FROM pairs ORDER BY id',
    );
    return { outcome, rows };
  } finally {
    await other.end();
  }
}

describe('a deadlock victim', () => {
  it('sent alone through the pool is sent again, and its update lands once', async () => {
    const { outcome, rows } = await deadlockWith((sql) => pool.query(sql));
    expect(outcome).toBe('ok');
    expect(rows).toEqual([
      { id: 1, n: 11 },
      { id: 2, n: 11 },
    ]);
  }, 30_000);

  it('inside a transaction reaches its caller', async () => {
    const { outcome, rows } = await deadlockWith((sql) =>
      withTransaction(pool, (client) => client.query(sql)),
    );
    expect(outcome).toBe('40P01');
    expect(rows).toEqual([
      { id: 1, n: 10 },
      { id: 2, n: 10 },
    ]);
  }, 30_000);
});
