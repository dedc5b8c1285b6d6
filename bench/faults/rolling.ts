// Throughput during a rolling restart: `--replicas` `graphdock runtime` processes on one durable
// PostgreSQL, `--clients` clients making stateless `/runs/wait` runs of the echo graph without
// pause, each request sent to the next replica in turn. Then each replica in turn gets SIGTERM
// (it keeps serving for GRAPHDOCK_SHUTDOWN_DRAIN_SECS, each answer closing its connection, then
// stops listening), and is started again on the same port once it has exited. A request refused
// at connect (nothing was sent, so nothing can run twice) goes to the next replica; any other
// failure — an error status, a reset connection, a wrong answer — counts as failed (target 0).
// Reports runs/s before, during and after the restarts.
//
//   npm run bench:rolling -- [--replicas 3] [--clients 6] [--window 10] [--drain 2]
import { parseArgs } from 'node:util';
import { startServer, type RunningServer } from '../../test/support/server.js';
import { startRestartablePostgres } from '../../test/support/restartable-postgres.js';

const { values } = parseArgs({
  options: {
    replicas: { type: 'string', default: '3' },
    clients: { type: 'string', default: '6' },
    window: { type: 'string', default: '10' },
    drain: { type: 'string', default: '2' },
  },
});
const options = {
  replicas: Number(values.replicas),
  clients: Number(values.clients),
  windowMs: Number(values.window) * 1000,
  drain: values.drain,
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const db = await startRestartablePostgres({ durable: true });
const env = { GRAPHDOCK_SHUTDOWN_DRAIN_SECS: options.drain, GRAPHDOCK_RESPONSE_LOG: undefined };
const replicas: RunningServer[] = [];
// What each replica is doing, for the failure lines: up, draining (SIGTERM sent) or starting.
const phase: string[] = [];
const done: number[] = [];
const failures: { at: number; why: string }[] = [];
let refused = 0;
let stopping = false;

/** Whether a fetch failed before the request reached a server (safe to send elsewhere). */
function refusedAtConnect(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } }).cause;
  return cause?.code === 'ECONNREFUSED';
}

async function client(id: number): Promise<void> {
  for (let k = 0; !stopping; k++) {
    const content = `c${id} r${k}`;
    let target = (id + k) % replicas.length;
    for (let tries = 0; ; tries++) {
      try {
        const res = await fetch(`${replicas[target]!.url}/runs/wait`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            assistant_id: 'echo',
            input: { messages: [{ role: 'user', content }] },
          }),
          signal: AbortSignal.timeout(30_000),
        });
        const body = (await res.json()) as { messages?: { content: string }[] };
        if (res.ok && body.messages?.at(-1)?.content === `echo: ${content}`)
          done.push(performance.now());
        else
          failures.push({
            at: performance.now(),
            why: `replica ${target} ${phase[target]}: ${res.status} ${JSON.stringify(body)}`,
          });
        break;
      } catch (err) {
        if (refusedAtConnect(err) && tries < replicas.length * 20) {
          refused++;
          target = (target + 1) % replicas.length;
          // Every replica refused once in a row: all are restarting; wait a little.
          if ((tries + 1) % replicas.length === 0) await sleep(50);
          continue;
        }
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        failures.push({
          at: performance.now(),
          why: `replica ${target} ${phase[target]}: ${String(err)} ${cause?.code ?? cause?.message ?? ''}`,
        });
        break;
      }
    }
  }
}

const rate = (from: number, to: number) =>
  done.filter((t) => t >= from && t < to).length / ((to - from) / 1000);
const failed = (from: number, to: number) =>
  failures.filter((f) => f.at >= from && f.at < to).length;

try {
  for (let i = 0; i < options.replicas; i++)
    replicas.push(await startServer({ databaseUrl: db.url, env, okTimeoutMs: 180_000 }));
  phase.push(...replicas.map(() => 'up'));
  const clients = Array.from({ length: options.clients }, (_, i) => client(i));
  await sleep(2000); // warm-up
  const before = performance.now();
  await sleep(options.windowMs);
  const rollStart = performance.now();
  const restarts: { exitMs: number; startMs: number; code: number | null }[] = [];
  for (let i = 0; i < replicas.length; i++) {
    const old = replicas[i]!;
    const t0 = performance.now();
    phase[i] = 'draining';
    const code = await old.stop('SIGTERM');
    const t1 = performance.now();
    phase[i] = 'starting';
    // A loaded machine (the shared CI box) may take over a minute to start one.
    replicas[i] = await startServer({
      databaseUrl: db.url,
      env,
      port: old.port,
      okTimeoutMs: 180_000,
    });
    phase[i] = 'up';
    restarts.push({ exitMs: t1 - t0, startMs: performance.now() - t1, code });
  }
  const rollEnd = performance.now();
  await sleep(options.windowMs);
  const after = performance.now();
  stopping = true;
  await Promise.all(clients);

  for (const [i, r] of restarts.entries())
    console.log(
      `replica ${i}: exit ${r.code} after SIGTERM in ${Math.round(r.exitMs)} ms, ` +
        `back on its port in ${Math.round(r.startMs)} ms`,
    );
  for (const f of failures.slice(0, 5)) console.log(`failed: ${f.why.slice(0, 200)}`);
  const fmt = (n: number) => n.toFixed(1);
  console.log('\n| Phase | Seconds | Runs/s | Failed requests |\n| --- | ---: | ---: | ---: |');
  console.log(
    `| before | ${fmt((rollStart - before) / 1000)} | ${fmt(rate(before, rollStart))} | ${failed(before, rollStart)} |`,
  );
  console.log(
    `| during the rolling restart | ${fmt((rollEnd - rollStart) / 1000)} | ${fmt(rate(rollStart, rollEnd))} | ${failed(rollStart, rollEnd)} |`,
  );
  console.log(
    `| after | ${fmt((after - rollEnd) / 1000)} | ${fmt(rate(rollEnd, after))} | ${failed(rollEnd, after)} |`,
  );
  console.log(
    `\nfailed requests in all: ${failures.length}; requests refused at connect and sent to ` +
      `the next replica: ${refused}; runs in all: ${done.length}`,
  );
} finally {
  stopping = true;
  await Promise.all(replicas.map((r) => r.stop('SIGTERM')));
  await db.destroy();
}
