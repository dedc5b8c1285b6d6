// CPU per run by run shape, on one Graphdock server (side harness of bench/footprint, issue 25):
// windows of `--runs` runs each, shapes taken in turn (A, B, C, A, B, C, ...), and for each
// window the CPU milliseconds per run of the server's process and of PostgreSQL (postmaster and
// backends) from /proc. Same server as bench/footprint (compiled build on the image's Node.js, the
// echo graph alone, durable PostgreSQL), so the two answer for the same process.
//
// Shapes (`--shapes`, comma-separated):
// - wait-new:    POST /threads/{id}/runs/wait, a POST /threads every --turns runs (bench/footprint)
// - wait-create: POST /threads/{id}/runs/wait with if_not_exists "create" (bench/runs)
// - stream:      POST /threads/{id}/runs/stream with if_not_exists "create" (bench/runs' side
//                harness, where the 4.8 ms come from)
// - wait-1:      wait-create on threads of one turn (no history carried)
//
//   npx tsx bench/footprint/shapes.ts [--runs 2000] [--rounds 3] [--clients 16] [--turns 10]
//                                     [--shapes wait-new,wait-create,stream] [--warmup 3000]
//                                     [--graphdock "node --cpu-prof dist/bin/graphdock.mjs"]
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { freePort, startPostgresServer } from '../../common/db/index.js';
import { HttpClient } from '../http/load.js';
import { imageNode, imageNodeFlags } from '../../scripts/image-node.js';
import { cpuMs } from './proc.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
const EXAMPLES_CONFIG = join(REPO_ROOT, 'examples', 'langgraph.json');

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '3000' },
    clients: { type: 'string', default: '16' },
    turns: { type: 'string', default: '10' },
    shapes: { type: 'string', default: 'wait-new,wait-create,stream' },
    graphdock: { type: 'string', default: '' },
    /** JSON {name: SQL}: each shape's window is measured once per variant, its SQL run first. */
    variants: { type: 'string', default: '' },
    /** Seconds of idleness measured after the warm-up: CPU a second costs with no runs. */
    idle: { type: 'string', default: '0' },
  },
});
const options = {
  runs: Number(values.runs),
  rounds: Number(values.rounds),
  warmup: Number(values.warmup),
  clients: Number(values.clients),
  turns: Number(values.turns),
  shapes: values.shapes.split(','),
  variants: Object.entries(
    values.variants ? (JSON.parse(values.variants) as Record<string, string>) : { '': '' },
  ),
  idleMs: Number(values.idle) * 1000,
  graphdock: values.graphdock
    ? values.graphdock.split(' ').filter(Boolean)
    : [imageNode(), ...imageNodeFlags(), 'dist/bin/graphdock.mjs'],
};

const statefulInput = { messages: [{ role: 'user', content: 'ping' }] };

interface Shape {
  turns: number;
  /** One run on `thread`; `fresh` when it is the thread's first. */
  run(client: HttpClient, thread: string, fresh: boolean): Promise<string>;
}

async function check(res: { status: number; body: string }, what: string): Promise<void> {
  if (res.status !== 200 || !res.body.includes('echo: ping'))
    throw new Error(`${what} -> ${res.status}: ${res.body.slice(0, 300)}`);
}

const wait = (ifNotExists: boolean) => async (client: HttpClient, thread: string) => {
  const body = { assistant_id: 'echo', input: statefulInput };
  const res = await client.request(
    'POST',
    `/threads/${thread}/runs/wait`,
    JSON.stringify(ifNotExists ? { ...body, if_not_exists: 'create' } : body),
  );
  await check(res, 'wait');
  return thread;
};

const SHAPES: Record<string, Shape> = {
  'wait-new': {
    turns: options.turns,
    async run(client, thread, fresh) {
      if (fresh)
        thread = (await client.json<{ thread_id: string }>('POST', '/threads', {})).thread_id;
      return wait(false)(client, thread);
    },
  },
  'wait-create': { turns: options.turns, run: wait(true) },
  'wait-1': { turns: 1, run: wait(true) },
  stream: {
    turns: options.turns,
    async run(client, thread) {
      const res = await client.request(
        'POST',
        `/threads/${thread}/runs/stream`,
        JSON.stringify({ assistant_id: 'echo', input: statefulInput, if_not_exists: 'create' }),
      );
      await check(res, 'stream');
      return thread;
    },
  },
};

async function load(url: string, shape: Shape, runs: number): Promise<number> {
  const client = new HttpClient(url, options.clients);
  let next = 0;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: options.clients }, async () => {
        let thread = '';
        let turn = 0;
        while (next < runs) {
          next++;
          const fresh = turn++ % shape.turns === 0;
          if (fresh) thread = randomUUID();
          thread = await shape.run(client, thread, fresh);
        }
      }),
    );
  } finally {
    await client.close();
  }
  return performance.now() - started;
}

/**
 * Rows inserted, updated and deleted so far in the database (PostgreSQL's statistics, flushed
 * within a second or so) and the WAL position in bytes.
 */
async function writes(url: string): Promise<{ rows: number; wal: number }> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await new Promise((r) => setTimeout(r, 1500));
    const { rows } = await admin.query<{ rows: string; wal: string }>(
      `SELECT (SELECT tup_inserted + tup_updated + tup_deleted FROM pg_stat_database
                WHERE datname = current_database()) AS rows,
              pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS wal`,
    );
    return { rows: Number(rows[0]!.rows), wal: Number(rows[0]!.wal) };
  } finally {
    await admin.end();
  }
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'graphdock-shapes-'));
  const postgres = await startPostgresServer({ dataDir: join(dir, 'pg'), ephemeral: false });
  const postmaster = Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const config = JSON.parse(readFileSync(EXAMPLES_CONFIG, 'utf8')) as {
    graphs: Record<string, string>;
  };
  writeFileSync(
    join(dir, 'langgraph.json'),
    JSON.stringify({ graphs: { echo: resolve(dirname(EXAMPLES_CONFIG), config.graphs.echo!) } }),
  );
  const [command, ...pre] = options.graphdock;
  const port = await freePort();
  const env = { ...process.env, DATABASE_URL: postgres.url, LOG_LEVEL: 'warn' };
  execFileSync(command!, [...pre, 'migrate'], { env, cwd: REPO_ROOT, stdio: 'ignore' });
  const args = [...pre, 'runtime', '--config', join(dir, 'langgraph.json'), '--port', String(port)];
  const child = spawn(command!, [...args, '--host', '127.0.0.1'], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      if (i > 1500) throw new Error('server did not start');
      const ok = await fetch(`${url}/ok`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    console.log(`warm-up: ${options.warmup} runs of each shape (load ${loadavg()})`);
    for (const name of options.shapes) await load(url, SHAPES[name]!, options.warmup);
    if (options.idleMs) {
      const [s0, p0] = [cpuMs(child.pid!), cpuMs(postmaster)];
      await new Promise((r) => setTimeout(r, options.idleMs));
      const perSecond = (ms: number) => ((ms / options.idleMs) * 1000).toFixed(1);
      console.log(
        `idle ${options.idleMs / 1000} s: server ${perSecond(cpuMs(child.pid!) - s0)} CPU ms/s, ` +
          `PostgreSQL ${perSecond(cpuMs(postmaster) - p0)} CPU ms/s (load ${loadavg()})`,
      );
    }
    console.log(
      '| round | shape | runs/s | server ms/run | PostgreSQL ms/run | total | rows written/run | WAL bytes/run | load |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (let round = 1; round <= options.rounds; round++) {
      for (const [variant, sql] of options.variants)
        for (const shapeName of options.shapes) {
          const shape = SHAPES[shapeName];
          if (!shape) throw new Error(`unknown shape ${shapeName}`);
          const name = variant ? `${shapeName} ${variant}` : shapeName;
          if (sql) {
            const admin = new pg.Client({ connectionString: postgres.url });
            await admin.connect();
            await admin.query(sql);
            await admin.end();
          }
          const w0 = await writes(postgres.url);
          const [s0, p0] = [cpuMs(child.pid!), cpuMs(postmaster)];
          const ms = await load(url, shape, options.runs);
          const s = (cpuMs(child.pid!) - s0) / options.runs;
          const p = (cpuMs(postmaster) - p0) / options.runs;
          const w1 = await writes(postgres.url);
          const per = (a: number, b: number) => ((b - a) / options.runs).toFixed(1);
          console.log(
            `| ${round} | ${name} | ${((options.runs / ms) * 1000).toFixed(1)} | ${s.toFixed(2)} | ${p.toFixed(2)} | ${(s + p).toFixed(2)} | ${per(w0.rows, w1.rows)} | ${per(w0.wal, w1.wal)} | ${loadavg()} |`,
          );
        }
    }
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
