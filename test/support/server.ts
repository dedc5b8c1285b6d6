// Starts the real `graphdock` CLI as a child process, the way users run it, and waits for /ok.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
}

export interface RunningServer {
  url: string;
  port: number;
  process: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const port = options.port ?? (await freePort());
  const args = [
    join(REPO_ROOT, 'bin', 'graphdock.mjs'),
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
    ...options.env,
  };
  if (options.databaseUrl) env.DATABASE_URL = options.databaseUrl;
  else if (!('DATABASE_URL' in (options.env ?? {}))) delete env.DATABASE_URL;
  const child = spawn(process.execPath, args, {
    cwd: options.cwd ?? REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-20_000)));
  child.stderr?.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-20_000)));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  await waitForOk(`${url}${options.okPath ?? '/ok'}`, child, () => log);
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

async function waitForOk(okUrl: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${log()}`);
    try {
      const res = await fetch(okUrl);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not answer /ok within 60 s:\n${log()}`);
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
