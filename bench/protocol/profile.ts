// Where Graphdock's CPU and PostgreSQL work go per protocol run: the bench's load (one run of the
// `emit` graph per task, on a new thread) against Graphdock alone, started with `--cpu-prof`, and
// PostgreSQL's commits, inserted rows and index scans per run from its statistics views.
//
//   npx tsx bench/protocol/profile.ts [--transport sse|websocket] [--clients 16]
//                                      [--seconds 10] [--events 200] [--no-prof]
// The profile (`*.cpuprofile`) is written to bench/results/ at the end; open it in Chrome's
// DevTools or summarise it with `node scripts/cpuprofile-top.mjs <file>`.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Pool } from 'undici';
import WebSocket from 'ws';
import { REPO_ROOT, startGraphdock } from '../http/servers.js';
import { rerunUnderImageNode } from '../../scripts/image-node.js';

rerunUnderImageNode();

const { values } = parseArgs({
  options: {
    transport: { type: 'string', default: 'sse' },
    clients: { type: 'string', default: '16' },
    seconds: { type: 'string', default: '10' },
    events: { type: 'string', default: '200' },
    'no-prof': { type: 'boolean', default: false },
  },
});
const EVENTS = Number(values.events);
const CHANNELS = ['lifecycle', 'custom'];
const runStart = (id: number) =>
  JSON.stringify({
    id,
    method: 'run.start',
    params: { assistant_id: 'emit', input: { events: EVENTS } },
  });
const ended = (data: string) => data.includes('"lifecycle"') && data.includes('"completed"');

/**
 * Per SSE run, ms from sending `run.start`: its reply, the stream's headers, the first frame, the
 * root's end.
 */
const phases: [number, number, number, number][] = [];
let chunks = 0;
const p50 = (i: number) => {
  const sorted = phases.map((p) => p[i]!).sort((a, b) => a - b);
  return sorted[sorted.length >> 1]?.toFixed(1) ?? '-';
};

async function sseRun(pool: Pool): Promise<number> {
  const thread = randomUUID();
  const sent = performance.now();
  const phase: [number, number, number, number] = [0, 0, 0, 0];
  const headers = { 'content-type': 'application/json' };
  const started = await pool.request({
    method: 'POST',
    path: `/threads/${thread}/commands`,
    headers,
    body: runStart(1),
  });
  await started.body.text();
  phase[0] = performance.now() - sent;
  const res = await pool.request({
    method: 'POST',
    path: `/threads/${thread}/stream/events`,
    headers: { ...headers, accept: 'text/event-stream' },
    body: JSON.stringify({ channels: CHANNELS }),
  });
  phase[1] = performance.now() - sent;
  res.body.setEncoding('utf8');
  let custom = 0;
  let buffer = '';
  try {
    for await (const chunk of res.body as AsyncIterable<string>) {
      buffer += chunk;
      chunks++;
      phase[2] ||= performance.now() - sent;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (frame.includes('event: custom')) custom++;
        else if (ended(frame)) {
          phase[3] = performance.now() - sent;
          phases.push(phase);
          return custom;
        }
      }
    }
    return custom;
  } finally {
    res.body.destroy();
  }
}

function wsRun(wsBase: string): Promise<number> {
  const socket = new WebSocket(`${wsBase}/threads/${randomUUID()}/stream/events`);
  let custom = 0;
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.once('open', () => {
      socket.send(
        JSON.stringify({ id: 1, method: 'subscription.subscribe', params: { channels: CHANNELS } }),
      );
      socket.send(runStart(2));
    });
    socket.on('message', (raw: Buffer) => {
      const json = raw.toString();
      if (json.includes('"method":"custom"')) custom++;
      else if (ended(json)) {
        socket.close();
        resolve(custom);
      }
    });
  });
}

/** CPU ms (user + system) used so far by the processes whose command line matches. */
function cpuMs(match: (pid: number, cmd: string) => boolean): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!pid) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!match(pid, cmd)) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone meanwhile.
    }
  }
  return ticks * 10;
}

async function stats(client: pg.Client) {
  const db = await client.query<{ xact_commit: string }>(
    'SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()',
  );
  const tables = await client.query<{ relname: string; ins: string; scans: string }>(
    `SELECT relname, n_tup_ins AS ins, coalesce(idx_scan, 0) + coalesce(seq_scan, 0) AS scans
       FROM pg_stat_user_tables`,
  );
  return {
    commits: Number(db.rows[0]!.xact_commit),
    tables: new Map(
      tables.rows.map((r) => [r.relname, { ins: Number(r.ins), scans: Number(r.scans) }]),
    ),
  };
}

async function main() {
  const dir = join(REPO_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const counter = join(REPO_ROOT, 'bench', 'protocol', 'count-queries.mjs');
  const countsFile = join(dir, `protocol-queries-${process.pid}.json`);
  process.env.GRAPHDOCK_QUERY_COUNTS = countsFile;
  const flags = ['--import', pathToFileURL(counter).href];
  if (!values['no-prof']) flags.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
  const statements = async () => {
    process.kill(server.pid, 'SIGUSR2');
    await new Promise((r) => setTimeout(r, 300));
    return JSON.parse(readFileSync(countsFile, 'utf8')) as [string, number][];
  };
  const server = await startGraphdock({
    config: join(REPO_ROOT, 'bench', 'protocol', 'langgraph.json'),
    nodeFlags: flags,
  });
  const db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
  const pool = new Pool(server.url, { connections: 64 });
  const wsBase = server.url.replace(/^http/, 'ws');
  const one = () => (values.transport === 'sse' ? sseRun(pool) : wsRun(wsBase));
  try {
    // Warm up (graph loaded, JIT), then measure.
    for (let i = 0; i < 20; i++) await one();
    await new Promise((r) => setTimeout(r, 1500));
    // The bench's PostgreSQL: its postmaster (by port) and the processes it forked. The watchdog
    // shell it runs under has the same arguments, so the binary's name tells them apart.
    const port = new URL(server.databaseUrl!).port;
    const postmaster = (_: number, cmd: string) =>
      cmd.includes(`-p\0${port}\0`) && /(^|\/)postgres$/.test(cmd.split('\0')[0]!);
    let master = 0;
    cpuMs((pid, cmd) => (postmaster(pid, cmd) ? ((master = pid), true) : false));
    const ppid = (pid: number) =>
      Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
    const serverCpu = () => cpuMs((pid) => pid === server.pid);
    const pgCpu = () => cpuMs((pid) => pid === master || ppid(pid) === master);
    await statements();
    phases.length = 0;
    chunks = 0;
    const before = await stats(db);
    const nodeBefore = serverCpu();
    const pgBefore = pgCpu();
    const cpuBefore = process.cpuUsage();
    const deadline = Date.now() + Number(values.seconds) * 1000;
    let runs = 0;
    let short = 0;
    await Promise.all(
      Array.from({ length: Number(values.clients) }, async () => {
        while (Date.now() < deadline) {
          const got = await one();
          runs++;
          if (got !== EVENTS) short++;
        }
      }),
    );
    const cpu = process.cpuUsage(cpuBefore);
    const nodeMs = serverCpu() - nodeBefore;
    const pgMs = pgCpu() - pgBefore;
    await new Promise((r) => setTimeout(r, 1500));
    const after = await stats(db);
    const sent = await statements();
    console.log(
      `${values.transport} x${values.clients}: ${runs} runs in ${values.seconds} s = ` +
        `${(runs / Number(values.seconds)).toFixed(1)} runs/s (${short} short); ` +
        `client CPU ${((cpu.user + cpu.system) / 1000 / runs).toFixed(2)} ms/run`,
    );
    console.log(
      `server CPU ${(nodeMs / runs).toFixed(2)} ms/run, PostgreSQL CPU ${(pgMs / runs).toFixed(2)} ms/run`,
    );
    if (phases.length)
      console.log(
        `SSE p50 ms from run.start: its reply ${p50(0)}, stream headers ${p50(1)}, ` +
          `first frame ${p50(2)}, end ${p50(3)}; ${(chunks / phases.length).toFixed(1)} chunks read per run`,
      );
    console.log(`commits/run ${((after.commits - before.commits) / runs).toFixed(2)}`);
    for (const [name, t] of after.tables) {
      const b = before.tables.get(name) ?? { ins: 0, scans: 0 };
      const ins = (t.ins - b.ins) / runs;
      const scans = (t.scans - b.scans) / runs;
      if (ins || scans)
        console.log(
          `  ${name.padEnd(28)} inserted/run ${ins.toFixed(2)}  scans/run ${scans.toFixed(2)}`,
        );
    }
    const total = sent.reduce((n, [, c]) => n + c, 0);
    console.log(`statements/run ${(total / runs).toFixed(2)}`);
    for (const [text, count] of sent.slice(0, 25))
      console.log(`  ${(count / runs).toFixed(2).padStart(6)}  ${text}`);
  } finally {
    await db.end();
    await pool.destroy();
    const had = new Set(readdirSync(dir));
    await server.stop();
    for (const f of readdirSync(dir))
      if (!had.has(f) && f.endsWith('.cpuprofile')) console.log(`profile: ${join(dir, f)}`);
  }
}

void main();
