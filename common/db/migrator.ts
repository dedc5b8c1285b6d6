// Applies ordered SQL migrations once per database, under an advisory lock so that several
// replicas starting together serialise on it instead of racing.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { firstConnection, type StartWait } from './first-connection.js';
import type { Pool, PoolClient } from './pool.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export interface MigrateOptions {
  /** Namespace of the migration set, e.g. `runtime`; each area keeps its own versions. */
  area: string;
  migrations: Migration[];
  /** Extra setup run while the lock is held (e.g. the checkpointer's own tables). */
  afterMigrations?: (client: PoolClient) => Promise<void>;
  /** Migrating is a process's first use of its database: how long to wait for it to answer. */
  wait?: StartWait;
}

const FILE_PATTERN = /^(\d+)_([\w-]+)\.sql$/;

export function readMigrationDir(dir: string): Migration[] {
  return readdirSync(dir)
    .map((file) => ({ file, match: FILE_PATTERN.exec(file) }))
    .filter((entry): entry is { file: string; match: RegExpExecArray } => entry.match !== null)
    .map(({ file, match }) => ({
      version: Number(match[1]),
      name: match[2] ?? file,
      sql: readFileSync(join(dir, file), 'utf8'),
    }))
    .sort((a, b) => a.version - b.version);
}

/**
 * Migrations could not be applied; for a missing privilege the message names the role and the
 * grant it needs.
 */
export class MigrationError extends Error {
  override name = 'MigrationError';
}

export async function migrate(pool: Pool, options: MigrateOptions): Promise<number[]> {
  const client = await firstConnection(pool, options.wait);
  try {
    return await applyMigrations(client, options);
  } catch (err) {
    throw new MigrationError(failure(err, options.area, client), { cause: err });
  } finally {
    client.release();
  }
}

/** PostgreSQL 15 and later no longer let every role create tables in `public`. */
const INSUFFICIENT_PRIVILEGE = '42501';

/** The role and database a pooled client connected as (pg's Client has both). */
interface Connected {
  user?: string;
  database?: string;
}

function failure(err: unknown, area: string, { user, database }: Connected): string {
  const reason = err instanceof Error ? err.message : String(err);
  const text = `cannot migrate the ${area} tables: ${reason}`;
  const code = ((err as { cause?: { code?: unknown } }).cause ?? err) as { code?: unknown };
  if (code.code !== INSUFFICIENT_PRIVILEGE) return text;
  // Tables need CREATE on the schema; the `cube` extension (trusted) needs CREATE on the database.
  const role = user ?? '<role>';
  const db = database ?? '<database>';
  return (
    `${text} (the role "${role}" must own the database, or be granted CREATE on it and on its ` +
    `schema: GRANT CREATE ON DATABASE ${db} TO ${role}; GRANT CREATE ON SCHEMA public TO ${role})`
  );
}

async function applyMigrations(client: PoolClient, options: MigrateOptions): Promise<number[]> {
  await client.query('SELECT pg_advisory_lock(hashtext($1))', [
    `graphdock:migrate:${options.area}`,
  ]);
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS graphdock_migrations (
      area text NOT NULL,
      version integer NOT NULL,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (area, version))`);
    const { rows } = await client.query<{ version: number }>(
      'SELECT version FROM graphdock_migrations WHERE area = $1',
      [options.area],
    );
    const done = new Set(rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of options.migrations) {
      if (done.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query(
          'INSERT INTO graphdock_migrations (area, version, name) VALUES ($1, $2, $3)',
          [options.area, m.version, m.name],
        );
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(
          `migration ${options.area}/${m.version}_${m.name} failed: ${(err as Error).message}`,
          {
            cause: err,
          },
        );
      }
      applied.push(m.version);
    }
    await options.afterMigrations?.(client);
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [
      `graphdock:migrate:${options.area}`,
    ]);
  }
}
