// The thread protocol through the official Python client (`langgraph-sdk` from PyPI,
// `client.threads.stream()` over SSE and WebSocket): runs the pytest suite in
// test/python-protocol against two server processes on one database.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { ensurePythonVenv } from '../support/python.js';
import { REPO_ROOT, startServer, type RunningServer } from '../support/server.js';

const CONFIG = join(REPO_ROOT, 'test', 'fixtures', 'protocol', 'langgraph.json');
const TESTS = join(REPO_ROOT, 'test', 'python-protocol');
const PYTEST_TIMEOUT_MS = 3 * 60_000;

let db: TestDatabase | undefined;
const servers: RunningServer[] = [];
let python: string | undefined;

beforeAll(async () => {
  const results = await Promise.allSettled([
    ensurePythonVenv().then((p) => (python = p)),
    (async () => {
      db = await createTestDatabase(inject('pgAdminUrl'));
      // One after the other: two start-ups at once on a loaded machine miss the /ok deadline.
      for (let i = 0; i < 2; i++)
        servers.push(await startServer({ databaseUrl: db.url, config: CONFIG }));
    })(),
  ]);
  for (const result of results) if (result.status === 'rejected') throw result.reason;
}, 15 * 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await db?.drop();
});

it(
  'passes the thread protocol pytest suite with the official Python SDK',
  async () => {
    if (!python || servers.length < 2) throw new Error('setup did not finish');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      GRAPHDOCK_URL: servers[0]!.url,
      GRAPHDOCK_URL_B: servers[1]!.url,
      PYTHONDONTWRITEBYTECODE: '1',
    };
    delete env.LANGGRAPH_API_KEY;
    delete env.LANGSMITH_API_KEY;
    delete env.LANGCHAIN_API_KEY;
    const result = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(python!, ['-m', 'pytest', '-q', TESTS], {
        cwd: REPO_ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), PYTEST_TIMEOUT_MS);
      child.once('error', reject);
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/6 passed/);
  },
  PYTEST_TIMEOUT_MS + 30_000,
);
