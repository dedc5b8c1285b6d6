export {
  createPool,
  withTransaction,
  type Pool,
  type PoolClient,
  type PoolOptions,
} from './pool.js';
export {
  MigrationError,
  migrate,
  readMigrationDir,
  type Migration,
  type MigrateOptions,
} from './migrator.js';
export {
  SqlParams,
  isoFromUtcText,
  utcText,
  whereClause,
  type EmbeddedStatement,
  type EmbeddedRead,
  type ColumnRead,
} from './sql.js';
export { StatementNames, type PreparedStatementOptions } from './prepared.js';
export { parseByteaArray } from './bytea-array.js';
export { jsonb, encodeJsonText, decodeJsonText, decodeStoredText } from './jsonb.js';
export { PER_TURN, sameTurnReads } from './same-turn.js';
export {
  DatabaseUnreachableError,
  describeDatabase,
  startWait,
  type StartWait,
} from './first-connection.js';
export {
  DATABASE_UNAVAILABLE,
  isUnavailable,
  retryWhileUnavailable,
  type RetryOptions,
} from './unavailable.js';
export {
  EmbeddedPostgresError,
  startPostgresServer,
  freePort,
  type PostgresServer,
  type PostgresServerOptions,
} from './postgres-server.js';
export {
  LEASE_HELD,
  LeaseLostError,
  fencedStatement,
  isLeaseLost,
  leaseLost,
  type RunFence,
} from './fence.js';
export { copyToFile, inlineParams, type CopyResult } from './copy.js';
