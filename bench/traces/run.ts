// Trace store benchmarks:
// 1. Ingest: the official langsmith JS Client (auto-batching, multipart) sends traces of 5 runs
//    (a chain root, an llm, a tool, two chain steps) to a real `graphdock api` on a durable
//    PostgreSQL (fsync and synchronous_commit on); runs/s from the first create to the last
//    flushed batch, p50/p99 of the batch requests, and the CPU µs per ingested run of the load
//    generator, the api and PostgreSQL (from /proc). `--generators N` runs N generator processes,
//    each with its own Client, as a high-volume app runs several workers.
// 2. Runtime cost: agent runs/s (threadless `runs.wait`, 8 clients) of a real `graphdock runtime`
//    tracing into that api, against the same runtime with LANGSMITH_TRACING=false; alternating
//    windows, medians; also the runtimes' CPU ms per agent run (from /proc, Linux), which the
//    other load on a shared machine moves far less than runs/s. With --sink the traces go to a
//    stub endpoint that answers 202 at once instead: the runtime's own cost of tracing, without
//    the api and PostgreSQL ingesting on the same cores.
//
//   npx tsx bench/traces/run.ts [--traces 4000] [--generators 1] [--duration 10] [--repeats 3]
//     [--sink] [--no-runtime]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client as AgentClient } from '@langchain/langgraph-sdk';
import { Client, RunTree } from 'langsmith';
import pg from 'pg';
import { freePort, startPostgresServer } from '../../common/db/index.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
const KEY = 'gdk_bench_traces_key_0123456789abcdef';
const { values } = parseArgs({
  options: {
    traces: { type: 'string', default: '4000' },
    duration: { type: 'string', default: '10' },
    repeats: { type: 'string', default: '3' },
    clients: { type: 'string', default: '8' },
    generators: { type: 'string', default: '1' },
    sink: { type: 'boolean', default: false },
    'no-runtime': { type: 'boolean', default: false },
    // Internal: this process is one ingest generator (see generate()).
    generate: { type: 'string' },
  },
});

function start(command: string, env: Record<string, string>, port: number): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      join(REPO_ROOT, 'bin', 'graphdock.mjs'),
      command,
      '--config',
      join(REPO_ROOT, 'examples', 'langgraph.json'),
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
    ],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  return child;
}

async function waitOk(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/ok`)).ok) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered /ok`);
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const median = (xs: number[]) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

async function benchIngest(endpoint: string, traces: number) {
  const durations: number[] = [];
  const timed: typeof fetch = async (input, init) => {
    const started = performance.now();
    const res = await fetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url.endsWith('/runs/multipart')) durations.push(performance.now() - started);
    return res;
  };
  const client = new Client({ apiUrl: endpoint, apiKey: KEY, fetchImplementation: timed });
  const big = { messages: [{ role: 'user', content: 'x'.repeat(400) }] };
  const started = performance.now();
  for (let t = 0; t < traces; t++) {
    const root = new RunTree({
      name: 'app',
      run_type: 'chain',
      inputs: big,
      client,
      project_name: 'bench',
      metadata: { thread_id: `t${t % 100}` },
    });
    await root.postRun();
    for (const [name, type] of [
      ['model', 'llm'],
      ['tool', 'tool'],
      ['step1', 'chain'],
      ['step2', 'chain'],
    ] as const) {
      const child = root.createChild({ name, run_type: type, inputs: big });
      await child.postRun();
      await child.end(
        type === 'llm'
          ? { usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 }, ...big }
          : big,
      );
      await child.patchRun();
    }
    await root.end(big);
    await root.patchRun();
    // Let the SDK's timers send while runs are produced, as a traced app would.
    if (t % 50 === 49) await new Promise((r) => setImmediate(r));
  }
  await client.awaitPendingTraceBatches();
  const seconds = (performance.now() - started) / 1000;
  const sorted = [...durations].sort((a, b) => a - b);
  return {
    runs: traces * 5,
    seconds: Number(seconds.toFixed(2)),
    runsPerSecond: Math.round((traces * 5) / seconds),
    batches: durations.length,
    flushP50Ms: Math.round(quantile(sorted, 0.5)),
    flushP99Ms: Math.round(quantile(sorted, 0.99)),
  };
}

/** CPU time (user + system) a process has used, in ms (Linux clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time of a process and all its descendants, live and exited (PostgreSQL's backends), in ms.
 */
function treeCpuMs(pid: number): number {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(
        readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1],
      );
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const sum = (p: number): number => {
    let fields: string[];
    try {
      fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
    } catch {
      return 0;
    }
    // utime, stime, and the CPU of children already waited for (cutime, cstime).
    const own = [11, 12, 13, 14].reduce((t, i) => t + Number(fields[i]) * 10, 0);
    return own + (children.get(p) ?? []).reduce((t, c) => t + sum(c), 0);
  };
  return sum(pid);
}

/** The postmaster's pid, from the data directory. */
const postmasterPid = (dataDir: string) =>
  Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);

/**
 * One generator process: warms up, says `ready`, sends its traces when told `go` on stdin, and
 * prints its result as JSON.
 */
async function generate(endpoint: string, traces: number) {
  await benchIngest(endpoint, 100);
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  const cpu0 = process.cpuUsage();
  const result = await benchIngest(endpoint, traces);
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(`${JSON.stringify({ ...result, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
}

/**
 * Ingest through `count` generator processes at once, each sending `traces / count` traces:
 * runs/s over the wall time from `go` to the last flushed batch, and CPU µs per ingested run of
 * the generators, the api and PostgreSQL.
 */
async function ingestWith(
  endpoint: string,
  traces: number,
  count: number,
  pids: { api: number; postgres: number },
) {
  const script = import.meta.filename;
  const gens = Array.from({ length: count }, () =>
    spawn(
      process.execPath,
      [
        ...process.execArgv,
        script,
        '--generate',
        endpoint,
        '--traces',
        String(Math.ceil(traces / count)),
      ],
      { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
    ),
  );
  const lines = gens.map((g) => {
    const queue: string[] = [];
    const waiters: ((line: string) => void)[] = [];
    let buffered = '';
    g.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const waiter = waiters.shift();
        if (waiter) waiter(line);
        else queue.push(line);
      }
    });
    return () =>
      new Promise<string>((resolve) => {
        const line = queue.shift();
        if (line !== undefined) resolve(line);
        else waiters.push(resolve);
      });
  });
  for (const next of lines) if ((await next()) !== 'ready') throw new Error('generator failed');
  const api0 = treeCpuMs(pids.api);
  const pg0 = treeCpuMs(pids.postgres);
  const started = performance.now();
  for (const g of gens) g.stdin.write('go\n');
  const results = (await Promise.all(lines.map((next) => next()))).map(
    (line) => JSON.parse(line) as Awaited<ReturnType<typeof benchIngest>> & { cpuMs: number },
  );
  const seconds = (performance.now() - started) / 1000;
  const apiMs = treeCpuMs(pids.api) - api0;
  const pgMs = treeCpuMs(pids.postgres) - pg0;
  for (const g of gens) g.stdin.end();
  const runs = results.reduce((t, r) => t + r.runs, 0);
  const perRun = (ms: number) => Math.round((ms * 1000) / runs);
  return {
    generators: count,
    runs,
    seconds: Number(seconds.toFixed(2)),
    runsPerSecond: Math.round(runs / seconds),
    batches: results.reduce((t, r) => t + r.batches, 0),
    flushP50Ms: Math.max(...results.map((r) => r.flushP50Ms)),
    flushP99Ms: Math.max(...results.map((r) => r.flushP99Ms)),
    cpuUsPerRun: {
      generators: perRun(results.reduce((t, r) => t + r.cpuMs, 0)),
      api: perRun(apiMs),
      postgres: perRun(pgMs),
    },
  };
}

/** A trace endpoint that takes every batch at once and keeps nothing. */
async function startSink(): Promise<{ endpoint: string; close(): void }> {
  const info = {
    version: 'sink',
    batch_ingest_config: {
      use_multipart_endpoint: true,
      size_limit: 1000,
      size_limit_bytes: 20 * 1024 * 1024,
      scale_up_qsize_trigger: 1000,
      scale_up_nthreads_limit: 16,
      scale_down_nempty_trigger: 4,
    },
    // As the api's /info: batches of up to 1,000 operations, gzipped as they are queued.
    instance_flags: { gzip_body_enabled: true },
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(req.url?.endsWith('/info') ? 200 : 202, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.url?.endsWith('/info') ? info : { message: 'ok' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { endpoint: `http://127.0.0.1:${port}/api/v1`, close: () => server.close() };
}

async function agentThroughput(url: string, clients: number, durationMs: number): Promise<number> {
  const agent = new AgentClient({ apiUrl: url, apiKey: null });
  const deadline = Date.now() + durationMs;
  let done = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < deadline) {
        await agent.runs.wait(null, 'agent', {
          input: { messages: [{ role: 'user', content: 'add 2 and 3' }] },
        });
        done++;
      }
    }),
  );
  return done / (durationMs / 1000);
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'graphdock-bench-traces-'));
  // Durable, as in production and the other benches: every batch's commit is flushed.
  const server = await startPostgresServer({ dataDir: join(dir, 'pg'), ephemeral: false });
  const children: ChildProcess[] = [];
  try {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    for (const db of ['bench_api', 'bench_on', 'bench_off'])
      await admin.query(`CREATE DATABASE ${db}`);
    await admin.end();
    const dbUrl = (name: string) =>
      Object.assign(new URL(server.url), { pathname: `/${name}` }).toString();
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'n', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [{ name: 'n', user: { token: 't' } }],
        contexts: [{ name: 'n', context: { cluster: 'n', user: 'n' } }],
        'current-context': 'n',
      }),
    );

    const apiPort = await freePort();
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    children.push(
      start(
        'api',
        {
          DATABASE_URL: dbUrl('bench_api'),
          KUBECONFIG: kubeconfig,
          GRAPHDOCK_BOOTSTRAP_API_KEY: KEY,
        },
        apiPort,
      ),
    );
    await waitOk(apiUrl);
    // Warm-up (partitions, session, JIT), then the measured run.
    await benchIngest(`${apiUrl}/api/v1`, 200);
    const ingest = await ingestWith(
      `${apiUrl}/api/v1`,
      Number(values.traces),
      Number(values.generators),
      { api: children[0]!.pid!, postgres: postmasterPid(join(dir, 'pg')) },
    );
    console.log('ingest', ingest);
    if (values['no-runtime']) return;

    const sink = values.sink ? await startSink() : undefined;
    const onPort = await freePort();
    const offPort = await freePort();
    children.push(
      start(
        'runtime',
        {
          DATABASE_URL: dbUrl('bench_on'),
          GRAPHDOCK_TRACES_ENDPOINT: sink?.endpoint ?? `${apiUrl}/api/v1`,
          GRAPHDOCK_TRACES_API_KEY: KEY,
          GRAPHDOCK_DEPLOYMENT_NAME: 'bench',
        },
        onPort,
      ),
    );
    children.push(
      start('runtime', { DATABASE_URL: dbUrl('bench_off'), LANGSMITH_TRACING: 'false' }, offPort),
    );
    const on = `http://127.0.0.1:${onPort}`;
    const off = `http://127.0.0.1:${offPort}`;
    await waitOk(on);
    await waitOk(off);
    const clients = Number(values.clients);
    const ms = Number(values.duration) * 1000;
    await agentThroughput(on, clients, 3000);
    await agentThroughput(off, clients, 3000);
    const rates = { on: [] as number[], off: [] as number[] };
    const cpu = { on: [] as number[], off: [] as number[] };
    const [onChild, offChild] = children.slice(-2) as [ChildProcess, ChildProcess];
    const window = async (which: 'on' | 'off', url: string, child: ChildProcess) => {
      const before = cpuMs(child.pid!);
      const rate = await agentThroughput(url, clients, ms);
      rates[which].push(rate);
      cpu[which].push(Math.round((cpuMs(child.pid!) - before) / ((rate * ms) / 1000)));
    };
    for (let i = 0; i < Number(values.repeats); i++) {
      await window('off', off, offChild);
      await window('on', on, onChild);
    }
    sink?.close();
    const runtime = {
      clients,
      tracingOffRunsPerSecond: Number(median(rates.off).toFixed(1)),
      tracingOnRunsPerSecond: Number(median(rates.on).toFixed(1)),
      windows: rates,
      cost: `${(100 * (1 - median(rates.on) / median(rates.off))).toFixed(1)}%`,
      traceEndpoint: sink ? 'sink' : 'api',
      cpuMsPerRun: { off: median(cpu.off), on: median(cpu.on), windows: cpu },
    };
    console.log('runtime', runtime);
    console.log(JSON.stringify({ cpus: cpus().length, ingest, runtime }, null, 2));
  } finally {
    for (const child of children) await stop(child);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (values.generate) await generate(values.generate, Number(values.traces));
else await main();
