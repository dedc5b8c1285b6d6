// The cost of custom auth (`auth.path`): the same requests against a server without auth and
// one whose Auth module authenticates at once and filters threads by owner (bench/auth/auth.ts).
// Both servers run side by side with the same data (threads of 20 owners).
// - Latency, one client: requests in pairs (no auth then auth, alternating the order); the
//   ratio of the medians is the cost.
// - Throughput, 4 clients: windows interleaved A B B A; medians of the windows.
// This VM is shared and noisy: the pairing, not the absolute figures, is what to read.
//
//   npx tsx bench/auth/run.ts [--pairs 200] [--duration 3] [--repeats 3] [--threads 2000]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HttpClient, runWindow, summarize, type RequestSpec } from '../http/load.js';
import { REPO_ROOT, startGraphdock, type RunningServer } from '../http/servers.js';

const { values } = parseArgs({
  options: {
    pairs: { type: 'string', default: '200' },
    duration: { type: 'string', default: '3' },
    repeats: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    threads: { type: 'string', default: '2000' },
  },
});
const options = {
  pairs: Number(values.pairs),
  durationMs: Number(values.duration) * 1000,
  repeats: Number(values.repeats),
  warmupMs: Number(values.warmup) * 1000,
  threads: Number(values.threads),
};
const OWNERS = 20;
const USER = 'user-00';
const AUTH = { authorization: `Bearer ${USER}` };

type Side = 'no auth' | 'custom auth';
interface Scenario {
  id: string;
  spec: Record<Side, () => RequestSpec>;
}

async function seed(client: HttpClient, authed: boolean): Promise<string[]> {
  const mine: string[] = [];
  // Through the auth server, each owner creates their own threads (the handler adds owner).
  const owners = new Map<string, HttpClient>();
  for (let i = 0; i < options.threads; i++) {
    const owner = `user-${String(i % OWNERS).padStart(2, '0')}`;
    let creator = client;
    if (authed) {
      creator =
        owners.get(owner) ??
        new HttpClient(client.baseUrl, 1, { authorization: `Bearer ${owner}` });
      owners.set(owner, creator);
    }
    const thread = await creator.json<{ thread_id: string }>('POST', '/threads', {
      metadata: authed ? {} : { owner },
    });
    if (owner === USER) mine.push(thread.thread_id);
  }
  await Promise.all([...owners.values()].map((c) => c.close()));
  return mine;
}

/** CPU time (ms) of a process and its live children, from /proc (clock ticks of 10 ms). */
function treeCpuMs(pid: number): number {
  let ms = 0;
  const visit = (p: number) => {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      ms += (Number(fields[11]) + Number(fields[12])) * 10;
      for (const child of readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').split(' '))
        if (child.trim()) visit(Number(child));
    } catch {
      // Gone in between: its time is lost either way.
    }
  };
  visit(pid);
  return ms;
}

/** The pids whose CPU a side costs: its server and the PostgreSQL serving it (by port). */
function sidePids(server: RunningServer): number[] {
  const port = server.databaseUrl ? new URL(server.databaseUrl).port : '';
  const postmaster = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .find((d) => {
      try {
        const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
        return /postgres$/.test(cmd[0] ?? '') && cmd.includes(port) && cmd.includes('-p');
      } catch {
        return false;
      }
    });
  return [server.pid, ...(postmaster ? [Number(postmaster)] : [])];
}

const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + treeCpuMs(pid), 0);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function paired(
  clients: Record<Side, HttpClient>,
  scenario: Scenario,
  pids: Record<Side, number[]>,
) {
  const took: Record<Side, number[]> = { 'no auth': [], 'custom auth': [] };
  // Server + PostgreSQL CPU over each side's own requests: summed, the 10 ms ticks average out.
  const cpu: Record<Side, number> = { 'no auth': 0, 'custom auth': 0 };
  const sides: Side[] = ['no auth', 'custom auth'];
  for (let i = 0; i < options.pairs + 10; i++) {
    for (const side of i % 2 ? sides : [...sides].reverse()) {
      const spec = scenario.spec[side]();
      const cpuBefore = cpuOf(pids[side]);
      const started = performance.now();
      const res = await clients[side].request(spec.method, spec.path, spec.body);
      const ms = performance.now() - started;
      if (i >= 10) cpu[side] += cpuOf(pids[side]) - cpuBefore;
      if (res.status !== 200) throw new Error(`${side} ${spec.path}: ${res.status} ${res.body}`);
      const problem = spec.check?.(res.body);
      if (problem) throw new Error(`${side} ${spec.path}: ${problem}`);
      if (i >= 10) took[side].push(ms);
    }
  }
  return {
    noAuth: median(took['no auth']),
    auth: median(took['custom auth']),
    cpuNoAuth: cpu['no auth'] / options.pairs,
    cpuAuth: cpu['custom auth'] / options.pairs,
  };
}

async function throughput(servers: Record<Side, RunningServer>, scenario: Scenario) {
  const windows: Record<Side, Awaited<ReturnType<typeof runWindow>>[]> = {
    'no auth': [],
    'custom auth': [],
  };
  const clients = {
    'no auth': new HttpClient(servers['no auth'].url, 4),
    'custom auth': new HttpClient(servers['custom auth'].url, 4, AUTH),
  };
  const load = { ...options, concurrency: 4 };
  const sides: Side[] = ['no auth', 'custom auth'];
  for (const side of sides) await runWindow(clients[side], scenario.spec[side], load, false);
  for (let r = 0; r < options.repeats; r++)
    for (const side of r % 2 ? [...sides].reverse() : sides)
      windows[side].push(await runWindow(clients[side], scenario.spec[side], load, true));
  await Promise.all(Object.values(clients).map((c) => c.close()));
  return {
    noAuth: summarize(windows['no auth']).opsPerSec,
    auth: summarize(windows['custom auth']).opsPerSec,
  };
}

async function main() {
  console.log('# Cost of custom auth (auth.path): authenticate at once + one `on` owner filter');
  const servers: Record<Side, RunningServer> = {
    'no auth': await startGraphdock(),
    'custom auth': await startGraphdock({
      config: join(REPO_ROOT, 'bench', 'auth', 'langgraph.json'),
    }),
  };
  try {
    const setupA = new HttpClient(servers['no auth'].url, 1);
    const setupB = new HttpClient(servers['custom auth'].url, 1);
    const [plainMine, authMine] = [await seed(setupA, false), await seed(setupB, true)];
    await Promise.all([setupA.close(), setupB.close()]);
    let n = 0;
    const pick = (ids: string[]) => ids[n++ % ids.length] ?? '';
    const tenRows = (body: string) =>
      (JSON.parse(body) as unknown[]).length === 10 ? undefined : 'not 10 threads';
    const search = (body: unknown): RequestSpec => ({
      method: 'POST',
      path: '/threads/search',
      body: JSON.stringify(body),
      check: tenRows,
    });
    const run = (ids: string[]) => (): RequestSpec => ({
      method: 'POST',
      path: `/threads/${pick(ids)}/runs/wait`,
      body: JSON.stringify({
        assistant_id: 'echo',
        input: { messages: [{ role: 'user', content: 'ping' }] },
      }),
      check: (body) => (body.includes('echo: ping') ? undefined : 'no echo'),
    });
    const scenarios: Scenario[] = [
      {
        id: 'thread search, 10 newest (no auth: of all threads)',
        spec: {
          'no auth': () => search({ limit: 10 }),
          'custom auth': () => search({ limit: 10 }),
        },
      },
      {
        id: 'thread search, 10 newest (no auth: the app filters by owner itself)',
        spec: {
          'no auth': () => search({ limit: 10, metadata: { owner: USER } }),
          'custom auth': () => search({ limit: 10 }),
        },
      },
      {
        id: 'run (runs/wait, echo graph, owned thread)',
        spec: { 'no auth': run(plainMine), 'custom auth': run(authMine) },
      },
    ];
    const pids = {
      'no auth': sidePids(servers['no auth']),
      'custom auth': sidePids(servers['custom auth']),
    };
    const single = {
      'no auth': new HttpClient(servers['no auth'].url, 1),
      'custom auth': new HttpClient(servers['custom auth'].url, 1, AUTH),
    };
    for (const scenario of scenarios) {
      const latency = await paired(single, scenario, pids);
      const rate = await throughput(servers, scenario);
      console.log(
        `- ${scenario.id}: p50 ${latency.noAuth.toFixed(2)} ms -> ${latency.auth.toFixed(2)} ms ` +
          `(x${(latency.auth / latency.noAuth).toFixed(3)}); CPU/request ${latency.cpuNoAuth.toFixed(2)} ms -> ` +
          `${latency.cpuAuth.toFixed(2)} ms (x${(latency.cpuAuth / latency.cpuNoAuth).toFixed(3)}); 4 clients ${rate.noAuth.toFixed(0)} -> ` +
          `${rate.auth.toFixed(0)} ops/s (x${(rate.auth / rate.noAuth).toFixed(3)})`,
      );
    }
    await Promise.all(Object.values(single).map((c) => c.close()));
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  }
}

await main();
