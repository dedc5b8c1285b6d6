// Small process and HTTP helpers for the cluster harness.
import { execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'node:https';
import { freePort } from '../../common/db/index.js';
import type { Pki, ClientCert } from './certs.js';
import type { ClusterProcess } from './process.js';

export interface CommandOptions {
  /** Written to the command's stdin (e.g. a manifest for `apply -f -`). */
  input?: string;
  timeoutMs?: number;
}

/** GET /readyz with the admin client certificate; true on 200. */
export async function readyz(port: number, pki: Pki, admin: ClientCert): Promise<boolean> {
  const [ca, cert, key] = await Promise.all([
    readFile(pki.caCert),
    readFile(admin.certPath),
    readFile(admin.keyPath),
  ]);
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/readyz', ca, cert, key, timeout: 5_000 },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Polls `check` until true; fails early when one of `processes` has died. */
export async function waitFor(
  what: string,
  processes: ClusterProcess[],
  check: () => Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  while (Date.now() < deadline) {
    for (const p of processes) {
      const exit = p.describeExit();
      if (exit) throw new Error(`${exit} while waiting for ${what}`);
    }
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${lastError}` : ''}`,
  );
}

export function runTool(
  command: string,
  args: string[],
  env: Record<string, string>,
  options: CommandOptions = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      {
        env: { ...process.env, ...env },
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (error) {
          const name = command.split('/').pop();
          reject(
            new Error(
              `${name} ${args.join(' ')} failed: ${stderr.trim() || stdout.trim() || error.message}`,
            ),
          );
        } else resolve(stdout);
      },
    );
    child.stdin?.end(options.input ?? '');
  });
}

export async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/**
 * A detached shell that outlives a crashed test worker: when this Node process disappears
 * without calling stop(), it kills the cluster's processes (pids file), undoes a real node's
 * containers, mounts, cgroups and network namespace (node-cleanup.sh), and removes the folder.
 */
export function startWatchdog(dir: string): ReturnType<typeof spawn> {
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done
[ -f "$1/pids" ] && kill -9 $(cat "$1/pids") 2>/dev/null
[ -f "$1/node/node.env" ] && bash "$2" "$1/node"
rm -rf "$1"`;
  const cleanup = join(import.meta.dirname, 'node-cleanup.sh');
  const child = spawn('bash', ['-c', script, 'graphdock-cluster-watchdog', dir, cleanup], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  return child;
}
