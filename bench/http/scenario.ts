// The sequence of seedings and measurements run against each server, identical for both.
//
// Order matters because threads accumulate: searches are measured first with exactly
// `smallThreads` and then exactly `threads` threads in the server (the second count includes the
// `stateThreads` threads with a checkpoint, which carry no user value); gets, state reads and
// creates follow.
import {
  HttpClient,
  runWindow,
  summarize,
  type LoadOptions,
  type LoadResult,
  type RequestSpec,
} from './load.js';
import type { Lockstep } from './lockstep.js';
import { seedThreads } from './seed.js';
import type { RunningServer, ServerName } from './servers.js';

export type StateSeed = 'supersteps' | 'update';

export interface ScenarioOptions extends LoadOptions {
  threads: number;
  smallThreads: number;
  stateThreads: number;
  seedConcurrency: number;
  stateSeed: StateSeed;
}

export type OpId =
  | 'threads.create'
  | 'threads.get'
  | 'threads.state'
  | 'threads.search.metadata'
  | 'threads.search.newest'
  | 'assistants.search';

export interface Measurement {
  op: OpId;
  /** Threads in the server while this operation was measured (creates add more). */
  threadCount: number;
  result: LoadResult;
}

export interface SeedRecord {
  what: string;
  count: number;
  seconds: number;
  perSec: number;
}

export interface ServerRun {
  server: ServerName;
  description: string;
  seeding: SeedRecord[];
  measurements: Measurement[];
}

const USERS_PER_VALUE = 10;
const json = (value: unknown) => JSON.stringify(value);
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;

function stateValues() {
  return { messages: [{ role: 'user', content: 'hi' }] };
}

function searchBody(threadIndex: number) {
  return { metadata: { user: `u${Math.floor(threadIndex / USERS_PER_VALUE)}` } };
}

function checkSearch(user: string | undefined) {
  return (body: string): string | undefined => {
    const threads = JSON.parse(body) as {
      metadata?: Record<string, unknown>;
      created_at?: string;
    }[];
    if (!Array.isArray(threads) || threads.length !== 10) {
      return `expected 10 threads, got ${Array.isArray(threads) ? threads.length : typeof threads}`;
    }
    if (user !== undefined && threads.some((t) => t.metadata?.user !== user)) {
      return `a thread without metadata.user=${user} was returned`;
    }
    // The API's default order is created_at, newest first.
    const times = threads.map((t) => Date.parse(t.created_at ?? ''));
    if (times.some((t, i) => Number.isNaN(t) || (i > 0 && t > (times[i - 1] ?? t)))) {
      return 'threads are not ordered by created_at, newest first';
    }
    return undefined;
  };
}

/** Runs every step against `server`, adding results to `run` as they come (kept on failure). */
export async function runScenario(
  server: RunningServer,
  options: ScenarioOptions,
  run: ServerRun,
  lockstep: Lockstep,
): Promise<void> {
  let threadCount = 0;

  const measure = async (op: OpId, next: (worker: number) => RequestSpec, writes = false) => {
    const client = new HttpClient(server.url, options.concurrency);
    try {
      const windows = await lockstep.measure(
        run.server,
        `${op}@${threadCount}`,
        (record) => runWindow(client, next, options, record),
        writes,
      );
      const result = summarize(windows);
      run.measurements.push({ op, threadCount, result });
      const errors = result.errors > 0 ? `  ERRORS: ${result.errors} (${result.firstError})` : '';
      console.log(
        `  ${op.padEnd(24)} @${String(threadCount).padStart(7)} threads: ` +
          `${result.opsPerSec.toFixed(0).padStart(6)} ops/s  p50 ${result.p50Ms.toFixed(2)} ms  ` +
          `p99 ${result.p99Ms.toFixed(2)} ms  (client CPU ${result.generatorCpuPct.toFixed(0)}%, ` +
          `windows ${(result.windows ?? []).join('/')})` +
          errors,
      );
    } finally {
      await client.close();
    }
  };

  const seed = async (what: string, count: number, body: (i: number) => unknown) => {
    console.log(`  seeding ${count} ${what} ...`);
    const seeded = await seedThreads(server.url, count, options.seedConcurrency, body, what);
    threadCount += count;
    run.seeding.push({ what, count, seconds: seeded.seconds, perSec: seeded.perSec });
    console.log(`    ${count} in ${seeded.seconds.toFixed(1)} s (${seeded.perSec.toFixed(0)}/s)`);
    return seeded.threadIds;
  };

  const measureSearches = async (searchThreads: number) => {
    const users = Math.floor(searchThreads / USERS_PER_VALUE);
    await verify(server.url, { metadata: { user: `u${users - 1}` }, limit: 10 }, 'u' + (users - 1));
    await measure('threads.search.metadata', () => {
      const user = `u${Math.floor(Math.random() * users)}`;
      return {
        method: 'POST',
        path: '/threads/search',
        body: json({ metadata: { user }, limit: 10 }),
        check: checkSearch(user),
      };
    });
    const newest = json({ limit: 10 });
    await measure('threads.search.newest', () => ({
      method: 'POST',
      path: '/threads/search',
      body: newest,
      check: checkSearch(undefined),
    }));
  };

  // 1. Assistant search: the server registers one assistant per graph at start-up.
  const assistantSearch = json({ limit: 10 });
  await measure('assistants.search', () => ({
    method: 'POST',
    path: '/assistants/search',
    body: assistantSearch,
    check: (body) => ((JSON.parse(body) as unknown[]).length > 0 ? undefined : 'no assistants'),
  }));

  // 2. Search with exactly `smallThreads` threads in the server, all carrying a user value.
  const small = Math.min(options.smallThreads, options.threads);
  const searchIds = await seed('search threads', small, (i) => searchBody(i));
  await measureSearches(searchIds.length);

  // 3. Threads with a checkpoint, for the state reads. Seeded while the server is still small:
  //    the baseline scans every thread on each state write, which gets slow at 100,000.
  const stateIds = await seedStateThreads(server, options, seed);

  // 4. Top up to exactly `threads` threads and search again (each user value on exactly 10).
  const more = options.threads - threadCount;
  if (more > 0) {
    const offset = searchIds.length;
    const ids = await seed('more search threads', more, (i) => searchBody(offset + i));
    for (const id of ids) searchIds.push(id);
    await measureSearches(searchIds.length);
  }

  // 5. Get a random one of the seeded threads, and the state of a thread with a checkpoint.
  await measure('threads.get', () => {
    const id = pick(searchIds);
    return {
      method: 'GET',
      path: `/threads/${id}`,
      check: (body) => (body.includes(id) ? undefined : 'thread id missing from the answer'),
    };
  });
  await measure('threads.state', () => ({
    method: 'GET',
    path: `/threads/${pick(stateIds)}/state`,
    check: (body) => (body.includes('"hi"') ? undefined : 'state without the seeded message'),
  }));

  // 6. Create, last, because it adds threads.
  await measure(
    'threads.create',
    (worker) => ({
      method: 'POST',
      path: '/threads',
      body: json({ metadata: { bench: 'create', worker } }),
    }),
    true,
  );
}

async function seedStateThreads(
  server: RunningServer,
  options: ScenarioOptions,
  seed: (what: string, count: number, body: (i: number) => unknown) => Promise<string[]>,
): Promise<string[]> {
  const metadata = { graph_id: 'echo' };
  if (options.stateSeed === 'supersteps') {
    const body = {
      supersteps: [{ updates: [{ values: stateValues(), as_node: '__start__' }] }],
      metadata,
    };
    let ids: string[];
    try {
      ids = await seed('threads with state (supersteps)', options.stateThreads, () => body);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new Error(`${message}\n(try --state-seed update, which then applies to both servers)`);
    }
    await verifyState(server.url, ids[0]);
    return ids;
  }
  // `update`: create the thread, then write its state with POST /threads/{id}/state.
  const ids = await seed('threads for state (update)', options.stateThreads, () => ({ metadata }));
  const client = new HttpClient(server.url, options.seedConcurrency);
  try {
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < ids.length; i = next++) {
        await client.json('POST', `/threads/${ids[i]}/state`, {
          values: stateValues(),
          as_node: 'echo',
        });
      }
    };
    await Promise.all(Array.from({ length: options.seedConcurrency }, () => worker()));
  } finally {
    await client.close();
  }
  await verifyState(server.url, ids[0]);
  return ids;
}

async function verify(url: string, query: unknown, user: string): Promise<void> {
  const client = new HttpClient(url, 1);
  try {
    const res = await client.request('POST', '/threads/search', json(query));
    const problem =
      res.status === 200 ? checkSearch(user)(res.body) : `status ${res.status}: ${res.body}`;
    if (problem) throw new Error(`seeded threads are not searchable as expected: ${problem}`);
  } finally {
    await client.close();
  }
}

async function verifyState(url: string, threadId: string | undefined): Promise<void> {
  const client = new HttpClient(url, 1);
  try {
    const state = await client.json<{ values?: { messages?: unknown[] } }>(
      'GET',
      `/threads/${threadId}/state`,
    );
    if (state.values?.messages?.length !== 1) {
      throw new Error(
        `seeded thread has no state (${JSON.stringify(state).slice(0, 300)}); ` +
          'try --state-seed update (and use it for both servers)',
      );
    }
  } finally {
    await client.close();
  }
}
