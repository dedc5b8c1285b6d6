// A PostgreSQL server of a test file's own, which the test stops and starts again on the same
// port and data directory (an outage, a restart or a failover as clients see it). The suite's
// shared server cannot be stopped: every other test file uses it.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { createPool, startPostgresServer, type PostgresServer } from '../../common/db/index.js';
import { migrateRuntimeDatabase } from '../../runtime/index.js';
import { databaseUrl } from './databases.js';

export interface RestartablePostgres {
  /** A migrated database on this server. */
  url: string;
  /** The server's `postgres` database. */
  adminUrl: string;
  running(): boolean;
  /** Fast shutdown: sessions are ended, in-flight transactions roll back. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  destroy(): Promise<void>;
}

/** `durable`: fsync and synchronous commit on, as in production (benchmarks). */
export async function startRestartablePostgres(
  options: { durable?: boolean } = {},
): Promise<RestartablePostgres> {
  const ephemeral = !options.durable;
  const root = join(process.cwd(), '.cache', 'test-pg');
  mkdirSync(root, { recursive: true });
  const dir = mkdtempSync(join(root, 'restartable-'));
  const dataDir = join(dir, 'data');
  let server: PostgresServer | undefined = await startPostgresServer({ dataDir, ephemeral });
  const { port } = server;
  const adminUrl = server.url;
  const name = 'graphdock';
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = databaseUrl(adminUrl, name);
  const pool = createPool({ url, max: 2 });
  try {
    await migrateRuntimeDatabase(pool);
  } finally {
    await pool.end();
  }
  return {
    url,
    adminUrl,
    running: () => server !== undefined,
    stop: async () => {
      await server?.stop();
      server = undefined;
    },
    start: async () => {
      server ??= await startPostgresServer({ dataDir, port, ephemeral });
    },
    destroy: async () => {
      await server?.stop();
      server = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
