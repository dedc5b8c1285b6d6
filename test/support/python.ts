// A Python virtual environment holding the official `langgraph-sdk` client and pytest, for tests
// that drive the server from Python. Built once under .cache/ and rebuilt only when
// test/python/requirements.txt changes.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
export const PYTHON_TESTS_DIR = join(REPO_ROOT, 'test', 'python');
export const REQUIREMENTS_FILE = join(PYTHON_TESTS_DIR, 'requirements.txt');
export const VENV_DIR = join(REPO_ROOT, '.cache', 'venv-sdk');

/** Written last, so an interrupted install is redone on the next call. */
const STAMP_FILE = join(VENV_DIR, '.requirements.sha256');
/** Guards the venv against another process (another vitest worker) building it at once. */
const LOCK_DIR = `${VENV_DIR}.lock`;
const LOCK_STALE_MS = 15 * 60_000;
const INSTALL_TIMEOUT_MS = 10 * 60_000;

let pending: Promise<string> | undefined;

/**
 * Returns the path of the venv's python, creating the venv and installing the pinned
 * requirements first when it is missing or requirements.txt changed. Concurrent calls in one
 * process share a single build; a failed build is retried by the next call.
 */
export function ensurePythonVenv(): Promise<string> {
  pending ??= buildVenv().catch((err: unknown) => {
    pending = undefined;
    throw err;
  });
  return pending;
}

export function venvPython(venvDir: string = VENV_DIR): string {
  return process.platform === 'win32'
    ? join(venvDir, 'Scripts', 'python.exe')
    : join(venvDir, 'bin', 'python');
}

async function buildVenv(): Promise<string> {
  const python = venvPython();
  const wanted = createHash('sha256')
    .update(await readFile(REQUIREMENTS_FILE))
    .digest('hex');
  if (await isUpToDate(python, wanted)) return python;

  await mkdir(join(REPO_ROOT, '.cache'), { recursive: true });
  const release = await acquireLock();
  try {
    // Another process may have finished the same build while this one waited for the lock.
    if (await isUpToDate(python, wanted)) return python;
    await rm(VENV_DIR, { recursive: true, force: true });
    const basePython = process.env.GRAPHDOCK_PYTHON ?? 'python3';
    await run(basePython, ['-m', 'venv', VENV_DIR], 'create the virtual environment');
    await run(
      python,
      [
        '-m',
        'pip',
        'install',
        '--disable-pip-version-check',
        '--no-input',
        '--progress-bar',
        'off',
        '-r',
        REQUIREMENTS_FILE,
      ],
      'install test/python/requirements.txt',
    );
    await writeFile(STAMP_FILE, `${wanted}\n`);
    return python;
  } finally {
    await release();
  }
}

async function isUpToDate(python: string, wanted: string): Promise<boolean> {
  if (!existsSync(python)) return false;
  const stamp = await readFile(STAMP_FILE, 'utf8').catch(() => '');
  if (stamp.trim() !== wanted) return false;
  // The interpreter the venv links to may have gone away (a Python upgrade): rebuild then.
  try {
    await run(python, ['-c', 'import langgraph_sdk, pytest'], 'check the virtual environment');
    return true;
  } catch {
    return false;
  }
}

async function acquireLock(): Promise<() => Promise<void>> {
  const deadline = Date.now() + INSTALL_TIMEOUT_MS + 60_000;
  for (;;) {
    try {
      await mkdir(LOCK_DIR);
      return () => rm(LOCK_DIR, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const since = await stat(LOCK_DIR).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (since > LOCK_STALE_MS) {
      // Left behind by a process that died mid-build.
      await rm(LOCK_DIR, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${LOCK_DIR}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function run(command: string, args: string[], what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        // pip inside a venv is fine as root; keep it from warning or from reaching for ~/.local.
        PIP_ROOT_USER_ACTION: 'ignore',
        PIP_USER: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-50_000)));
    child.stderr.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-50_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), INSTALL_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`could not ${what}: ${command}: ${err.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else {
        const status = signal ? `signal ${signal}` : `exit code ${code}`;
        reject(new Error(`could not ${what}: ${command} ${args.join(' ')} (${status})\n${output}`));
      }
    });
  });
}
