// Run throughput and latency: stateful wait, threadless wait and stateful stream on the echo
// graph, with 16 clients and with 1, against the official in-memory server in the same run.
// Same method as bench/http: both servers side by side, alternating windows, the one not being
// measured frozen, medians reported, targets judged against the baseline's best window.
//
//   npm run bench:runs -- [--duration 5] [--repeats 3] [--warmup 2]
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  HttpClient,
  runWindow,
  summarize,
  type LoadResult,
  type RequestSpec,
} from '../http/load.js';
import { Lockstep, freezingOthers } from '../http/lockstep.js';
import { writeJsonReport } from '../http/report.js';
import {
  REPO_ROOT,
  startBaseline,
  startGraphdock,
  type RunningServer,
  type ServerName,
} from '../http/servers.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    repeats: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '2' },
    'threads-per-client': { type: 'string', default: '20' },
  },
});
const options = {
  durationMs: Number(values.duration) * 1000,
  repeats: Number(values.repeats),
  warmupMs: Number(values.warmup) * 1000,
  threadsPerClient: Number(values['threads-per-client']),
};

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
  next: (threads: string[], worker: number, n: number) => RequestSpec;
}

const OPS: Op[] = [16, 1].flatMap((concurrency) => [
  {
    id: `stateful wait x${concurrency}`,
    concurrency,
    next: (threads, worker, n) => ({
      method: 'POST',
      path: `/threads/${threads[(worker * options.threadsPerClient + (n % options.threadsPerClient)) % threads.length]}/runs/wait`,
      body: body('ping'),
      check: echoed,
    }),
  },
  {
    id: `threadless wait x${concurrency}`,
    concurrency,
    next: () => ({ method: 'POST', path: '/runs/wait', body: body('ping'), check: echoed }),
  },
  {
    id: `stateful stream x${concurrency}`,
    concurrency,
    next: (threads, worker, n) => ({
      method: 'POST',
      path: `/threads/${threads[(worker * options.threadsPerClient + (n % options.threadsPerClient)) % threads.length]}/runs/stream`,
      body: body('ping'),
      check: streamed,
    }),
  },
]);

async function createThreads(server: RunningServer, count: number): Promise<string[]> {
  const client = new HttpClient(server.url, 16);
  try {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      ids.push((await client.json<{ thread_id: string }>('POST', '/threads', {})).thread_id);
    }
    return ids;
  } finally {
    await client.close();
  }
}

async function main(): Promise<number> {
  console.log('# Graphdock run benchmark');
  const servers: [ServerName, RunningServer][] = [
    ['baseline', await startBaseline(10)],
    ['graphdock', await startGraphdock()],
  ];
  const results: Record<string, Record<string, LoadResult>> = {};
  try {
    const threads = new Map<ServerName, string[]>();
    for (const [name, server] of servers)
      threads.set(name, await createThreads(server, 16 * options.threadsPerClient));
    const lockstep = new Lockstep(
      servers.map(([name]) => name),
      {
        repeats: options.repeats,
        warmup: options.warmupMs > 0,
        settleMs: 9000,
        settleAfter: ['baseline'],
        around: freezingOthers(servers),
      },
    );
    for (const op of OPS) {
      await Promise.all(
        servers.map(async ([name, server]) => {
          const client = new HttpClient(server.url, op.concurrency);
          const counters = new Map<number, number>();
          const next = (worker: number) => {
            const n = (counters.get(worker) ?? 0) + 1;
            counters.set(worker, n);
            return op.next(threads.get(name) ?? [], worker, n);
          };
          try {
            const windows = await lockstep.measure(
              name,
              op.id,
              (record) =>
                runWindow(client, next, { ...options, concurrency: op.concurrency }, record),
              true,
            );
            const result = summarize(windows);
            (results[op.id] ??= {})[name] = result;
            console.log(
              `  ${name.padEnd(9)} ${op.id.padEnd(22)} ${result.opsPerSec.toFixed(1).padStart(7)} runs/s  ` +
                `p50 ${result.p50Ms.toFixed(1)} ms  p99 ${result.p99Ms.toFixed(1)} ms  errors ${result.errors}` +
                `  (windows ${(result.windows ?? []).join('/')})`,
            );
          } finally {
            await client.close();
          }
        }),
      );
    }
  } finally {
    await Promise.all(servers.map(([, s]) => s.stop()));
  }

  console.log(
    '\n| operation | baseline runs/s | p50 ms | graphdock runs/s | p50 ms | ratio of medians | ratio to baseline best |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  let failed = false;
  for (const op of OPS) {
    const b = results[op.id]?.baseline;
    const g = results[op.id]?.graphdock;
    if (!b || !g) continue;
    failed ||= b.errors + g.errors > 0;
    const best = Math.max(b.opsPerSec, ...(b.windows ?? []));
    console.log(
      `| ${op.id} | ${b.opsPerSec.toFixed(1)} | ${b.p50Ms.toFixed(1)} | ${g.opsPerSec.toFixed(1)} | ` +
        `${g.p50Ms.toFixed(1)} | ${(g.opsPerSec / b.opsPerSec).toFixed(2)}x | ${(g.opsPerSec / best).toFixed(2)}x |`,
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
