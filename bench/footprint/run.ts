// Footprint of one agent server, in one run, for Graphdock and its peers on the same echo graph:
// time from process start to the first successful run, resident memory idle and after the runs,
// stateful runs/s at 16 clients, and CPU milliseconds per run, server and PostgreSQL apart.
//
// Parties (each started, measured and stopped in turn; one PostgreSQL for those that use one,
// started before any of them, so no party's time includes a database start):
// - graphdock: `graphdock runtime` as the image runs it (the compiled build of `npm run build` on
//   the image's Node.js and ENTRYPOINT flags; --graphdock gives another command, e.g.
//   "node bin/graphdock.mjs" for the sources), on PostgreSQL;
// - langgraph-js: the official in-memory dev server, @langchain/langgraph-api from bench/baseline;
// - langgraph-py: the official Python dev server, `langgraph dev` from PyPI `langgraph-cli[inmem]`;
// - aegra: PyPI `aegra-api` (uvicorn) on PostgreSQL, its migrations run at its start.
// Python environments are built once under .cache/ (see bench/footprint/requirements-*.txt).
//
// CPU is read from /proc/<pid>/stat (utime + stime, and cutime + cstime for children that ended):
// the server's process tree, and PostgreSQL's postmaster with all its backends. For the parties on
// PostgreSQL, the WAL written per measured run and its full-page images come from pg_stat_wal
// (cluster-wide; no other party runs meanwhile). A run here is a
// stateful run: POST /threads/{id}/runs/wait on the echo graph, a new thread (POST /threads)
// every --turns runs, so every party does the same work. That is issue 25's "stateful run"
// (the 4.8 ms there came from bench/runs' stream runs, whose CPU per run on the same server and
// load is within this one's noise: see bench/footprint/shapes.ts and docs/performance.md). CPU
// time per run grows with the machine's load (caches and cores shared), so every row carries
// the load average before and after its measured runs.
//
//   npx tsx bench/footprint/run.ts [--runs 1000] [--warmup 200] [--clients 16] [--turns 10]
//                                  [--only graphdock,aegra] [--graphdock "node bin/graphdock.mjs"]
//                                  [--workers 1]
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { freePort, startPostgresServer } from '../../common/db/index.js';
import { ensurePythonVenv } from '../../test/support/python.js';
import { HttpClient } from '../http/load.js';
import { writeJsonReport } from '../http/report.js';
import { ensureBaselineInstalled } from '../http/servers.js';
import { imageNode, imageNodeFlags } from '../../scripts/image-node.js';
import { cpuMs, rssMiB } from './proc.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
const HERE = import.meta.dirname;
const EXAMPLES_CONFIG = join(REPO_ROOT, 'examples', 'langgraph.json');
const BASELINE_DIR = join(REPO_ROOT, 'bench', 'baseline');

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '200' },
    clients: { type: 'string', default: '16' },
    turns: { type: 'string', default: '10' },
    only: { type: 'string', default: 'graphdock,langgraph-js,langgraph-py,aegra' },
    graphdock: { type: 'string', default: '' },
    workers: { type: 'string', default: '1' },
    idle: { type: 'string', default: '3' },
  },
});
const options = {
  runs: Number(values.runs),
  warmup: Number(values.warmup),
  clients: Number(values.clients),
  turns: Number(values.turns),
  only: values.only.split(','),
  graphdock: values.graphdock
    ? values.graphdock.split(' ').filter(Boolean)
    : [imageNode(), ...imageNodeFlags(), 'dist/bin/graphdock.mjs'],
  workers: Number(values.workers),
  idleMs: Number(values.idle) * 1000,
};

// ---- parties ---------------------------------------------------------------------------------

interface Started {
  child: ChildProcess;
  url: string;
  /** Wall-clock ms (performance.now()) just before the spawn. */
  spawnedAt: number;
  description: string;
  /** PostgreSQL's postmaster pid when the party uses the shared database. */
  postgresPid?: number;
  cleanup?: () => void;
}

interface Party {
  name: string;
  start(): Promise<Started>;
}

interface Database {
  url(name: string): Promise<string>;
  pid: number;
  /** Cluster-wide WAL counters (pg_stat_wal): records, full-page images, bytes. */
  wal(): Promise<WalCounters>;
}

interface WalCounters {
  records: number;
  fpi: number;
  bytes: number;
}

function spawnServer(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  const spawnedAt = performance.now();
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const keep = (c: Buffer) => (log = (log + c.toString()).slice(-20_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  (child as ChildProcess & { log: () => string }).log = () => log;
  return { child, spawnedAt };
}

const logOf = (child: ChildProcess) => (child as ChildProcess & { log?: () => string }).log?.();

function graphdock(db: Database): Party {
  return {
    name: 'graphdock',
    async start() {
      const port = await freePort();
      const url = await db.url('graphdock');
      const [command, ...pre] = options.graphdock;
      // The echo graph alone, as every peer serves it (the examples' other graphs would add their
      // modules to the start and the memory).
      const cwd = mkdtempSync(join(tmpdir(), 'graphdock-footprint-'));
      const config = JSON.parse(readFileSync(EXAMPLES_CONFIG, 'utf8')) as {
        graphs: Record<string, string>;
      };
      const echo = resolve(dirname(EXAMPLES_CONFIG), config.graphs.echo!);
      writeFileSync(join(cwd, 'langgraph.json'), JSON.stringify({ graphs: { echo } }));
      const args = [...pre, 'runtime', '--config', join(cwd, 'langgraph.json')];
      args.push('--port', String(port), '--host', '127.0.0.1');
      const env = {
        ...process.env,
        DATABASE_URL: url,
        LOG_LEVEL: 'warn',
        GRAPHDOCK_WORKERS: String(options.workers),
      };
      // As a pod finds it: the database migrated (by `graphdock migrate`, or an earlier pod), and
      // the image's compile cache filled by `graphdock warm-up` (a build before it has none).
      execFileSync(command!, [...pre, 'migrate'], { env, cwd: REPO_ROOT, stdio: 'ignore' });
      spawnSync(command!, [...pre, 'warm-up', '--config', join(cwd, 'langgraph.json')], {
        env,
        cwd: REPO_ROOT,
        stdio: 'ignore',
      });
      const { child, spawnedAt } = spawnServer(command!, args, env, REPO_ROOT);
      return {
        child,
        spawnedAt,
        url: `http://127.0.0.1:${port}`,
        postgresPid: db.pid,
        description: `${options.graphdock.join(' ')} runtime, GRAPHDOCK_WORKERS=${options.workers}, N_JOBS_PER_WORKER=10, durable PostgreSQL (migrated before)`,
        cleanup: () => rmSync(cwd, { recursive: true, force: true }),
      };
    },
  };
}

function langgraphJs(): Party {
  return {
    name: 'langgraph-js',
    async start() {
      ensureBaselineInstalled(BASELINE_DIR);
      const cwd = mkdtempSync(join(tmpdir(), 'graphdock-footprint-js-'));
      const port = await freePort();
      const config = JSON.parse(readFileSync(EXAMPLES_CONFIG, 'utf8')) as {
        graphs: Record<string, string | { path: string }>;
      };
      const echo = config.graphs.echo as string;
      const [file = '', symbol] = echo.split(':');
      const graphs = {
        echo: `${relative(cwd, resolve(dirname(EXAMPLES_CONFIG), file))}:${symbol}`,
      };
      const modules = join(BASELINE_DIR, 'node_modules');
      const serverOptions = { port, nWorkers: 10, host: '127.0.0.1', cwd, graphs };
      const args = [
        '--import',
        pathToFileURL(join(modules, 'tsx', 'dist', 'loader.mjs')).href,
        '--import',
        pathToFileURL(join(modules, '@langchain', 'langgraph-api', 'dist', 'preload.mjs')).href,
        join(BASELINE_DIR, 'start.ts'),
        JSON.stringify(serverOptions),
      ];
      const env = { ...process.env, LOG_LEVEL: 'warn', NODE_ENV: 'development' };
      const { child, spawnedAt } = spawnServer(process.execPath, args, env, cwd);
      const version = (
        JSON.parse(
          readFileSync(join(modules, '@langchain', 'langgraph-api', 'package.json'), 'utf8'),
        ) as { version: string }
      ).version;
      return {
        child,
        spawnedAt,
        url: `http://127.0.0.1:${port}`,
        description: `@langchain/langgraph-api ${version} in-memory (tsx, as \`langgraphjs dev\` without watch), 10 queue workers`,
        cleanup: () => rmSync(cwd, { recursive: true, force: true }),
      };
    },
  };
}

const PY_VENV = {
  requirements: join(HERE, 'requirements-python.txt'),
  dir: join(REPO_ROOT, '.cache', 'venv-langgraph-cli'),
  imports: ['langgraph_cli', 'langgraph_api'],
};
const AEGRA_VENV = {
  requirements: join(HERE, 'requirements-aegra.txt'),
  dir: join(REPO_ROOT, '.cache', 'venv-aegra'),
  imports: ['aegra_api', 'uvicorn'],
};

function langgraphPy(): Party {
  return {
    name: 'langgraph-py',
    async start() {
      const python = await ensurePythonVenv(PY_VENV);
      const port = await freePort();
      const cwd = mkdtempSync(join(tmpdir(), 'graphdock-footprint-py-'));
      const env = {
        ...process.env,
        LOG_LEVEL: 'WARNING',
        LANGGRAPH_CLI_NO_ANALYTICS: '1',
        LANGSMITH_TRACING: 'false',
      };
      const args = ['dev', '--no-browser', '--no-reload'];
      // Graph paths resolve against the working directory, which also takes its state files.
      writeFileSync(
        join(cwd, 'langgraph.json'),
        JSON.stringify({ dependencies: ['.'], graphs: { echo: `${join(HERE, 'echo.py')}:graph` } }),
      );
      args.push('--config', join(cwd, 'langgraph.json'), '--host', '127.0.0.1');
      args.push('--port', String(port), '--n-jobs-per-worker', '10');
      const cli = join(dirname(python), 'langgraph');
      const { child, spawnedAt } = spawnServer(cli, args, env, cwd);
      return {
        child,
        spawnedAt,
        url: `http://127.0.0.1:${port}`,
        description: `langgraph-cli[inmem] ${pipVersion(python, 'langgraph-api')} (langgraph-api) \`langgraph dev --no-reload\`, 10 jobs per worker`,
        cleanup: () => rmSync(cwd, { recursive: true, force: true }),
      };
    },
  };
}

function aegra(db: Database): Party {
  return {
    name: 'aegra',
    async start() {
      const python = await ensurePythonVenv(AEGRA_VENV);
      const port = await freePort();
      const url = await db.url('aegra');
      const cwd = mkdtempSync(join(tmpdir(), 'graphdock-footprint-aegra-'));
      writeFileSync(
        join(cwd, 'aegra.json'),
        JSON.stringify({ graphs: { echo: `${join(HERE, 'echo.py')}:graph` } }),
      );
      const env = {
        ...process.env,
        DATABASE_URL: url,
        AEGRA_CONFIG: join(cwd, 'aegra.json'),
        LOG_LEVEL: 'WARNING',
        OTEL_TARGETS: '',
      };
      const args = ['-m', 'uvicorn', 'aegra_api.main:app', '--host', '127.0.0.1'];
      args.push('--port', String(port), '--log-level', 'warning');
      const { child, spawnedAt } = spawnServer(python, args, env, cwd);
      return {
        child,
        spawnedAt,
        url: `http://127.0.0.1:${port}`,
        postgresPid: db.pid,
        description: `aegra-api ${pipVersion(python, 'aegra-api')} under uvicorn (one process), on the same PostgreSQL (fresh database, its migrations at start)`,
        cleanup: () => rmSync(cwd, { recursive: true, force: true }),
      };
    },
  };
}

function pipVersion(python: string, name: string): string {
  const dist = readdirSync(join(dirname(python), '..', 'lib'))
    .map((py) => join(dirname(python), '..', 'lib', py, 'site-packages'))
    .flatMap((dir) => readdirSync(dir).map((d) => ({ dir, d })))
    .find(({ d }) => d.toLowerCase().startsWith(`${name.replace(/-/g, '_')}-`));
  return dist ? dist.d.replace(/\.dist-info$/, '').split('-')[1]! : '?';
}

// ---- measurement -----------------------------------------------------------------------------

const input = { messages: [{ role: 'user', content: 'ping' }] };

async function oneRun(client: HttpClient, thread: string): Promise<void> {
  const res = await client.request(
    'POST',
    `/threads/${thread}/runs/wait`,
    JSON.stringify({ assistant_id: 'echo', input }),
  );
  if (res.status !== 200 || !res.body.includes('echo: ping'))
    throw new Error(`run -> ${res.status}: ${res.body.slice(0, 300)}`);
}

async function newThread(client: HttpClient): Promise<string> {
  return (await client.json<{ thread_id: string }>('POST', '/threads', {})).thread_id;
}

/** Retries a thread and a run until one succeeds; ms from the spawn. */
async function firstRun(started: Started): Promise<number> {
  const client = new HttpClient(started.url, 1);
  const deadline = Date.now() + 180_000;
  try {
    while (Date.now() < deadline) {
      if (started.child.exitCode !== null)
        throw new Error(`server exited (${started.child.exitCode}):\n${logOf(started.child)}`);
      try {
        await oneRun(client, await newThread(client));
        return performance.now() - started.spawnedAt;
      } catch {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  } finally {
    await client.close();
  }
  throw new Error(`no successful run within 180 s:\n${logOf(started.child)}`);
}

/** `runs` stateful runs from `clients` clients; a new thread every `turns` runs of a client. */
async function load(url: string, runs: number): Promise<number> {
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
          if (turn++ % options.turns === 0) thread = await newThread(client);
          await oneRun(client, thread);
        }
      }),
    );
  } finally {
    await client.close();
  }
  return performance.now() - started;
}

interface Row {
  party: string;
  description: string;
  firstRunMs: number;
  /** CPU ms of the server's process tree from its spawn to the first successful run. */
  firstRunCpuMs: number;
  idleRssMiB: number;
  rssAfterMiB: number;
  runsPerSecond: number;
  serverCpuMsPerRun: number;
  postgresCpuMsPerRun: number | null;
  /** WAL written per measured run, and the full-page images among it (parties on PostgreSQL). */
  walBytesPerRun?: number;
  walFpiPerRun?: number;
  /** 1-minute load average before and after the measured runs. */
  load?: [number, number];
  error?: string;
}

async function measure(party: Party, db: Database): Promise<Row> {
  const started = await party.start();
  const pid = started.child.pid!;
  try {
    const firstRunMs = await firstRun(started);
    const firstRunCpuMs = cpuMs(pid);
    await new Promise((r) => setTimeout(r, options.idleMs));
    const idleRssMiB = rssMiB(pid);
    await load(started.url, options.warmup);
    const load0 = loadavg();
    const cpu0 = cpuMs(pid);
    const pg0 = started.postgresPid ? cpuMs(started.postgresPid) : 0;
    const wal0 = started.postgresPid ? await db.wal() : null;
    const ms = await load(started.url, options.runs);
    const serverCpu = cpuMs(pid) - cpu0;
    const pgCpu = started.postgresPid ? cpuMs(started.postgresPid) - pg0 : null;
    const wal1 = wal0 ? await db.wal() : null;
    return {
      party: party.name,
      description: started.description,
      firstRunMs,
      firstRunCpuMs,
      idleRssMiB,
      rssAfterMiB: rssMiB(pid),
      runsPerSecond: (options.runs / ms) * 1000,
      serverCpuMsPerRun: serverCpu / options.runs,
      postgresCpuMsPerRun: pgCpu === null ? null : pgCpu / options.runs,
      ...(wal0 && wal1
        ? {
            walBytesPerRun: (wal1.bytes - wal0.bytes) / options.runs,
            walFpiPerRun: (wal1.fpi - wal0.fpi) / options.runs,
          }
        : {}),
      load: [load0, loadavg()],
    };
  } finally {
    await stop(started.child);
    started.cleanup?.();
  }
}

const loadavg = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'graphdock-footprint-pg-'));
  // Durable: fsync and synchronous_commit at their defaults (on).
  const postgres = await startPostgresServer({ dataDir: join(dir, 'pg'), ephemeral: false });
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  const postmaster = Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const db: Database = {
    pid: postmaster,
    async url(name) {
      const database = `${name}_${randomUUID().slice(0, 8)}`;
      await admin.query(`CREATE DATABASE ${database}`);
      const u = new URL(postgres.url);
      u.pathname = `/${database}`;
      return u.toString();
    },
    async wal() {
      const { rows } = await admin.query<{ records: string; fpi: string; bytes: string }>(
        'SELECT wal_records AS records, wal_fpi AS fpi, wal_bytes AS bytes FROM pg_stat_wal',
      );
      const row = rows[0]!;
      return { records: Number(row.records), fpi: Number(row.fpi), bytes: Number(row.bytes) };
    },
  };
  const all: Record<string, Party> = {
    graphdock: graphdock(db),
    'langgraph-js': langgraphJs(),
    'langgraph-py': langgraphPy(),
    aegra: aegra(db),
  };
  const rows: Row[] = [];
  try {
    for (const name of options.only) {
      const party = all[name];
      if (!party) throw new Error(`unknown party ${name}`);
      console.log(`\n## ${name}`);
      try {
        const row = await measure(party, db);
        console.log(JSON.stringify(row));
        rows.push(row);
      } catch (err) {
        const error = err instanceof Error ? err.message.slice(0, 2000) : String(err);
        console.log(`${name} failed: ${error}`);
        rows.push({
          party: name,
          description: '',
          firstRunMs: NaN,
          firstRunCpuMs: NaN,
          idleRssMiB: NaN,
          rssAfterMiB: NaN,
          runsPerSecond: NaN,
          serverCpuMsPerRun: NaN,
          postgresCpuMsPerRun: null,
          error,
        });
      }
    }
  } finally {
    await admin.end();
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const f = (n: number | null, digits = 1) =>
    n === null || Number.isNaN(n) ? '–' : n.toFixed(digits);
  console.log(
    `\n${cpus().length} CPUs (${cpus()[0]?.model}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
      `load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}; ` +
      `${options.runs} measured runs after ${options.warmup}, ${options.clients} clients, ` +
      `a new thread every ${options.turns} runs\n`,
  );
  console.log(
    '| server | first run after start (s) | CPU to first run (s) | idle RSS (MiB) | RSS after runs (MiB) | runs/s (16 clients) | CPU ms/run server | CPU ms/run PostgreSQL | total | WAL KB/run (full pages) | load during runs |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.party} | ${f(r.firstRunMs / 1000, 2)} | ${f(r.firstRunCpuMs / 1000, 2)} | ${f(r.idleRssMiB, 0)} | ${f(r.rssAfterMiB, 0)} | ${f(r.runsPerSecond)} | ${f(r.serverCpuMsPerRun, 2)} | ${f(r.postgresCpuMsPerRun, 2)} | ${f(r.serverCpuMsPerRun + (r.postgresCpuMsPerRun ?? 0), 2)} | ${r.walBytesPerRun === undefined ? '–' : `${f(r.walBytesPerRun / 1000)} (${f(r.walFpiPerRun ?? 0, 2)})`} | ${r.load ? r.load.map((l) => l.toFixed(1)).join('-') : '–'} |`,
    );
  for (const r of rows) console.log(`- ${r.party}: ${r.error ?? r.description}`);
  console.log(
    `\nReport: ${writeJsonReport(join(REPO_ROOT, 'bench', 'results'), { bench: 'footprint', options, rows })}`,
  );
  return rows.some((r) => r.error) ? 1 : 0;
}

process.exitCode = await main();
