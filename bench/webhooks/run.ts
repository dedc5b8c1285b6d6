// Webhook delivery: latency from a run's end to the receiver getting the POST, and delivery
// throughput, each against a baseline measured in the same run on the same machine:
//  - latency: the webhook against the `/runs/wait` answer of the same run (both measured from
//    the run's `run_ended_at`, as recorded by PostgreSQL);
//  - throughput: the dispatcher draining a pre-filled outbox against a plain undici client
//    POSTing the same bodies to the same receiver with the same concurrency;
//  - cost: threadless `/runs/wait` runs/s with a webhook against the same runs without one.
//
//   npm run bench:webhooks -- [--latency-runs 200] [--deliveries 2000] [--load-runs 400]
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Agent, request } from 'undici';
import { freePort, startPostgresServer } from '../../common/db/index.js';
import { writeJsonReport } from '../http/report.js';

const { values } = parseArgs({
  options: {
    'latency-runs': { type: 'string', default: '200' },
    deliveries: { type: 'string', default: '2000' },
    'load-runs': { type: 'string', default: '400' },
    concurrency: { type: 'string', default: '16' },
  },
});
const LATENCY_RUNS = Number(values['latency-runs']);
const DELIVERIES = Number(values.deliveries);
const LOAD_RUNS = Number(values['load-runs']);
const CONCURRENCY = Number(values.concurrency);
const REPO_ROOT = join(import.meta.dirname, '..', '..');

interface Receiver {
  url: string;
  arrivals: Map<string, number>;
  count: number;
  server: Server;
}

async function startReceiver(): Promise<Receiver> {
  const port = await freePort();
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals: new Map(),
    count: 0,
    server: createServer((req, res) => {
      const at = Date.now();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        receiver.count += 1;
        const body = Buffer.concat(chunks).toString();
        const runId = /"run_id":"([^"]+)"/.exec(body)?.[1];
        if (runId) receiver.arrivals.set(runId, at);
        res.end('ok');
      });
    }),
  };
  await new Promise<void>((r) => receiver.server.listen(port, '127.0.0.1', r));
  return receiver;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const stats = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p95: percentile(s, 95), p99: percentile(s, 99), n: s.length };
};

async function waitUntil(ok: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
  return ok();
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'graphdock-bench-webhooks-'));
  const receiver = await startReceiver();
  const postgres = await startPostgresServer({ dataDir: join(dir, 'pg'), ephemeral: false });
  const config = join(dir, 'langgraph.json');
  writeFileSync(
    config,
    JSON.stringify({
      graphs: { echo: join(REPO_ROOT, 'examples', 'graphs', 'echo.ts:graph') },
      webhooks: { url: { disable_loopback: false } },
    }),
  );
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(REPO_ROOT, 'bin', 'graphdock.mjs'),
      'runtime',
      '--config',
      config,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
    ],
    {
      env: {
        ...process.env,
        DATABASE_URL: postgres.url,
        LOG_LEVEL: 'warn',
        GRAPHDOCK_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
        GRAPHDOCK_WEBHOOK_CONCURRENCY: String(CONCURRENCY),
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  const base = `http://127.0.0.1:${port}`;
  const agent = new Agent({ connections: CONCURRENCY * 2 });
  const post = async (path: string, body: unknown) => {
    const res = await request(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      dispatcher: agent,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${text}`);
    return { text, at: Date.now(), headers: res.headers };
  };
  const db = new pg.Client({ connectionString: postgres.url });
  try {
    for (let i = 0; i < 600; i++) {
      try {
        const ok = await request(`${base}/ok`, { dispatcher: agent });
        await ok.body.dump();
        if (ok.statusCode === 200) break;
      } catch {
        // not up yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    await db.connect();
    const input = { messages: [{ role: 'user', content: 'ping' }] };
    const runWait = (webhook: boolean) =>
      post('/runs/wait', {
        assistant_id: 'echo',
        input,
        ...(webhook ? { webhook: receiver.url } : {}),
      });

    // 1. Latency, one run at a time.
    for (let i = 0; i < 20; i++) await runWait(true);
    const webhookLag: number[] = [];
    const waitLag: number[] = [];
    for (let i = 0; i < LATENCY_RUNS; i++) {
      const answered = await runWait(true);
      const runId =
        /\/runs\/([0-9a-f-]{36})/.exec(String(answered.headers['content-location']))?.[1] ?? '';
      await waitUntil(() => receiver.arrivals.has(runId), 10_000);
      const { rows } = await db.query<{ ended: Date }>(
        `SELECT (run->>'run_ended_at')::timestamptz AS ended FROM webhook_deliveries WHERE run_id = $1`,
        [runId],
      );
      const ended = rows[0]?.ended.getTime() ?? NaN;
      webhookLag.push((receiver.arrivals.get(runId) ?? NaN) - ended);
      waitLag.push(answered.at - ended);
    }
    const latency = { webhook: stats(webhookLag), waitAnswer: stats(waitLag) };

    // 2. Throughput: a pre-filled outbox drained by the dispatcher vs. raw POSTs.
    const { rows: sample } = await db.query<{ run: unknown }>(
      'SELECT run FROM webhook_deliveries LIMIT 1',
    );
    const snapshot = sample[0]?.run as Record<string, unknown>;
    const body = JSON.stringify({ ...snapshot, webhook_sent_at: new Date().toISOString() });
    const rawStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < DELIVERIES) {
          next += 1;
          const res = await request(receiver.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
            dispatcher: agent,
          });
          await res.body.dump();
        }
      }),
    );
    const rawPerSec = DELIVERIES / ((performance.now() - rawStart) / 1000);

    const before = receiver.count;
    const drainStart = performance.now();
    await db.query(
      `INSERT INTO webhook_deliveries (run_id, thread_id, url, run, stateful)
       SELECT gen_random_uuid(), gen_random_uuid(), $1, $2::jsonb, false FROM generate_series(1, $3)`,
      [receiver.url, JSON.stringify(snapshot), DELIVERIES],
    );
    await db.query(`SELECT pg_notify('graphdock_webhooks', 'bench|')`);
    const drained = await waitUntil(() => receiver.count - before >= DELIVERIES, 300_000);
    const drainPerSec = DELIVERIES / ((performance.now() - drainStart) / 1000);

    // 3. Cost on run throughput: the same threadless runs with and without a webhook.
    const load = async (webhook: boolean) => {
      let started = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (started < LOAD_RUNS) {
            started += 1;
            await runWait(webhook);
          }
        }),
      );
      return LOAD_RUNS / ((performance.now() - t0) / 1000);
    };
    const without1 = await load(false);
    const with1 = await load(true);
    const without2 = await load(false);
    const with2 = await load(true);
    const runsWithout = (without1 + without2) / 2;
    const runsWith = (with1 + with2) / 2;

    const f = (n: number) => n.toFixed(1);
    console.log('\n# Graphdock webhook benchmark\n');
    console.log('| measure | baseline | webhooks | ratio |');
    console.log('|---|---:|---:|---:|');
    console.log(
      `| p50 ms after run end (baseline: /runs/wait answer) | ${f(latency.waitAnswer.p50)} | ${f(latency.webhook.p50)} | ${(latency.webhook.p50 / latency.waitAnswer.p50).toFixed(2)}x |`,
    );
    console.log(
      `| p95 ms after run end | ${f(latency.waitAnswer.p95)} | ${f(latency.webhook.p95)} | ${(latency.webhook.p95 / latency.waitAnswer.p95).toFixed(2)}x |`,
    );
    console.log(
      `| p99 ms after run end | ${f(latency.waitAnswer.p99)} | ${f(latency.webhook.p99)} | ${(latency.webhook.p99 / latency.waitAnswer.p99).toFixed(2)}x |`,
    );
    console.log(
      `| deliveries/s, ${DELIVERIES} queued, ${CONCURRENCY} in flight (baseline: raw POSTs) | ${f(rawPerSec)} | ${f(drainPerSec)} | ${(drainPerSec / rawPerSec).toFixed(2)}x |`,
    );
    console.log(
      `| threadless runs/s x${CONCURRENCY} (baseline: no webhook) | ${f(runsWithout)} | ${f(runsWith)} | ${(runsWith / runsWithout).toFixed(2)}x |`,
    );
    console.log(`\nwebhook p50 target < 50 ms: ${latency.webhook.p50 < 50 ? 'met' : 'NOT met'}`);
    const file = writeJsonReport(join(REPO_ROOT, 'bench', 'results'), {
      kind: 'webhooks',
      options: { LATENCY_RUNS, DELIVERIES, LOAD_RUNS, CONCURRENCY },
      environment: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model,
        memoryGiB: Math.round(totalmem() / 2 ** 30),
        node: process.version,
      },
      latency,
      throughput: { rawPerSec, drainPerSec, drained },
      runs: { without: [without1, without2], with: [with1, with2] },
    });
    console.log(`JSON: ${file}`);
    return drained ? 0 : 1;
  } finally {
    await db.end().catch(() => undefined);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await agent.close();
    await new Promise((r) => receiver.server.close(r));
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
