// Trace store benchmarks:
// 1. Ingest: the official langsmith JS Client (auto-batching, as /info advertises) sends traces
//    of 5 runs (a chain root, an llm, a tool, two chain steps) to a real `graphdock api` on a
//    durable PostgreSQL (fsync and synchronous_commit on); runs/s from the first create to the last
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
// Everything runs under the image's Node.js with its ENTRYPOINT flags (scripts/image-node.ts).
//
//   npx tsx bench/traces/run.ts [--traces 4000] [--generators 1] [--duration 10] [--repeats 3]
//     [--sink] [--no-runtime] [--advertise '<json>' ...] [--ingest-repeats 1] [--cpu-prof-dir d]
//     [--sender runtree|client|python]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client as AgentClient } from '@langchain/langgraph-sdk';
import { Client, RunTree, uuid7 } from 'langsmith';
import { convertToDottedOrderFormat } from 'langsmith/run_trees';
import pg from 'pg';
import { freePort, startPostgresServer } from '../../common/db/index.js';
import { imageNodeFlags, rerunUnderImageNode } from '../../scripts/image-node.js';
import { ensurePythonVenv, TRACES_VENV } from '../../test/support/python.js';

// The Node.js of the image, as production runs the runtime and the api: the tracer's cost
// differs between releases (about half the extra CPU per agent run on 24 against 20).
if (!process.argv.includes('--generate')) rerunUnderImageNode();

const REPO_ROOT = join(import.meta.dirname, '..', '..');
const KEY = 'gdk_bench_traces_key_0123456789abcdef';
const { values } = parseArgs({
  options: {
    traces: { type: 'string', default: '4000' },
    duration: { type: 'string', default: '10' },
    repeats: { type: 'string', default: '3' },
    clients: { type: 'string', default: '8' },
    generators: { type: 'string', default: '1' },
    // JSON merged into the api's /info as the ingest SDK reads it, e.g.
    // '{"batch_ingest_config":{"use_multipart_endpoint":false}}': what another advertisement
    // would make the SDK do, measured against the same api. Given more than once (`{}` is the
    // api's own), the ingest runs once per variant, interleaved, `--ingest-repeats` times.
    'ingest-repeats': { type: 'string', default: '1' },
    advertise: { type: 'string', multiple: true },
    sink: { type: 'boolean', default: false },
    'no-runtime': { type: 'boolean', default: false },
    // Writes V8 CPU profiles of the api and the runtimes into this directory.
    'cpu-prof-dir': { type: 'string' },
    // `runtree`: each run is a RunTree (postRun, createChild, end, patchRun), as a traced app
    // builds them; `client`: the app hands the Client prebuilt runs (createRun, updateRun), the
    // same auto-batching and wire format without the RunTree objects: a lighter load generator;
    // `python`: PyPI's langsmith RunTree (bench/traces/sender.py, in test/python-traces' venv).
    sender: { type: 'string', default: 'runtree' },
    // Internal: this process is one ingest generator (see generate()).
    generate: { type: 'string' },
  },
});

function start(command: string, env: Record<string, string>, port: number): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      ...imageNodeFlags(),
      ...(values['cpu-prof-dir'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof-dir']}`] : []),
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

/** `info` with `advertise`'s two sections merged in. */
function advertised(info: object, advertise: string) {
  type Info = Record<string, Record<string, unknown> | undefined>;
  const served = info as Info;
  const extra = JSON.parse(advertise) as Info;
  return {
    ...served,
    batch_ingest_config: { ...served.batch_ingest_config, ...extra.batch_ingest_config },
    instance_flags: { ...served.instance_flags, ...extra.instance_flags },
  };
}

const CHILDREN = [
  ['model', 'llm'],
  ['tool', 'tool'],
  ['step1', 'chain'],
  ['step2', 'chain'],
] as const;

/** One trace of the same shape as the RunTree sender's, given to the Client as plain runs. */
async function sendPrebuilt(client: Client, t: number, big: object) {
  const start = Date.now();
  const rootId = uuid7();
  const rootOrder = convertToDottedOrderFormat(start, rootId, 1).dottedOrder;
  const common = { trace_id: rootId, project_name: 'bench' };
  await client.createRun({
    ...common,
    id: rootId,
    name: 'app',
    run_type: 'chain',
    inputs: big,
    start_time: start,
    dotted_order: rootOrder,
    extra: { metadata: { thread_id: `t${t % 100}` } },
  });
  for (const [i, [name, type]] of CHILDREN.entries()) {
    const id = uuid7();
    const childStart = Date.now();
    const dotted = `${rootOrder}.${convertToDottedOrderFormat(childStart, id, i + 2).dottedOrder}`;
    await client.createRun({
      ...common,
      id,
      name,
      run_type: type,
      inputs: big,
      start_time: childStart,
      parent_run_id: rootId,
      dotted_order: dotted,
      extra: { metadata: { thread_id: `t${t % 100}` } },
    });
    await client.updateRun(id, {
      trace_id: rootId,
      dotted_order: dotted,
      parent_run_id: rootId,
      end_time: Date.now(),
      outputs:
        type === 'llm'
          ? { usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 }, ...big }
          : big,
    });
  }
  await client.updateRun(rootId, {
    trace_id: rootId,
    dotted_order: rootOrder,
    end_time: Date.now(),
    outputs: big,
  });
}

async function benchIngest(endpoint: string, traces: number, advertise?: string) {
  const durations: number[] = [];
  const timed: typeof fetch = async (input, init) => {
    const started = performance.now();
    const res = await fetch(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url.endsWith('/runs/multipart') || url.endsWith('/runs/batch'))
      durations.push(performance.now() - started);
    if (url.endsWith('/info') && advertise)
      return Response.json(advertised((await res.json()) as object, advertise));
    return res;
  };
  const client = new Client({ apiUrl: endpoint, apiKey: KEY, fetchImplementation: timed });
  const big = { messages: [{ role: 'user', content: 'x'.repeat(400) }] };
  const started = performance.now();
  for (let t = 0; t < traces && values.sender === 'client'; t++) {
    await sendPrebuilt(client, t, big);
    if (t % 50 === 49) await new Promise((r) => setImmediate(r));
  }
  for (let t = 0; t < traces && values.sender !== 'client'; t++) {
    const root = new RunTree({
      name: 'app',
      run_type: 'chain',
      inputs: big,
      client,
      project_name: 'bench',
      metadata: { thread_id: `t${t % 100}` },
    });
    await root.postRun();
    for (const [name, type] of CHILDREN) {
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

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

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
async function generate(endpoint: string, traces: number, advertise?: string) {
  await benchIngest(endpoint, 100, advertise);
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  const cpu0 = process.cpuUsage();
  const result = await benchIngest(endpoint, traces, advertise);
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
  advertise?: string,
) {
  const script = import.meta.filename;
  const python = values.sender === 'python' ? await ensurePythonVenv(TRACES_VENV) : undefined;
  const each = Math.ceil(traces / count);
  const gens = Array.from({ length: count }, () =>
    python
      ? spawn(python, [join(import.meta.dirname, 'sender.py'), endpoint, KEY, String(each)], {
          cwd: REPO_ROOT,
          stdio: ['pipe', 'pipe', 'inherit'],
        })
      : spawn(
          process.execPath,
          [
            ...process.execArgv,
            script,
            '--generate',
            endpoint,
            '--traces',
            String(each),
            ...(advertise ? ['--advertise', advertise] : []),
            '--sender',
            values.sender,
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
    advertise: advertise ?? '{}',
    sender: values.sender,
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
async function startSink(advertise?: string): Promise<{ endpoint: string; close(): void }> {
  const served = {
    version: 'sink',
    batch_ingest_config: {
      use_multipart_endpoint: false,
      size_limit: 1000,
      size_limit_bytes: 20 * 1024 * 1024,
      scale_up_qsize_trigger: 1000,
      scale_up_nthreads_limit: 16,
      scale_down_nempty_trigger: 4,
    },
    // As the api's /info: JSON batches of up to 1,000 operations on /runs/batch.
    instance_flags: { gzip_body_enabled: true },
  };
  const info = advertise ? advertised(served, advertise) : served;
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
  const closers: (() => void)[] = [];
  try {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    for (const db of [
      'bench_api',
      'bench_off',
      ...(values.advertise ?? ['']).map((_, i) => `bench_on${i}`),
    ])
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
    // Warm-up (partitions, session, JIT), then the measured run; `--traces 0` skips it.
    const ingest = [];
    if (Number(values.traces) > 0) await benchIngest(`${apiUrl}/api/v1`, 200);
    for (let i = 0; Number(values.traces) > 0 && i < Number(values['ingest-repeats']); i++)
      for (const advertise of values.advertise ?? [undefined]) {
        const result = await ingestWith(
          `${apiUrl}/api/v1`,
          Number(values.traces),
          Number(values.generators),
          { api: children[0]!.pid!, postgres: postmasterPid(join(dir, 'pg')) },
          advertise,
        );
        console.log('ingest', { ...result, load: loadAverage() });
        ingest.push({ ...result, load: loadAverage() });
      }
    if (values['no-runtime']) return;

    // With --sink, one traced runtime per --advertise variant, each with its own stub endpoint
    // advertising it; into the api, one traced runtime reading the api's own /info.
    const variants = values.sink ? (values.advertise ?? [undefined]) : [undefined];
    const sinks = values.sink ? await Promise.all(variants.map((a) => startSink(a))) : [];
    // Closed once the runtimes have stopped (their last flush would fail otherwise).
    closers.push(...sinks.map((sink) => () => sink.close()));
    const offPort = await freePort();
    const ons: { label: string; url: string; child: ChildProcess }[] = [];
    for (const [i, advertise] of variants.entries()) {
      const port = await freePort();
      const child = start(
        'runtime',
        {
          DATABASE_URL: dbUrl(`bench_on${i}`),
          GRAPHDOCK_TRACES_ENDPOINT: sinks[i]?.endpoint ?? `${apiUrl}/api/v1`,
          GRAPHDOCK_TRACES_API_KEY: KEY,
          GRAPHDOCK_DEPLOYMENT_NAME: 'bench',
        },
        port,
      );
      children.push(child);
      ons.push({ label: `on ${advertise ?? '{}'}`, url: `http://127.0.0.1:${port}`, child });
    }
    const offChild = start(
      'runtime',
      { DATABASE_URL: dbUrl('bench_off'), LANGSMITH_TRACING: 'false' },
      offPort,
    );
    children.push(offChild);
    const off = { label: 'off', url: `http://127.0.0.1:${offPort}`, child: offChild };
    for (const r of [...ons, off]) await waitOk(r.url);
    const clients = Number(values.clients);
    const ms = Number(values.duration) * 1000;
    for (const r of [...ons, off]) await agentThroughput(r.url, clients, 3000);
    const rates: Record<string, number[]> = {};
    const cpu: Record<string, number[]> = {};
    const window = async ({ label, url, child }: typeof off) => {
      const before = cpuMs(child.pid!);
      const rate = await agentThroughput(url, clients, ms);
      (rates[label] ??= []).push(rate);
      (cpu[label] ??= []).push(Math.round((cpuMs(child.pid!) - before) / ((rate * ms) / 1000)));
    };
    for (let i = 0; i < Number(values.repeats); i++) for (const r of [off, ...ons]) await window(r);
    const offRate = median(rates.off!);
    const runtime = {
      clients,
      load: loadAverage(),
      traceEndpoint: values.sink ? 'sink' : 'api',
      tracingOffRunsPerSecond: Number(offRate.toFixed(1)),
      cpuMsPerRunOff: median(cpu.off!),
      on: ons.map(({ label }) => ({
        label,
        runsPerSecond: Number(median(rates[label]!).toFixed(1)),
        cost: `${(100 * (1 - median(rates[label]!) / offRate)).toFixed(1)}%`,
        cpuMsPerRun: median(cpu[label]!),
      })),
      windows: { rates, cpu },
    };
    console.log('runtime', runtime);
    console.log(
      JSON.stringify({ node: process.version, cpus: cpus().length, ingest, runtime }, null, 2),
    );
  } finally {
    for (const child of children) await stop(child);
    for (const close of closers) close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (values.generate) await generate(values.generate, Number(values.traces), values.advertise?.[0]);
else await main();
