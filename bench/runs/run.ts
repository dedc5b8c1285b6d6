// Run throughput and latency: stateful wait, threadless wait and stateful stream on the echo
// graph, with 16 clients and with 1, plus the time to the first SSE event, against the official
// in-memory server in the same run, and against the in-process ceiling (`graph.invoke` on the
// same PostgreSQL checkpointer). Same method as bench/http: parties side by side, alternating
// windows, the ones not being measured frozen, medians reported, targets judged against the
// baseline's best window. Then 2,000 open SSE streams on Graphdock and its memory growth.
//
// Graphdock takes part twice: with its default 10 worker slots (N_JOBS_PER_WORKER), where 16
// clients keep some of their runs waiting in the queue, and with 16 slots, as many runs at once
// as the ceiling's 16 concurrent calls and the clients' 16 requests.
//
// Stateful runs are conversations of `--turns` runs: each client starts a new thread (created by
// the run, `if_not_exists: create`) after that many, so every party does the same work per run
// whatever its speed. On threads shared for the whole benchmark, a faster party's threads grow
// longer histories and each of its runs carries more state than the slower party's.
//
//   npm run bench:runs -- [--duration 5] [--repeats 3] [--warmup 2] [--streams 2000] [--only <op>]
//                         [--prewarm <seconds>]
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  HttpClient,
  measureTasks,
  summarize,
  type LoadResult,
  type RequestSpec,
} from '../http/load.js';
import { Lockstep, freezingOthers } from '../http/lockstep.js';
import { writeJsonReport } from '../http/report.js';
import { REPO_ROOT, startBaseline, startGraphdock, type RunningServer } from '../http/servers.js';
import { startCeiling, type Ceiling, type CeilingKind } from './ceiling.js';
import { openStreams, type StreamsResult } from './streams.js';
import { rerunUnderImageNode } from '../../scripts/image-node.js';

rerunUnderImageNode();

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    repeats: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '2' },
    turns: { type: 'string', default: '10' },
    streams: { type: 'string', default: '2000' },
    /** Only the operations whose id contains this text (e.g. "first event"). */
    only: { type: 'string', default: '' },
    /** Seconds of load each party takes, unmeasured, before the first operation. */
    prewarm: { type: 'string', default: '0' },
  },
});
const options = {
  durationMs: Number(values.duration) * 1000,
  repeats: Number(values.repeats),
  warmupMs: Number(values.warmup) * 1000,
  turnsPerThread: Number(values.turns),
  streams: Number(values.streams),
  only: values.only,
  prewarmMs: Number(values.prewarm) * 1000,
};

type Party = 'baseline' | 'graphdock' | 'graphdock16' | 'ceiling';

const body = (content: string) =>
  JSON.stringify({ assistant_id: 'echo', input: { messages: [{ role: 'user', content }] } });
const echoed = (text: string) =>
  text.includes('echo: ping') ? undefined : 'no echo in the answer';
const streamed = (text: string) =>
  text.includes('event: metadata') && text.includes('echo: ping')
    ? undefined
    : 'stream without metadata and values';

interface Op {
  id: string;
  concurrency: number;
  /** What the in-process ceiling does for this operation. */
  ceiling: CeilingKind;
  /** Latency is the time to the first SSE chunk, not to the end of the run. */
  firstEvent?: boolean;
  /** One request of a client; `thread` is that client's current conversation. */
  request: (thread: string) => RequestSpec;
}

/** The thread of a client's next run: a new one every `turnsPerThread` runs. */
function conversations(turnsPerThread: number) {
  const sent = new Map<number, number>();
  const current = new Map<number, string>();
  return (worker: number) => {
    const n = sent.get(worker) ?? 0;
    sent.set(worker, n + 1);
    let id = current.get(worker);
    if (!id || n % turnsPerThread === 0) current.set(worker, (id = randomUUID()));
    return id;
  };
}

const statefulBody = JSON.stringify({
  assistant_id: 'echo',
  input: { messages: [{ role: 'user', content: 'ping' }] },
  if_not_exists: 'create',
});
const statefulStream = (thread: string): RequestSpec => ({
  method: 'POST',
  path: `/threads/${thread}/runs/stream`,
  body: statefulBody,
  check: streamed,
});

const OPS: Op[] = [
  ...[16, 1].flatMap((concurrency): Op[] => [
    {
      id: `stateful wait x${concurrency}`,
      concurrency,
      ceiling: 'stateful',
      request: (thread) => ({
        method: 'POST',
        path: `/threads/${thread}/runs/wait`,
        body: statefulBody,
        check: echoed,
      }),
    },
    {
      id: `threadless wait x${concurrency}`,
      concurrency,
      ceiling: 'threadless',
      request: () => ({ method: 'POST', path: '/runs/wait', body: body('ping'), check: echoed }),
    },
    {
      id: `stateful stream x${concurrency}`,
      concurrency,
      ceiling: 'stream',
      request: statefulStream,
    },
  ]),
  {
    id: 'first event x1',
    concurrency: 1,
    ceiling: 'stream',
    firstEvent: true,
    request: statefulStream,
  },
];

/** A window of `op` against one party: measured (`record`) or a warm-up, `ms` long if given. */
type Window = (record: boolean, ms?: number) => Promise<LoadResult>;

function httpWindow(server: RunningServer, op: Op): Window {
  return async (record, ms) => {
    const client = new HttpClient(server.url, op.concurrency);
    const nextThread = conversations(options.turnsPerThread);
    try {
      return await measureTasks(
        async (worker) => {
          const spec = op.request(nextThread(worker));
          if (op.firstEvent) return client.firstChunk(spec.method, spec.path, spec.body);
          const res = await client.request(spec.method, spec.path, spec.body);
          if (res.status < 200 || res.status >= 300)
            throw new Error(`${spec.path} -> ${res.status}: ${res.body.slice(0, 300)}`);
          const problem = spec.check?.(res.body);
          if (problem) throw new Error(`${spec.path}: ${problem}`);
        },
        {
          concurrency: op.concurrency,
          durationMs: ms ?? (record ? options.durationMs : options.warmupMs),
          record,
        },
      );
    } finally {
      await client.close();
    }
  };
}

function ceilingWindow(ceiling: Ceiling, op: Op): Window {
  return (record, ms) => {
    const nextThread = conversations(options.turnsPerThread);
    return measureTasks(
      async (worker) => {
        const thread = nextThread(worker);
        if (!op.firstEvent) return ceiling.run(op.ceiling, thread);
        return ceiling.firstChunk(thread);
      },
      {
        concurrency: op.concurrency,
        durationMs: ms ?? (record ? options.durationMs : options.warmupMs),
        record,
      },
    );
  };
}

const rssMiB = (pid: number) => {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
};

async function main(): Promise<number> {
  console.log('# Graphdock run benchmark');
  const baseline = await startBaseline(10);
  const graphdock = await startGraphdock();
  const graphdock16 = await startGraphdock({ slots: 16 });
  const ceiling = await startCeiling(graphdock.databaseUrl!);
  const servers: [Party, RunningServer][] = [
    ['baseline', baseline],
    ['graphdock', graphdock],
    ['graphdock16', graphdock16],
  ];
  const parties: [Party, { freeze(frozen: boolean): void }][] = [
    ...servers,
    ['ceiling', { freeze: () => undefined }],
  ];
  const results: Record<string, Partial<Record<Party, LoadResult>>> = {};
  let streams: StreamsResult | undefined;
  const around = freezingOthers(parties);
  try {
    const lockstep = new Lockstep(
      parties.map(([name]) => name),
      {
        repeats: options.repeats,
        warmup: options.warmupMs > 0,
        settleMs: 9000,
        settleAfter: ['baseline'],
        around,
      },
    );
    const windowOf = (party: Party, op: Op): Window => {
      const server = servers.find(([name]) => name === party)?.[1];
      return server ? httpWindow(server, op) : ceilingWindow(ceiling, op);
    };
    const selected = OPS.filter((o) => o.id.includes(options.only));
    const first = selected[0];
    if (options.prewarmMs > 0 && first) {
      // Graphdock and the ceiling, each alone as in its windows: the in-process ceiling in
      // particular is slower in the first operation than later (docs/performance.md, runs J
      // to O). The baseline's queue would need to drain after it, and it is never this fast.
      for (const [name] of parties.filter(([n]) => n !== 'baseline'))
        await around(name, () => windowOf(name, first)(false, options.prewarmMs));
    }
    for (const op of selected) {
      await Promise.all(
        parties.map(async ([name]) => {
          const window = windowOf(name, op);
          const result = summarize(await lockstep.measure(name, op.id, window, true));
          (results[op.id] ??= {})[name] = result;
          console.log(
            `  ${name.padEnd(9)} ${op.id.padEnd(22)} ${result.opsPerSec.toFixed(1).padStart(7)} runs/s  ` +
              `p50 ${result.p50Ms.toFixed(1)} ms  p99 ${result.p99Ms.toFixed(1)} ms  errors ${result.errors}` +
              `  (windows ${(result.windows ?? []).join('/')})${result.firstError ? ` first error: ${result.firstError}` : ''}`,
          );
        }),
      );
    }
    if (options.streams > 0) {
      streams = await around('graphdock', () =>
        openStreams(graphdock, options.streams, () => rssMiB(graphdock.pid)),
      );
      console.log(
        `\n${streams.opened}/${options.streams} SSE streams open on Graphdock: RSS ${streams.rssBeforeMiB.toFixed(0)} -> ` +
          `${streams.rssOpenMiB.toFixed(0)} MiB (+${(streams.rssOpenMiB - streams.rssBeforeMiB).toFixed(0)} MiB); ` +
          `${streams.delivered}/${streams.probes} probe runs delivered to their streams; after closing ${streams.rssAfterMiB.toFixed(0)} MiB`,
      );
    }
  } finally {
    await ceiling.close();
    await Promise.all(servers.map(([, s]) => s.stop()));
  }

  console.log(
    '\n| operation | baseline runs/s | p50 ms | graphdock runs/s | p50 ms | ceiling runs/s | p50 ms | vs baseline (medians) | vs baseline best | share of ceiling | 16 slots runs/s | p50 ms | 16 slots vs baseline best | 16 slots share of ceiling |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  let failed = false;
  for (const op of OPS) {
    const { baseline: b, graphdock: g, graphdock16: g16, ceiling: c } = results[op.id] ?? {};
    if (!b || !g || !g16 || !c) continue;
    failed ||= b.errors + g.errors + g16.errors + c.errors > 0;
    const best = Math.max(b.opsPerSec, ...(b.windows ?? []));
    console.log(
      `| ${op.id} | ${b.opsPerSec.toFixed(1)} | ${b.p50Ms.toFixed(1)} | ${g.opsPerSec.toFixed(1)} | ` +
        `${g.p50Ms.toFixed(1)} | ${c.opsPerSec.toFixed(1)} | ${c.p50Ms.toFixed(1)} | ` +
        `${(g.opsPerSec / b.opsPerSec).toFixed(2)}x | ${(g.opsPerSec / best).toFixed(2)}x | ` +
        `${((g.opsPerSec / c.opsPerSec) * 100).toFixed(0)}% | ${g16.opsPerSec.toFixed(1)} | ` +
        `${g16.p50Ms.toFixed(1)} | ${(g16.opsPerSec / best).toFixed(2)}x | ` +
        `${((g16.opsPerSec / c.opsPerSec) * 100).toFixed(0)}% |`,
    );
  }
  const file = writeJsonReport(join(REPO_ROOT, 'bench', 'results'), {
    kind: 'runs',
    options,
    environment: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    },
    results,
    streams,
  });
  console.log(`\nJSON: ${file}`);
  return failed || (streams && streams.opened < options.streams) ? 1 : 0;
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
