// A test worker that dies (SIGKILL, so no exit hooks run) must not leave the cluster's
// processes or its temp folder behind: the detached watchdog cleans up.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { REPO_ROOT } from '../support/server.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a killed owner process leaves no cluster processes or files behind', async () => {
  // node itself with the tsx loader: the `tsx` shim would fork, and killing the shim would
  // leave the real owner alive.
  const script = join(import.meta.dirname, 'start-cli.ts');
  const owner = spawn(process.execPath, ['--import', 'tsx', script, '--nodes', '1'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const started = await new Promise<{ pids: number[]; workDir: string }>((resolve, reject) => {
    let out = '';
    owner.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as { pids: number[]; workDir: string });
    });
    owner.once('exit', (code) => reject(new Error(`start-cli exited early (${code})`)));
  });
  expect(started.pids).toHaveLength(5);
  expect(started.pids.every(alive)).toBe(true);

  owner.kill('SIGKILL');
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && (started.pids.some(alive) || existsSync(started.workDir))) {
    await new Promise((r) => setTimeout(r, 250));
  }
  expect(started.pids.filter(alive)).toEqual([]);
  expect(existsSync(started.workDir)).toBe(false);
});
