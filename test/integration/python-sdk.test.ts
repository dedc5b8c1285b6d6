// The official Python client (`langgraph-sdk` from PyPI) against a real `graphdock runtime`:
// runs the pytest suite in test/python with GRAPHDOCK_URL pointing at the server.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { ensurePythonVenv, PYTHON_TESTS_DIR } from '../support/python.js';
import { REPO_ROOT, startServer, type RunningServer } from '../support/server.js';

const PYTEST_TIMEOUT_MS = 5 * 60_000;

let db: TestDatabase | undefined;
let server: RunningServer | undefined;
let python: string | undefined;

beforeAll(async () => {
  // The first run builds the venv (pip install takes a minute or two): do it alongside the
  // server's start-up.
  // allSettled, not all: afterAll must not run while the server is still starting.
  const results = await Promise.allSettled([
    ensurePythonVenv().then((p) => (python = p)),
    (async () => {
      db = await createTestDatabase(inject('pgAdminUrl'));
      server = await startServer({ databaseUrl: db.url });
    })(),
  ]);
  for (const result of results) if (result.status === 'rejected') throw result.reason;
}, 15 * 60_000);

afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

it(
  'passes the pytest suite with the official Python SDK',
  async () => {
    if (!python || !server) throw new Error('setup did not finish');
    const result = await runPytest(python, server.url);
    if (result.code !== 0) {
      console.error(`pytest exited with ${result.code}:\n${result.output}`);
      console.error(`server output:\n${server.output()}`);
    }
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/\d+ passed/);
  },
  PYTEST_TIMEOUT_MS + 30_000,
);

function runPytest(python: string, url: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      GRAPHDOCK_URL: url,
      PYTHONDONTWRITEBYTECODE: '1',
    };
    // The SDK reads these when no key is given; the suite passes api_key=None, but be explicit.
    delete env.LANGGRAPH_API_KEY;
    delete env.LANGSMITH_API_KEY;
    delete env.LANGCHAIN_API_KEY;
    const child = spawn(python, ['-m', 'pytest', '-q', PYTHON_TESTS_DIR], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), PYTEST_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
