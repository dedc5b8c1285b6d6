// Recovery from a PostgreSQL outage: two `graphdock runtime` replicas with runs in flight, then
// PostgreSQL stopped (fast shutdown) and started again on the same port and data, a few times
// for `--down` seconds and once for `--long` seconds. For each outage, the time from PostgreSQL
// accepting connections again to the first successful new run (`POST /runs/wait`, echo graph)
// on every replica; target under 2 s. Each replica must still be running at the end, with one
// listening connection.
//
//   npm run bench:faults -- [--restarts 5] [--down 3] [--long 20] [--load 4]
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startServer, type RunningServer } from '../../test/support/server.js';
import { startRestartablePostgres } from '../../test/support/restartable-postgres.js';

const { values } = parseArgs({
  options: {
    restarts: { type: 'string', default: '5' },
    down: { type: 'string', default: '3' },
    long: { type: 'string', default: '20' },
    load: { type: 'string', default: '4' },
  },
});
const options = {
  restarts: Number(values.restarts),
  downMs: Number(values.down) * 1000,
  longMs: Number(values.long) * 1000,
  load: Number(values.load),
};
const UNHANDLED_EXIT = 86;
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
}

/** Milliseconds from `since` to the first `/runs/wait` that answers the echo on `server`. */
async function firstRun(server: RunningServer, since: number): Promise<number> {
  for (let i = 0; ; i++) {
    const content = `probe ${i}`;
    try {
      const res = await post(`${server.url}/runs/wait`, {
        assistant_id: 'echo',
        input: hi(content),
      });
      const body = (await res.json()) as { messages?: { content: string }[] };
      if (res.ok && body.messages?.at(-1)?.content === `echo: ${content}`)
        return performance.now() - since;
    } catch {
      // the database is not back for this replica yet
    }
    if (performance.now() - since > 60_000) throw new Error('no run succeeded within 60 s');
    await sleep(10);
  }
}

/** Milliseconds from `since` to the first answered `POST /threads/search` (one plain read). */
async function firstRead(server: RunningServer, since: number): Promise<number> {
  for (;;) {
    const res = await post(`${server.url}/threads/search`, { limit: 1 }).catch(() => undefined);
    if (res?.ok) return performance.now() - since;
    if (performance.now() - since > 60_000) throw new Error('no read succeeded within 60 s');
    await sleep(10);
  }
}

const db = await startRestartablePostgres({ durable: true });
const env = {
  GRAPHDOCK_UNHANDLED_REJECTION_EXIT_CODE: String(UNHANDLED_EXIT),
  GRAPHDOCK_SLOW_STEP_MS: '300',
  GRAPHDOCK_RESPONSE_LOG: undefined,
};
const replicas: RunningServer[] = [];
let stopping = false;
const background: Promise<void>[] = [];
try {
  for (let i = 0; i < 2; i++) replicas.push(await startServer({ databaseUrl: db.url, env }));
  // Runs in flight through both replicas while PostgreSQL goes away.
  for (let i = 0; i < options.load; i++)
    background.push(
      (async () => {
        const server = replicas[i % replicas.length]!;
        while (!stopping) {
          await post(`${server.url}/runs/wait`, { assistant_id: 'slow', input: hi(`load ${i}`) })
            .then((r) => r.text())
            .catch(() => sleep(100));
        }
      })(),
    );
  await sleep(2000);
  const outages = [
    ...Array.from({ length: options.restarts }, () => options.downMs),
    ...(options.longMs > 0 ? [options.longMs] : []),
  ];
  const rows: { down: number; times: number[]; reads: number[] }[] = [];
  for (const down of outages) {
    await db.stop();
    await sleep(down);
    await db.start();
    const back = performance.now();
    const [times, reads] = await Promise.all([
      Promise.all(replicas.map((r) => firstRun(r, back))),
      Promise.all(replicas.map((r) => firstRead(r, back))),
    ]);
    rows.push({ down, times, reads });
    const ms = (list: number[]) => list.map((t) => `${Math.round(t)} ms`).join(', ');
    console.log(
      `down ${down / 1000} s: first run after ${ms(times)}; first read after ${ms(reads)}`,
    );
    await sleep(2000);
  }
  stopping = true;
  await Promise.all(background);
  const admin = new pg.Client({ connectionString: db.adminUrl });
  await admin.connect();
  const { rows: listening } = await admin.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'graphdock-listen'`,
  );
  await admin.end();
  const all = rows.flatMap((r) => r.times).sort((a, b) => a - b);
  const worst = rows.map((r) => Math.max(...r.times)).sort((a, b) => a - b);
  const alive = replicas.map((r) => r.process.exitCode ?? r.process.signalCode ?? 'alive');
  console.log('\n| Measure | Value |\n| --- | ---: |');
  console.log(`| outages (${outages.map((d) => d / 1000).join(', ')} s) | ${outages.length} |`);
  console.log(`| first run on a replica, median ms | ${Math.round(all[all.length >> 1]!)} |`);
  console.log(
    `| first run on every replica, median ms | ${Math.round(worst[worst.length >> 1]!)} |`,
  );
  console.log(`| first run on every replica, max ms | ${Math.round(worst.at(-1)!)} |`);
  const reads = rows.flatMap((r) => r.reads).sort((a, b) => a - b);
  console.log(`| first read on a replica, median ms | ${Math.round(reads[reads.length >> 1]!)} |`);
  console.log(`| replicas alive after | ${alive.filter((a) => a === 'alive').length} of 2 |`);
  console.log(`| listening connections after | ${listening[0]!.n} |`);
} finally {
  stopping = true;
  await Promise.all(replicas.map((r) => r.stop('SIGTERM')));
  await db.destroy();
}
