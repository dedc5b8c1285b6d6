// A fuzz run over the whole OpenAPI document: schemathesis (from PyPI, pinned in
// test/openapi/requirements.txt) generates requests for every operation, valid and invalid,
// against a real server on loopback. No response may be a 5xx, and every response must be one the
// document declares for its operation, with the declared content type and body schema. Bounded:
// one worker, a fixed seed and a fixed number of examples per operation.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { ensurePythonVenv, FUZZ_VENV } from '../support/python.js';
import { startServer, type RunningServer } from '../support/server.js';

/** Test cases per operation; the run takes two to three minutes on a 2-core machine. */
const MAX_EXAMPLES = 15;
const SEED = 1;
const FUZZ_TIMEOUT_MS = 6 * 60_000;
/** What the run checks on every response (see `st run --help`). */
const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_schema_conformance',
];

let db: TestDatabase | undefined;
let server: RunningServer | undefined;
let python: string | undefined;
const reportDir = mkdtempSync(join(tmpdir(), 'graphdock-fuzz-'));

beforeAll(async () => {
  // The first run builds the venv: do it alongside the server's start-up.
  const results = await Promise.allSettled([
    ensurePythonVenv(FUZZ_VENV).then((p) => (python = p)),
    (async () => {
      db = await createTestDatabase(inject('pgAdminUrl'));
      // Errors only: the log then holds what each 5xx was, and little else.
      server = await startServer({ databaseUrl: db.url, env: { LOG_LEVEL: 'error' } });
    })(),
  ]);
  for (const result of results) if (result.status === 'rejected') throw result.reason;
}, 15 * 60_000);

afterAll(async () => {
  await server?.stop();
  await db?.drop();
  rmSync(reportDir, { recursive: true, force: true });
});

interface HarEntry {
  request: { method: string; url: string; postData?: { text?: string } };
  response: { status: number };
}

interface Failure {
  code: string;
  title: string;
  count: number;
}

it(
  'answers no 5xx and nothing the document does not declare, over every operation',
  async () => {
    if (!python || !server) throw new Error('setup did not finish');
    const run = await runSchemathesis(python, `${server.url}/openapi.json`);
    const report = readReports();
    const statuses = new Map<number, number>();
    for (const entry of report.entries)
      statuses.set(entry.response.status, (statuses.get(entry.response.status) ?? 0) + 1);
    const serverErrors = report.entries.filter((e) => e.response.status >= 500);
    const conformance = report.failures.filter((f) => f.code !== 'ST101');

    console.log(
      [
        `schemathesis: ${report.entries.length} responses over ${report.operations} operations ` +
          `(seed ${SEED}, up to ${MAX_EXAMPLES} examples per operation)`,
        `  by status: ${[...statuses.entries()]
          .sort(([a], [b]) => a - b)
          .map(([status, n]) => `${status}: ${n}`)
          .join(', ')}`,
        `  responses with status 5xx: ${serverErrors.length}`,
        ...serverErrors.map((e) => `    ${describeRequest(e)}`),
        `  failures that break the document (status, content type, schema): ${conformance.reduce((n, f) => n + f.count, 0)}`,
        ...conformance.map((f) => `    ${f.code} ${f.title}: ${f.count}`),
        ...serverLogErrors(server.output()).map((line) => `  server error: ${line}`),
      ].join('\n'),
    );

    expect(report.operations, run.output).toBeGreaterThanOrEqual(60);
    expect(serverErrors.map(describeRequest), run.output).toEqual([]);
    expect(conformance, run.output).toEqual([]);
  },
  FUZZ_TIMEOUT_MS + 60_000,
);

function runSchemathesis(python: string, schemaUrl: string): Promise<{ output: string }> {
  const st = join(dirname(python), 'st');
  const args = [
    'run',
    schemaUrl,
    '--checks',
    CHECKS.join(','),
    // The coverage phase alone generates about 6,000 cases (12 minutes here): out of budget.
    '--phases',
    'examples,fuzzing',
    '--max-examples',
    String(MAX_EXAMPLES),
    '--workers',
    '2',
    '--seed',
    String(SEED),
    '--generation-database',
    'none',
    '--request-timeout',
    '20',
    '--report',
    'har,json',
    '--report-dir',
    reportDir,
    '--no-color',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(st, args, {
      cwd: reportDir,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (c: Buffer) => (output = (output + c.toString()).slice(-200_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), FUZZ_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    // Exit code 1 means failures were found: the reports say which, so both go on.
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code === 0 || code === 1) resolve({ output });
      else reject(new Error(`schemathesis exited with ${code}:\n${output}`));
    });
  });
}

function readReports(): { entries: HarEntry[]; failures: Failure[]; operations: number } {
  const files = readdirSync(reportDir);
  const har = files.find((f) => f.startsWith('har-'));
  const json = files.find((f) => f.startsWith('json-'));
  if (!har || !json) throw new Error(`schemathesis wrote no reports in ${reportDir}`);
  const entries = (
    JSON.parse(readFileSync(join(reportDir, har), 'utf8')) as { log: { entries: HarEntry[] } }
  ).log.entries;
  const summary = JSON.parse(readFileSync(join(reportDir, json), 'utf8')) as {
    operations: { tested: number };
    failures: Failure[];
  };
  return { entries, failures: summary.failures, operations: summary.operations.tested };
}

/** `POST /threads (NUL character): {"metadata": ...}`: the request, and what is hostile in it. */
function describeRequest(entry: HarEntry): string {
  const { method, url, postData } = entry.request;
  const path = new URL(url).pathname;
  const body = postData?.text ?? '';
  return `${entry.response.status} ${method} ${path} (${inputKind(url, body)}): ${body.slice(0, 200)}`;
}

/** The kinds of hostile input known to reach the database as a 500 (issue 23, section 1). */
function inputKind(url: string, body: string): string {
  const kinds: string[] = [];
  if (body.includes('\\u0000') || /%00/i.test(url)) kinds.push('NUL character');
  let parsed: unknown;
  try {
    parsed = body ? JSON.parse(body) : undefined;
  } catch {
    parsed = undefined;
  }
  if (strings(parsed).some((s) => LONE_SURROGATE.test(s))) kinds.push('lone surrogate');
  if (hugeTtl(parsed)) kinds.push('huge ttl');
  if (depth(parsed) > 100) kinds.push('deep nesting');
  return kinds.length ? kinds.join(', ') : 'other input';
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => [k, ...strings(v)]);
  return [];
}

function hugeTtl(value: unknown): boolean {
  if (!value || typeof value !== 'object') return false;
  const ttl = (value as { ttl?: unknown }).ttl;
  if (typeof ttl === 'number') return ttl > 1e9;
  return hugeTtl(ttl);
}

function depth(value: unknown): number {
  if (!value || typeof value !== 'object') return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depth));
}

/** The distinct messages of the errors the server logged, with their counts. */
function serverLogErrors(output: string): string[] {
  const counts = new Map<string, number>();
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const record = JSON.parse(line) as {
        level?: number;
        msg?: string;
        err?: { message?: string };
      };
      if ((record.level ?? 0) < 50) continue;
      const key = `${record.msg ?? ''}: ${record.err?.message ?? ''}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    } catch {
      // not a log record
    }
  }
  return [...counts.entries()].map(([message, n]) => `${message} (${n}x)`);
}
