// The database of `graphdock dev`: DATABASE_URL when set, else the embedded PostgreSQL persisted
// under GRAPHDOCK_HOME (./.graphdock). Kept apart from the runtime's modules: the reloading
// primary of `graphdock dev` owns the store and loads nothing else.
import { join } from 'node:path';
import type { ProcessEnv } from '../common/config/index.js';
import { startPostgresServer, type PostgresServer } from '../common/db/index.js';
import type { Logger } from '../common/logging/index.js';

export interface DevStore {
  databaseUrl: string;
  /** The embedded server, when this process started one. */
  embedded?: PostgresServer;
}

export async function openDevStore(env: ProcessEnv, logger: Logger): Promise<DevStore> {
  if (env.databaseUrl) return { databaseUrl: env.databaseUrl };
  const dataDir = join(env.home ?? join(process.cwd(), '.graphdock'), 'pgdata');
  const embedded = await startPostgresServer({
    dataDir,
    onLog: (line) => logger.debug({ postgres: line }),
    onLeftBehind: (pid) =>
      logger.warn(
        { dataDir, pid },
        'stopping the PostgreSQL an earlier graphdock dev left running',
      ),
  });
  logger.info({ dataDir }, 'using the embedded PostgreSQL store');
  return { databaseUrl: embedded.url, embedded };
}
