// A2A `message/send` overhead against the same graph's `/runs/wait` on the same server: the
// same run (echo graph, stateful thread) reached through both doors.
// - Latency, one client: requests in pairs (wait then send, or send then wait, alternating), so
//   both doors meet the same machine; the median of the per-pair differences is the overhead.
// - Throughput, 8 clients: windows interleaved A B B A; medians of the windows.
// This VM is shared and noisy: the pairing, not the absolute figures, is what to read.
//
//   npm run bench:a2a -- [--pairs 150] [--duration 5] [--repeats 4] [--warmup 2]
import { randomUUID } from 'node:crypto';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  HttpClient,
  runWindow,
  summarize,
  type LoadResult,
  type RequestSpec,
} from '../http/load.js';
import { writeJsonReport } from '../http/report.js';
import { REPO_ROOT, startGraphdock } from '../http/servers.js';
import { rerunUnderImageNode } from '../../scripts/image-node.js';

rerunUnderImageNode();

const { values } = parseArgs({
  options: {
    pairs: { type: 'string', default: '150' },
    duration: { type: 'string', default: '5' },
    repeats: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '2' },
    threads: { type: 'string', default: '64' },
  },
});
const options = {
  pairs: Number(values.pairs),
  durationMs: Number(values.duration) * 1000,
  repeats: Number(values.repeats),
  warmupMs: Number(values.warmup) * 1000,
  threads: Number(values.threads),
};

const waitBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    assistant_id: 'echo',
    input: { messages: [{ role: 'user', content: 'ping' }] },
    ...extra,
  });
const sendBody = (contextId?: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: {
      message: {
        kind: 'message',
        role: 'user',
        messageId: randomUUID(),
        parts: [{ kind: 'text', text: 'ping' }],
        ...(contextId ? { contextId } : {}),
      },
    },
  });
const echoed = (text: string) =>
  text.includes('echo: ping') ? undefined : 'no echo in the answer';
const completed = (text: string) =>
  text.includes('"state":"completed"') && text.includes('echo: ping')
    ? undefined
    : `not a completed task: ${text.slice(0, 200)}`;

type Door = 'runs/wait' | 'a2a message/send';
interface Scenario {
  id: string;
  next: Record<Door, (worker: number, n: number) => RequestSpec>;
}

function scenarios(waitThreads: string[], a2aThreads: string[]): Scenario[] {
  const pick = (ids: string[], worker: number, n: number) =>
    ids[(worker * 7 + n) % ids.length] ?? '';
  return [
    {
      id: 'new context (thread created by the run)',
      next: {
        'runs/wait': () => ({
          method: 'POST',
          path: `/threads/${randomUUID()}/runs/wait`,
          body: waitBody({ if_not_exists: 'create' }),
          check: echoed,
        }),
        'a2a message/send': () => ({
          method: 'POST',
          path: '/a2a/echo',
          body: sendBody(),
          check: completed,
        }),
      },
    },
    {
      id: 'existing context (follow-up turn)',
      next: {
        'runs/wait': (worker, n) => ({
          method: 'POST',
          path: `/threads/${pick(waitThreads, worker, n)}/runs/wait`,
          body: waitBody(),
          check: echoed,
        }),
        'a2a message/send': (worker, n) => ({
          method: 'POST',
          path: '/a2a/echo',
          body: sendBody(pick(a2aThreads, worker, n)),
          check: completed,
        }),
      },
    },
  ];
}

async function createThreads(client: HttpClient, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++)
    ids.push((await client.json<{ thread_id: string }>('POST', '/threads', {})).thread_id);
  return ids;
}

const DOORS: Door[] = ['runs/wait', 'a2a message/send'];
const THROUGHPUT_CLIENTS = 8;

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};
const quantile = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;
};

interface PairedLatency {
  pairs: number;
  errors: number;
  firstError?: string;
  waitP50Ms: number;
  sendP50Ms: number;
  /** Median, 25th and 75th percentile of (send - wait) within each pair. */
  overheadP50Ms: number;
  overheadP25Ms: number;
  overheadP75Ms: number;
}

/** One client: a wait and a send back to back, alternating which goes first. */
async function pairedLatency(client: HttpClient, scenario: Scenario): Promise<PairedLatency> {
  const latencies: Record<Door, number[]> = { 'runs/wait': [], 'a2a message/send': [] };
  const differences: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const once = async (door: Door, n: number): Promise<number | undefined> => {
    const spec = scenario.next[door](0, n);
    const started = performance.now();
    const res = await client.request(spec.method, spec.path, spec.body);
    const took = performance.now() - started;
    const problem =
      res.status < 200 || res.status >= 300 ? `HTTP ${res.status}` : spec.check?.(res.body);
    if (problem === undefined) return took;
    errors++;
    firstError ??= `${door}: ${problem}`;
    return undefined;
  };
  const warmupPairs = 10;
  for (let i = 0; i < options.pairs + warmupPairs; i++) {
    const order = i % 2 === 0 ? DOORS : [...DOORS].reverse();
    const took: Partial<Record<Door, number>> = {};
    for (const door of order) took[door] = await once(door, i);
    const wait = took['runs/wait'];
    const send = took['a2a message/send'];
    if (i < warmupPairs || wait === undefined || send === undefined) continue;
    latencies['runs/wait'].push(wait);
    latencies['a2a message/send'].push(send);
    differences.push(send - wait);
  }
  return {
    pairs: differences.length,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    waitP50Ms: median(latencies['runs/wait']),
    sendP50Ms: median(latencies['a2a message/send']),
    overheadP50Ms: median(differences),
    overheadP25Ms: quantile(differences, 0.25),
    overheadP75Ms: quantile(differences, 0.75),
  };
}

/** Several clients: windows of each door, A B then B A. */
async function throughput(
  client: HttpClient,
  scenario: Scenario,
): Promise<Record<Door, LoadResult>> {
  const windows: Record<Door, LoadResult[]> = { 'runs/wait': [], 'a2a message/send': [] };
  const counters = new Map<number, number>();
  const window = (door: Door, record: boolean) =>
    runWindow(
      client,
      (worker) => {
        const n = (counters.get(worker) ?? 0) + 1;
        counters.set(worker, n);
        return scenario.next[door](worker, n);
      },
      { ...options, concurrency: THROUGHPUT_CLIENTS },
      record,
    );
  for (const door of DOORS) await window(door, false);
  for (let r = 0; r < options.repeats; r++) {
    const order = r % 2 === 0 ? DOORS : [...DOORS].reverse();
    for (const door of order) windows[door].push(await window(door, true));
  }
  return {
    'runs/wait': summarize(windows['runs/wait']),
    'a2a message/send': summarize(windows['a2a message/send']),
  };
}

interface ScenarioResult {
  latency: PairedLatency;
  throughput: Record<Door, LoadResult>;
}

async function main(): Promise<number> {
  console.log('# A2A message/send overhead against /runs/wait (same server, same graph)');
  const server = await startGraphdock();
  const results: Record<string, ScenarioResult> = {};
  let failed = false;
  try {
    const setup = new HttpClient(server.url, 4);
    const waitThreads = await createThreads(setup, options.threads);
    const a2aThreads = await createThreads(setup, options.threads);
    await setup.close();
    for (const scenario of scenarios(waitThreads, a2aThreads)) {
      const single = new HttpClient(server.url, 1);
      const latency = await pairedLatency(single, scenario);
      await single.close();
      console.log(
        `  ${scenario.id}: 1 client, ${latency.pairs} pairs: wait p50 ${latency.waitP50Ms.toFixed(1)} ms, ` +
          `send p50 ${latency.sendP50Ms.toFixed(1)} ms, overhead p50 ${latency.overheadP50Ms.toFixed(1)} ms ` +
          `(IQR ${latency.overheadP25Ms.toFixed(1)} to ${latency.overheadP75Ms.toFixed(1)}), errors ${latency.errors}` +
          (latency.firstError ? ` (${latency.firstError})` : ''),
      );
      const many = new HttpClient(server.url, THROUGHPUT_CLIENTS);
      const rates = await throughput(many, scenario);
      await many.close();
      for (const door of DOORS) {
        const r = rates[door];
        console.log(
          `  ${scenario.id}: ${THROUGHPUT_CLIENTS} clients, ${door}: ${r.opsPerSec.toFixed(1)} runs/s, ` +
            `p50 ${r.p50Ms.toFixed(1)} ms, errors ${r.errors} (windows ${(r.windows ?? []).join('/')})` +
            (r.firstError ? ` (${r.firstError})` : ''),
        );
      }
      failed ||= latency.errors + rates['runs/wait'].errors + rates['a2a message/send'].errors > 0;
      results[scenario.id] = { latency, throughput: rates };
    }
  } finally {
    await server.stop();
  }

  console.log(
    `\n| scenario | wait p50 ms (1 client) | send p50 ms | overhead p50 (IQR) | wait runs/s (${THROUGHPUT_CLIENTS} clients) | send runs/s | throughput ratio |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const [id, { latency: l, throughput: t }] of Object.entries(results)) {
    const w = t['runs/wait'].opsPerSec;
    const a = t['a2a message/send'].opsPerSec;
    console.log(
      `| ${id} | ${l.waitP50Ms.toFixed(1)} | ${l.sendP50Ms.toFixed(1)} | ` +
        `${l.overheadP50Ms.toFixed(1)} ms (${l.overheadP25Ms.toFixed(1)} to ${l.overheadP75Ms.toFixed(1)}) | ` +
        `${w.toFixed(1)} | ${a.toFixed(1)} | ${(a / w).toFixed(2)}x |`,
    );
  }
  const file = writeJsonReport(join(REPO_ROOT, 'bench', 'results'), {
    kind: 'a2a',
    options,
    environment: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadAverage: loadavg(),
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
