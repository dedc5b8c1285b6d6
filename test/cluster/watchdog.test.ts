// A test worker that dies (SIGKILL, so no exit hooks run) must not leave the cluster's
// processes or its temp folder behind: the detached watchdog cleans up.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../support/server.js';
import { BUSYBOX_IMAGE, REAL_NODE_LABEL } from './index.js';
import { nodeLeftovers } from './node-leftovers.js';
import { ensureNodeTools, ensureTools } from './tools.js';
import { isAlive } from '../support/processes.js';

const run = promisify(execFile);

async function kubectl(kubeconfig: string, args: string[]): Promise<string> {
  const bin = join(await ensureTools(), 'kubectl');
  return (await run(bin, ['--kubeconfig', kubeconfig, ...args], { timeout: 120_000 })).stdout;
}

interface Started {
  pids: number[];
  workDir: string;
  realNode?: { netns: string; cgroup: string };
}

/** start-cli.ts in a child (node itself with the tsx loader: the `tsx` shim would fork, and
 * killing the shim would leave the real owner alive); resolves with its JSON line. */
async function startOwner(args: string[]): Promise<{ owner: ChildProcess; started: Started }> {
  const script = join(import.meta.dirname, 'start-cli.ts');
  const owner = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const started = await new Promise<Started>((resolve, reject) => {
    let out = '';
    owner.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as Started);
    });
    owner.once('exit', (code) => reject(new Error(`start-cli exited early (${code})`)));
  });
  return { owner, started };
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !(await check())) await new Promise((r) => setTimeout(r, 250));
}

test('a killed owner process leaves no cluster processes or files behind', async () => {
  const { owner, started } = await startOwner(['--nodes', '1']);
  expect(started.pids).toHaveLength(5);
  expect(started.pids.every(isAlive)).toBe(true);

  owner.kill('SIGKILL');
  await until(() => !started.pids.some(isAlive) && !existsSync(started.workDir), 30_000);
  expect(started.pids.filter(isAlive)).toEqual([]);
  expect(existsSync(started.workDir)).toBe(false);
});

test('a killed owner of a real node leaves no containers, mounts, cgroups or namespace behind', async () => {
  const busybox = join(await ensureNodeTools(), 'images', 'busybox.oci.tar');
  const { owner, started } = await startOwner(['--nodes', '0', '--real-node', '--load', busybox]);
  const realNode = started.realNode;
  if (!realNode) throw new Error('start-cli printed no realNode');
  // A running container too, so there is a shim, a pod network namespace and mounts to undo.
  const kubeconfig = join(started.workDir, 'admin.kubeconfig');
  await kubectl(kubeconfig, [
    'run',
    'sleeper',
    `--image=${BUSYBOX_IMAGE}`,
    '--image-pull-policy=Never',
    `--overrides={"spec":{"nodeSelector":{"${REAL_NODE_LABEL}":"real"}}}`,
    '--command',
    '--',
    'sleep',
    '3600',
  ]);
  await kubectl(kubeconfig, ['wait', '--for=condition=Ready', 'pod/sleeper', '--timeout=90s']);
  const traces = {
    workDir: started.workDir,
    netns: realNode.netns,
    cgroup: realNode.cgroup,
    hostIf: `gdh${realNode.netns.replace(/^graphdock-/, '')}`,
  };
  expect((await nodeLeftovers(traces)).length).toBeGreaterThan(0);

  owner.kill('SIGKILL');
  await until(async () => (await nodeLeftovers(traces)).length === 0, 60_000);
  expect(await nodeLeftovers(traces)).toEqual([]);
  expect(started.pids.filter(isAlive)).toEqual([]);
});
