// Thread protocol transports: events/s and the time to the first event of a run, over SSE
// (`POST /threads/{id}/stream/events`) and over a WebSocket (`GET` on the same path, upgraded),
// with 16 clients and with 1, against the official in-memory server in the same run. The official
// server is `@langchain/langgraph-api` 1.5.1 from bench/baseline-protocol: 2.0.0 (bench/baseline)
// no longer serves the protocol. Same method as bench/runs: both servers up, alternating windows,
// the one not measured frozen (SIGSTOP), medians reported.
//
// One task of a client is one run of the `emit` graph (bench/protocol/graph.ts), which writes
// `--events` custom events, on a new thread:
// - SSE: `run.start` through `POST /threads/{id}/commands`, then the stream (which replays the
//   run from its start on both servers) until the root lifecycle event that ends the run;
// - WebSocket: connect, `subscription.subscribe`, then `run.start` on the socket, until the run's
//   root end.
// Latency is from sending `run.start` to the first event frame of the run; events/s counts the
// custom events received (each run must deliver all of them, or it is an error).
//
//   npm run bench:protocol -- [--duration 5] [--repeats 3] [--warmup 2] [--events 200]
//                             [--settle 3] [--slots 10] [--only <op>]
import { randomUUID } from 'node:crypto';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import WebSocket from 'ws';
import { measureTasks, summarize, type LoadResult } from '../http/load.js';
import { Lockstep, freezingOthers } from '../http/lockstep.js';
import { writeJsonReport } from '../http/report.js';
import { REPO_ROOT, startBaseline, startGraphdock, type RunningServer } from '../http/servers.js';
import { rerunUnderImageNode } from '../../scripts/image-node.js';

rerunUnderImageNode();

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    repeats: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '2' },
    events: { type: 'string', default: '200' },
    /** Seconds of pause before each operation and after each window (the baseline persists). */
    settle: { type: 'string', default: '3' },
    /** Graphdock's N_JOBS_PER_WORKER: runs it executes at once (its default, 10, unless given). */
    slots: { type: 'string', default: '10' },
    only: { type: 'string', default: '' },
  },
});
const options = {
  durationMs: Number(values.duration) * 1000,
  repeats: Number(values.repeats),
  warmupMs: Number(values.warmup) * 1000,
  eventsPerRun: Number(values.events),
  settleMs: Number(values.settle) * 1000,
  slots: Number(values.slots),
  only: values.only,
};

const CONFIG = join(REPO_ROOT, 'bench', 'protocol', 'langgraph.json');
const BASELINE_DIR = join(REPO_ROOT, 'bench', 'baseline-protocol');
const CHANNELS = ['lifecycle', 'custom'];

type Party = 'baseline' | 'graphdock';
type Result = LoadResult & { firstCustomP50Ms: number };
type Transport = 'sse' | 'websocket';

interface Op {
  id: string;
  transport: Transport;
  concurrency: number;
}

const OPS: Op[] = (['sse', 'websocket'] as const).flatMap((transport) =>
  [16, 1].map((concurrency) => ({ id: `${transport} x${concurrency}`, transport, concurrency })),
);

const runStart = (id: number) =>
  JSON.stringify({
    id,
    method: 'run.start',
    params: { assistant_id: 'emit', input: { events: options.eventsPerRun } },
  });

/** What a frame of the run tells: the root lifecycle end, a custom event, or something else. */
function classify(json: string): 'end' | 'custom' | 'other' {
  // Custom payloads are `{i}`: only lifecycle frames need parsing (a cheap generator matters on
  // two shared cores).
  if (json.includes('"lifecycle"')) {
    const frame = JSON.parse(json) as {
      method?: string;
      params?: { namespace?: unknown[]; data?: { event?: string } };
    };
    const ended = ['completed', 'failed', 'interrupted'].includes(
      String(frame.params?.data?.event),
    );
    if (frame.method === 'lifecycle' && frame.params?.namespace?.length === 0 && ended) {
      if (frame.params.data?.event !== 'completed')
        throw new Error(`run ended ${frame.params.data?.event}`);
      return 'end';
    }
    return 'other';
  }
  return json.includes('"custom"') ? 'custom' : 'other';
}

/** Counts one run's frames; resolves its first-event latency once the run's end arrived. */
class RunReader {
  first: bigint | undefined;
  firstCustom: bigint | undefined;
  custom = 0;
  constructor(readonly sent: bigint) {}

  /** True at the run's end. */
  frame(json: string): boolean {
    const now = process.hrtime.bigint();
    this.first ??= now - this.sent;
    const kind = classify(json);
    if (kind === 'custom') {
      this.firstCustom ??= now - this.sent;
      this.custom++;
    }
    if (kind !== 'end') return false;
    if (this.custom !== options.eventsPerRun)
      throw new Error(`${this.custom}/${options.eventsPerRun} custom events`);
    firstCustom?.push(Number(this.firstCustom ?? 0n) / 1e6);
    return true;
  }
}

/**
 * Milliseconds from `run.start` to the run's first custom event, in the window being measured:
 * the JS server's first event is the `running` lifecycle event it writes at `run.start` itself,
 * before the run is even picked up, so the first event the graph wrote is reported too.
 */
let firstCustom: number[] | undefined;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? 0;

async function sseRun(pool: Pool): Promise<bigint> {
  const thread = randomUUID();
  const headers = { 'content-type': 'application/json' };
  const reader = new RunReader(process.hrtime.bigint());
  const started = await pool.request({
    method: 'POST',
    path: `/threads/${thread}/commands`,
    headers,
    body: runStart(1),
  });
  const reply = await started.body.text();
  if (started.statusCode !== 200 || !reply.includes('"success"'))
    throw new Error(`run.start -> ${started.statusCode}: ${reply.slice(0, 300)}`);
  const res = await pool.request({
    method: 'POST',
    path: `/threads/${thread}/stream/events`,
    headers: { ...headers, accept: 'text/event-stream' },
    body: JSON.stringify({ channels: CHANNELS }),
  });
  if (res.statusCode !== 200)
    throw new Error(`stream/events -> ${res.statusCode}: ${(await res.body.text()).slice(0, 300)}`);
  res.body.setEncoding('utf8');
  let buffer = '';
  try {
    for await (const chunk of res.body as AsyncIterable<string>) {
      buffer += chunk;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.indexOf('data: ');
        if (data < 0) continue;
        const line = frame.indexOf('\n', data);
        if (reader.frame(frame.slice(data + 6, line < 0 ? undefined : line)))
          return reader.first ?? 0n;
      }
    }
    throw new Error(`stream ended after ${reader.custom} custom events, before the run's end`);
  } finally {
    // The stream stays open across runs on both servers: the client ends it.
    res.body.destroy();
  }
}

function wsRun(wsBase: string): Promise<bigint> {
  const thread = randomUUID();
  const socket = new WebSocket(`${wsBase}/threads/${thread}/stream/events`);
  return new Promise<bigint>((resolve, reject) => {
    let reader: RunReader | undefined;
    let frames = 0;
    const timer = setTimeout(
      () =>
        fail(
          new Error(
            `no run end within 15 s (open: ${socket.readyState === WebSocket.OPEN}, ${frames} frames, ${reader?.custom} custom)`,
          ),
        ),
      15_000,
    );
    const fail = (err: unknown) => {
      clearTimeout(timer);
      socket.removeAllListeners('close');
      socket.terminate();
      reject(err instanceof Error ? err : new Error(String(err)));
    };
    socket.once('error', fail);
    socket.once('close', () => fail(new Error('socket closed before the run ended')));
    // Subscribe, then start the run at once: the official server (1.5.1) answers a subscription
    // on a thread without a run only once a run binds, so waiting for that reply would wait forever.
    socket.once('open', () => {
      const params = { channels: CHANNELS };
      socket.send(JSON.stringify({ id: 1, method: 'subscription.subscribe', params }));
      reader = new RunReader(process.hrtime.bigint());
      socket.send(runStart(2));
    });
    socket.on('message', (raw: Buffer) => {
      try {
        const json = raw.toString();
        frames++;
        if (!reader) throw new Error(`a frame before any command: ${json.slice(0, 300)}`);
        if (json.includes('"type":"error"')) throw new Error(`command: ${json.slice(0, 300)}`);
        // Replies (the official server repeats the subscription's): not events.
        if (json.includes('"type":"success"')) return;
        if (reader.frame(json)) {
          const first = reader.first ?? 0n;
          clearTimeout(timer);
          socket.removeAllListeners('close');
          socket.close();
          resolve(first);
        }
      } catch (err) {
        fail(err);
      }
    });
  });
}

/** A window of `op` against `server`: each task is one run; its latency, the first event's. */
function window(server: RunningServer, op: Op) {
  return async (record: boolean): Promise<Result> => {
    const pool = new Pool(server.url, {
      connections: op.concurrency * 2,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const wsBase = server.url.replace(/^http/, 'ws');
    const customs: number[] = [];
    firstCustom = record ? customs : undefined;
    try {
      const result = await measureTasks(
        () => (op.transport === 'sse' ? sseRun(pool) : wsRun(wsBase)),
        {
          concurrency: op.concurrency,
          durationMs: record ? options.durationMs : options.warmupMs,
          record,
        },
      );
      return { ...result, firstCustomP50Ms: median(customs) };
    } finally {
      firstCustom = undefined;
      await pool.destroy();
    }
  };
}

async function main(): Promise<number> {
  console.log(
    `# Graphdock thread protocol benchmark (${options.eventsPerRun} custom events per run; ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')})`,
  );
  const baseline = await startBaseline(10, { dir: BASELINE_DIR, config: CONFIG });
  const graphdock = await startGraphdock({ config: CONFIG, slots: options.slots });
  console.log(`baseline: ${baseline.description}\ngraphdock: ${graphdock.description}`);
  const servers: [Party, RunningServer][] = [
    ['baseline', baseline],
    ['graphdock', graphdock],
  ];
  const results: Record<string, Partial<Record<Party, Result>>> = {};
  try {
    const lockstep = new Lockstep(
      servers.map(([name]) => name),
      {
        repeats: options.repeats,
        warmup: options.warmupMs > 0,
        settleMs: options.settleMs,
        settleAfter: ['baseline'],
        around: freezingOthers(servers),
      },
    );
    for (const op of OPS.filter((o) => o.id.includes(options.only))) {
      await Promise.all(
        servers.map(async ([name, server]) => {
          const windows = await lockstep.measure(name, op.id, window(server, op), false);
          // The median window by throughput, with its own first custom event p50.
          const result = summarize(windows) as Result;
          (results[op.id] ??= {})[name] = result;
          console.log(
            `  ${name.padEnd(9)} ${op.id.padEnd(13)} ${(result.opsPerSec * options.eventsPerRun).toFixed(0).padStart(7)} events/s ` +
              `(${result.opsPerSec.toFixed(1)} runs/s)  first event p50 ${result.p50Ms.toFixed(1)} ms  ` +
              `first custom p50 ${result.firstCustomP50Ms.toFixed(1)} ms  ` +
              `p99 ${result.p99Ms.toFixed(1)} ms  errors ${result.errors}  (runs/s windows ${(result.windows ?? []).join('/')})` +
              `${result.firstError ? `  first error: ${result.firstError}` : ''}`,
          );
        }),
      );
    }
  } finally {
    await Promise.all(servers.map(([, s]) => s.stop()));
  }

  console.log(
    '\n| transport, clients | baseline events/s | first event p50 / p99 ms | first custom p50 ms | graphdock events/s | first event p50 / p99 ms | first custom p50 ms | vs baseline (medians) | vs baseline best |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  let failed = false;
  for (const op of OPS) {
    const { baseline: b, graphdock: g } = results[op.id] ?? {};
    if (!b || !g) continue;
    failed ||= b.errors + g.errors > 0;
    const best = Math.max(b.opsPerSec, ...(b.windows ?? []));
    const events = (r: Result) => (r.opsPerSec * options.eventsPerRun).toFixed(0);
    const latency = (r: Result) =>
      `${r.p50Ms.toFixed(1)} / ${r.p99Ms.toFixed(1)} | ${r.firstCustomP50Ms.toFixed(1)}`;
    console.log(
      `| ${op.id} | ${events(b)} | ${latency(b)} | ${events(g)} | ${latency(g)} | ` +
        `${(g.opsPerSec / b.opsPerSec).toFixed(2)}x | ` +
        `${(g.opsPerSec / best).toFixed(2)}x |`,
    );
  }
  const file = writeJsonReport(join(REPO_ROOT, 'bench', 'results'), {
    kind: 'protocol',
    options,
    environment: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadavg: loadavg(),
    },
    servers: { baseline: baseline.description, graphdock: graphdock.description },
    results,
  });
  console.log(`\nJSON: ${file}`);
  return failed ? 1 : 0;
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
