// Python virtual environments for tests that drive the server from Python: the official
// `langgraph-sdk` client and pytest (the default), or schemathesis for the OpenAPI fuzz run. Each is
// built once under .cache/ from pinned requirements and rebuilt only when its requirements change.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
export const PYTHON_TESTS_DIR = join(REPO_ROOT, 'test', 'python');
export const REQUIREMENTS_FILE = join(PYTHON_TESTS_DIR, 'requirements.txt');
export const VENV_DIR = join(REPO_ROOT, '.cache', 'venv-sdk');

export interface VenvSpec {
  requirements: string;
  dir: string;
  /** Modules whose import proves the venv usable. */
  imports: string[];
}

export const SDK_VENV: VenvSpec = {
  requirements: REQUIREMENTS_FILE,
  dir: VENV_DIR,
  imports: ['langgraph_sdk', 'pytest'],
};

export const FUZZ_VENV: VenvSpec = {
  requirements: join(REPO_ROOT, 'test', 'openapi', 'requirements.txt'),
  dir: join(REPO_ROOT, '.cache', 'venv-openapi'),
  imports: ['schemathesis', 'openapi_spec_validator'],
};

/** PyPI's langsmith, for the trace store's tests and bench/traces' Python sender. */
export const TRACES_VENV: VenvSpec = {
  requirements: join(REPO_ROOT, 'test', 'python-traces', 'requirements.txt'),
  dir: join(REPO_ROOT, '.cache', 'venv-langsmith'),
  imports: ['langsmith'],
};

const LOCK_STALE_MS = 15 * 60_000;
const INSTALL_TIMEOUT_MS = 10 * 60_000;

const pending = new Map<string, Promise<string>>();

/**
 * Returns the path of the venv's python, creating the venv and installing the pinned
 * requirements first when it is missing or its requirements changed. Concurrent calls in one
 * process share a single build; a failed build is retried by the next call.
 */
export function ensurePythonVenv(spec: VenvSpec = SDK_VENV): Promise<string> {
  let build = pending.get(spec.dir);
  if (!build) {
    build = buildVenv(spec).catch((err: unknown) => {
      pending.delete(spec.dir);
      throw err;
    });
    pending.set(spec.dir, build);
  }
  return build;
}

export function venvPython(venvDir: string = VENV_DIR): string {
  return process.platform === 'win32'
    ? join(venvDir, 'Scripts', 'python.exe')
    : join(venvDir, 'bin', 'python');
}

/** Written last, so an interrupted install is redone on the next call. */
const stampFile = (spec: VenvSpec) => join(spec.dir, '.requirements.sha256');

async function buildVenv(spec: VenvSpec): Promise<string> {
  const python = venvPython(spec.dir);
  const wanted = createHash('sha256')
    .update(await readFile(spec.requirements))
    .digest('hex');
  if (await isUpToDate(spec, python, wanted)) return python;

  await mkdir(join(REPO_ROOT, '.cache'), { recursive: true });
  const release = await acquireLock(spec);
  try {
    // Another process may have finished the same build while this one waited for the lock.
    if (await isUpToDate(spec, python, wanted)) return python;
    await rm(spec.dir, { recursive: true, force: true });
    const basePython = process.env.GRAPHDOCK_PYTHON ?? 'python3';
    await run(basePython, ['-m', 'venv', spec.dir], 'create the virtual environment');
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
        spec.requirements,
      ],
      `install ${spec.requirements}`,
    );
    await writeFile(stampFile(spec), `${wanted}\n`);
    return python;
  } finally {
    await release();
  }
}

async function isUpToDate(spec: VenvSpec, python: string, wanted: string): Promise<boolean> {
  if (!existsSync(python)) return false;
  const stamp = await readFile(stampFile(spec), 'utf8').catch(() => '');
  if (stamp.trim() !== wanted) return false;
  // The interpreter the venv links to may have gone away (a Python upgrade): rebuild then.
  try {
    await run(python, ['-c', `import ${spec.imports.join(', ')}`], 'check the virtual environment');
    return true;
  } catch {
    return false;
  }
}

/** Guards the venv against another process (another vitest worker) building it at once. */
async function acquireLock(spec: VenvSpec): Promise<() => Promise<void>> {
  const lockDir = `${spec.dir}.lock`;
  const deadline = Date.now() + INSTALL_TIMEOUT_MS + 60_000;
  for (;;) {
    try {
      await mkdir(lockDir);
      return () => rm(lockDir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const since = await stat(lockDir).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (since > LOCK_STALE_MS) {
      // Left behind by a process that died mid-build.
      await rm(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockDir}`);
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
