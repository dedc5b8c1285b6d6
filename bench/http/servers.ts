// Starts the two servers under test on loopback ports and stops them again, leaving nothing behind:
// (a) the official in-memory `@langchain/langgraph-api` server from bench/baseline (or another
// install of it, e.g. bench/baseline-protocol), and
// (b) `graphdock runtime` on a fresh, durable (fsync on, synchronous_commit on) PostgreSQL.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort, startPostgresServer } from '../../common/db/index.js';
import { imageNode, imageNodeFlags, imageNodeVersion } from '../../scripts/image-node.js';

export const REPO_ROOT = join(import.meta.dirname, '..', '..');
export const EXAMPLES_CONFIG = join(REPO_ROOT, 'examples', 'langgraph.json');
const BASELINE_DIR = join(REPO_ROOT, 'bench', 'baseline');
const GRAPHDOCK_BIN = join(REPO_ROOT, 'bin', 'graphdock.mjs');

export type ServerName = 'baseline' | 'graphdock';

export interface RunningServer {
  name: ServerName;
  url: string;
  /** Short description of what runs, for the report. */
  description: string;
  /** The tail of the server's stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
  /** Freezes (SIGSTOP) or thaws (SIGCONT) the server process, to keep it off the CPU. */
  freeze(frozen: boolean): void;
  /** The server process, for memory readings. */
  pid: number;
  /** Graphdock only: its PostgreSQL database. */
  databaseUrl?: string;
}

function freezer(child: { pid?: number | undefined }) {
  return (frozen: boolean) => {
    if (child.pid) process.kill(child.pid, frozen ? 'SIGSTOP' : 'SIGCONT');
  };
}

/**
 * Installs bench/baseline from its lock file on first use. `npm ci` refuses the lock when it names
 * optional platform packages that the registry did not serve when the lock was written (e.g.
 * `@tailwindcss/oxide-*`, pulled in by @langchain/langgraph-ui); `npm install --no-save` then
 * installs the same locked versions without rewriting the lock.
 */
export function ensureBaselineInstalled(dir = BASELINE_DIR): void {
  if (existsSync(join(dir, 'node_modules'))) return;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const npmIn = (args: string[], stdio: 'pipe' | 'inherit') =>
    spawnSync(npm, [...args, '--prefix', dir, '--no-audit', '--no-fund'], { stdio });
  const name = relative(REPO_ROOT, dir);
  console.log(`Installing ${name} (npm ci) ...`);
  const ci = npmIn(['ci'], 'pipe');
  if (ci.status === 0) return;
  console.log(
    `npm ci failed, installing the locked versions with npm install --no-save:\n${ci.stderr.toString()}`,
  );
  const install = npmIn(['install', '--no-save'], 'inherit');
  if (install.status !== 0) {
    throw new Error(`npm install --prefix ${name} failed (${install.status})`);
  }
}

function apiVersion(modules: string): string {
  const manifest = join(modules, '@langchain', 'langgraph-api', 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

export function graphdockAvailable(): boolean {
  return existsSync(GRAPHDOCK_BIN);
}

type GraphSpec = string | { path: string; description?: string };

/** The example graphs, with file paths rewritten relative to `cwd` (how the baseline wants them). */
function graphsRelativeTo(cwd: string, configFile = EXAMPLES_CONFIG): Record<string, GraphSpec> {
  const config = JSON.parse(readFileSync(configFile, 'utf8')) as {
    graphs: Record<string, GraphSpec>;
  };
  const configDir = dirname(configFile);
  const rebase = (spec: string) => {
    const [file = '', symbol] = spec.split(':', 2);
    const rel = relative(cwd, resolve(configDir, file));
    return symbol === undefined ? rel : `${rel}:${symbol}`;
  };
  return Object.fromEntries(
    Object.entries(config.graphs).map(([id, spec]) => [
      id,
      typeof spec === 'string' ? rebase(spec) : { ...spec, path: rebase(spec.path) },
    ]),
  );
}

/**
 * `nWorkers`: the baseline's queue workers (its CLI default is 10; idle for HTTP-only work).
 * `dir` and `config`: another install of the official server (e.g. bench/baseline-protocol, which
 * holds 1.5.1) and another graph config than the examples.
 */
export async function startBaseline(
  nWorkers = 1,
  options: { dir?: string; config?: string } = {},
): Promise<RunningServer> {
  const dir = options.dir ?? BASELINE_DIR;
  ensureBaselineInstalled(dir);
  const cwd = mkdtempSync(join(tmpdir(), 'graphdock-bench-baseline-'));
  const port = await freePort();
  const serverOptions = {
    port,
    nWorkers,
    host: '127.0.0.1',
    cwd,
    graphs: graphsRelativeTo(cwd, options.config),
  };
  const modules = join(dir, 'node_modules');
  const nodeFlags = imageNodeFlags();
  // The same loaders `langgraphjs dev` uses (tsx + the package's preload hook), without `watch`.
  const args = [
    ...nodeFlags,
    '--import',
    pathToFileURL(join(modules, 'tsx', 'dist', 'loader.mjs')).href,
    '--import',
    pathToFileURL(join(modules, '@langchain', 'langgraph-api', 'dist', 'preload.mjs')).href,
    join(dir, 'start.ts'),
    JSON.stringify(serverOptions),
  ];
  const child = spawn(imageNode(), args, {
    cwd,
    env: { ...process.env, LOG_LEVEL: 'warn', NODE_ENV: 'development' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = captureOutput(child);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopChild(child);
    rmSync(cwd, { recursive: true, force: true });
  };
  try {
    await waitForOk(url, child, log);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    name: 'baseline',
    url,
    description: `@langchain/langgraph-api ${apiVersion(modules)} in-memory server (${nWorkers} queue workers), LOG_LEVEL=warn, node ${imageNodeVersion()} ${nodeFlags.join(' ')}`,
    output: log,
    stop,
    freeze: freezer(child),
    pid: child.pid ?? 0,
  };
}

/** `slots`: N_JOBS_PER_WORKER, runs the server executes at once (10, its default, unless given). */
export async function startGraphdock(
  options: { slots?: number; config?: string; nodeFlags?: string[] } = {},
): Promise<RunningServer> {
  const slots = options.slots ?? 10;
  const dir = mkdtempSync(join(tmpdir(), 'graphdock-bench-'));
  const cleanups: (() => Promise<void>)[] = [
    () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
  ];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  try {
    // Durable settings: fsync, synchronous_commit and full_page_writes stay at their defaults (on).
    const pg = await startPostgresServer({ dataDir: join(dir, 'pg'), ephemeral: false });
    cleanups.push(() => pg.stop());
    const port = await freePort();
    const nodeFlags = [...imageNodeFlags(), ...(options.nodeFlags ?? [])];
    const args = [
      ...nodeFlags,
      GRAPHDOCK_BIN,
      'runtime',
      '--config',
      options.config ?? EXAMPLES_CONFIG,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
    ];
    const child = spawn(imageNode(), args, {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        DATABASE_URL: pg.url,
        LOG_LEVEL: 'warn',
        N_JOBS_PER_WORKER: String(slots),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(() => stopChild(child));
    const url = `http://127.0.0.1:${port}`;
    const log = captureOutput(child);
    await waitForOk(url, child, log);
    return {
      name: 'graphdock',
      url,
      description: `graphdock runtime on PostgreSQL (durable: fsync and synchronous_commit on), LOG_LEVEL=warn, N_JOBS_PER_WORKER=${slots}, node ${imageNodeVersion()} ${nodeFlags.join(' ')}`,
      output: log,
      stop,
      freeze: freezer(child),
      pid: child.pid ?? 0,
      databaseUrl: pg.url,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function captureOutput(child: ChildProcess): () => string {
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return () => output;
}

async function waitForOk(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`server at ${url} exited (${child.exitCode ?? child.signalCode}):\n${log()}`);
    }
    try {
      const res = await fetch(`${url}/ok`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`server at ${url} did not answer /ok within 120 s:\n${log()}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
