import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateRuntimeDatabase } from '../../runtime/index.js';
import { createPool } from '../../common/db/index.js';

export const TEMPLATE_DB = 'graphdock_template';

export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(adminUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Builds the template once per run: every runtime migration plus the checkpointer tables. */
export async function prepareTemplate(adminUrl: string): Promise<void> {
  await admin(adminUrl, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DB} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${TEMPLATE_DB}`);
  });
  const pool = createPool({ url: databaseUrl(adminUrl, TEMPLATE_DB), max: 2 });
  try {
    await migrateRuntimeDatabase(pool);
  } finally {
    await pool.end();
  }
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database cloned from the template; dropped by `drop()`. */
export async function createTestDatabase(adminUrl: string): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  await admin(adminUrl, async (c) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await c.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DB}`);
        return;
      } catch (err) {
        // Two clones at the same instant can collide on the template; try again shortly.
        if (attempt >= 20 || !/being accessed/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  return {
    name,
    url: databaseUrl(adminUrl, name),
    drop: () =>
      admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}
