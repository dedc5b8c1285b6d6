// Starts the real `graphdock` CLI as a child process, the way users run it, and waits for /ok.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../common/db/index.js';

export const REPO_ROOT = join(import.meta.dirname, '..', '..');
export const EXAMPLES_CONFIG = join(REPO_ROOT, 'examples', 'langgraph.json');

/** The graph ids of the example config, which the servers under test run by default. */
export function exampleGraphIds(): string[] {
  const config = JSON.parse(readFileSync(EXAMPLES_CONFIG, 'utf8')) as { graphs: object };
  return Object.keys(config.graphs);
}

export interface ServerOptions {
  command?: 'runtime' | 'dev' | 'api';
  config?: string;
  databaseUrl?: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
  port?: number;
  extraArgs?: string[];
  /** Where readiness is probed; `/api/ok` when the config sets `http.mount_prefix: "/api"`. */
  okPath?: string;
  /** The node binary and flags to run it with; by default this process's node, no flags. */
  node?: { binary: string; flags: string[] };
  /** A script run instead of bin/graphdock.mjs with the same arguments (test entry points). */
  entry?: string;
  /** How long start-up may take to answer /ok (60 s by default). */
  okTimeoutMs?: number;
  /** Every chunk the process writes to stdout or stderr (output() keeps only the last 20 KB). */
  onOutput?: (chunk: string) => void;
}

export interface RunningServer {
  url: string;
  port: number;
  process: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, options.port ?? (await freePort()));
    } catch (err) {
      // Another process took the free port before our server bound it: pick another.
      const taken = err instanceof Error && /EADDRINUSE|already in use/.test(err.message);
      if (!taken || options.port !== undefined || attempt >= 3) throw err;
    }
  }
}

async function startOnce(options: ServerOptions, port: number): Promise<RunningServer> {
  const args = [
    ...(options.node?.flags ?? []),
    options.entry ?? join(REPO_ROOT, 'bin', 'graphdock.mjs'),
    options.command ?? 'runtime',
    '--config',
    options.config ?? EXAMPLES_CONFIG,
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
    ...(options.extraArgs ?? []),
  ];
  const env: Record<string, string | undefined> = {
    ...process.env,
    LOG_LEVEL: 'warn',
    // Reading graphs' TypeScript types takes 20-60 s of CPU here: only the files that test it
    // (typed-schemas.test.ts) turn it on.
    GRAPHDOCK_SCHEMAS_FROM_TYPES: 'false',
    ...options.env,
  };
  if (options.databaseUrl) env.DATABASE_URL = options.databaseUrl;
  else if (!('DATABASE_URL' in (options.env ?? {}))) delete env.DATABASE_URL;
  const child = spawn(options.node?.binary ?? process.execPath, args, {
    cwd: options.cwd ?? REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  for (const stream of [child.stdout, child.stderr])
    stream?.on('data', (c: Buffer) => {
      log = (log + c.toString()).slice(-20_000);
      options.onOutput?.(c.toString());
    });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  await waitForOk(`${url}${options.okPath ?? '/ok'}`, child, () => log, options.okTimeoutMs);
  return {
    url,
    port,
    process: child,
    output: () => log,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * Whether the socket listening on `port` belongs to process `pid` (Linux: the listener's inode in
 * /proc/net/tcp*, among the process's open file descriptors). Another test file's server can
 * take a port between freePort() and our server's bind; its /ok must not pass for ours.
 */
function listensOn(pid: number | undefined, port: number): boolean {
  if (!pid || process.platform !== 'linux') return true;
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is "ADDR:PORT"; state 0A is LISTEN; column 9 is the inode.
      if (cols[1]?.endsWith(`:${hex}`) && cols[3] === '0A' && cols[9]) inodes.add(cols[9]);
    }
  }
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        return inodes.has(/^socket:\[(\d+)\]$/.exec(target)?.[1] ?? '');
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

async function waitForOk(
  okUrl: string,
  child: ChildProcess,
  log: () => string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const port = Number(new URL(okUrl).port);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${log()}`);
    try {
      const res = await fetch(okUrl);
      if (res.ok && listensOn(child.pid, port)) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not answer /ok within ${timeoutMs / 1000} s:\n${log()}`);
}

/** Runs a CLI subcommand to completion and returns its exit code and output. */
export async function runCli(args: string[], env: Record<string, string | undefined> = {}) {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'graphdock.mjs'), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}
