// A2A `message/send` overhead against the same graph's `/runs/wait` on the same server: the
// same run (echo graph, stateful thread) reached through both doors, windows interleaved
// A B B A so that drift of this shared VM falls on both alike. Medians of the windows reported.
//
//   npm run bench:a2a -- [--duration 5] [--repeats 4] [--warmup 2]
import { randomUUID } from 'node:crypto';
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
import { writeJsonReport } from '../http/report.js';
import { REPO_ROOT, startGraphdock } from '../http/servers.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    repeats: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '2' },
    threads: { type: 'string', default: '64' },
  },
});
const options = {
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

async function main(): Promise<number> {
  console.log('# A2A message/send overhead against /runs/wait (same server, same graph)');
  const server = await startGraphdock();
  const results: Record<string, Record<Door, LoadResult>> = {};
  let failed = false;
  try {
    const setup = new HttpClient(server.url, 4);
    const waitThreads = await createThreads(setup, options.threads);
    const a2aThreads = await createThreads(setup, options.threads);
    await setup.close();
    for (const scenario of scenarios(waitThreads, a2aThreads)) {
      for (const concurrency of [1, 8]) {
        const id = `${scenario.id} x${concurrency}`;
        const client = new HttpClient(server.url, concurrency);
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
            { ...options, concurrency },
            record,
          );
        for (const door of DOORS) await window(door, false);
        for (let r = 0; r < options.repeats; r++) {
          // A B, then B A: each door goes first as often as second.
          const order = r % 2 === 0 ? DOORS : [...DOORS].reverse();
          for (const door of order) windows[door].push(await window(door, true));
        }
        await client.close();
        const summary = {
          'runs/wait': summarize(windows['runs/wait']),
          'a2a message/send': summarize(windows['a2a message/send']),
        };
        results[id] = summary;
        for (const door of DOORS) {
          const s = summary[door];
          failed ||= s.errors > 0;
          console.log(
            `  ${id.padEnd(48)} ${door.padEnd(17)} ${s.opsPerSec.toFixed(1).padStart(7)} runs/s  ` +
              `p50 ${s.p50Ms.toFixed(1)} ms  p99 ${s.p99Ms.toFixed(1)} ms  errors ${s.errors}` +
              (s.firstError ? `  (${s.firstError})` : ''),
          );
        }
      }
    }
  } finally {
    await server.stop();
  }

  console.log(
    '\n| scenario | clients | /runs/wait runs/s | p50 ms | message/send runs/s | p50 ms | throughput ratio | p50 overhead |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const [id, r] of Object.entries(results)) {
    const [name, clients] = [id.replace(/ x\d+$/, ''), id.match(/x(\d+)$/)?.[1] ?? ''];
    const w = r['runs/wait'];
    const a = r['a2a message/send'];
    console.log(
      `| ${name} | ${clients} | ${w.opsPerSec.toFixed(1)} | ${w.p50Ms.toFixed(1)} | ${a.opsPerSec.toFixed(1)} | ` +
        `${a.p50Ms.toFixed(1)} | ${(a.opsPerSec / w.opsPerSec).toFixed(2)}x | ` +
        `${(a.p50Ms - w.p50Ms).toFixed(1)} ms (${((a.p50Ms / w.p50Ms - 1) * 100).toFixed(0)}%) |`,
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
