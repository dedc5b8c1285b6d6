// A pool whose idle connection's session is ended by the server (a restart, a failover, a
// database dropped with FORCE) drops that connection and keeps serving; nothing reaches the
// process as an uncaught error (vitest fails the run on one). Pools without a listener of their
// own (the export Job's, the operator's provisioner) once ended their process this way.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, type Pool } from '../../common/db/index.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

let db: TestDatabase;
let pool: Pool;
beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  pool = createPool({ url: db.url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe('createPool', () => {
  it('survives the server ending an idle connection, and serves the next query', async () => {
    const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    expect(pool.idleCount).toBe(1);
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    } finally {
      await admin.end();
    }
    const deadline = Date.now() + 10_000;
    while (pool.idleCount > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(pool.idleCount).toBe(0);
    const again = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    expect(again.rows[0]!.pid).not.toBe(rows[0]!.pid);
  });
});
