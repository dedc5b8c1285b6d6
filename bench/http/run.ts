// HTTP benchmark: graphdock against the official in-memory `@langchain/langgraph-api` server, on
// the example graphs, with a closed-loop client. One server runs at a time so that they do not
// compete for the CPU; the load generator shares the machine with whichever server is running.
//
//   npm run bench -- [--duration 5] [--repeats 3] [--warmup 2] [--concurrency 16] [--threads 100000]
//                    [--state-threads 1000] [--seed-concurrency 64]
//                    [--state-seed supersteps|update] [--only baseline|graphdock]
//
// Every flag can also be given as an environment variable: BENCH_DURATION, BENCH_WARMUP, ...
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Lockstep, freezingOthers } from './lockstep.js';
import { markdownReport, writeJsonReport } from './report.js';
import { runScenario, type ScenarioOptions, type ServerRun, type StateSeed } from './scenario.js';
import {
  REPO_ROOT,
  graphdockAvailable,
  startBaseline,
  startGraphdock,
  type RunningServer,
  type ServerName,
} from './servers.js';
import { rerunUnderImageNode } from '../../scripts/image-node.js';

rerunUnderImageNode();

/** Quiet time before each operation and after each writing window (see Lockstep). */
const SETTLE_MS = 9000;

const FLAGS = {
  duration: { type: 'string', default: '5' },
  repeats: { type: 'string', default: '3' },
  warmup: { type: 'string', default: '2' },
  concurrency: { type: 'string', default: '16' },
  threads: { type: 'string', default: '100000' },
  'small-threads': { type: 'string', default: '1000' },
  'state-threads': { type: 'string', default: '1000' },
  'seed-concurrency': { type: 'string', default: '64' },
  'state-seed': { type: 'string', default: 'supersteps' },
  only: { type: 'string' },
} as const;

function readOptions() {
  const { values } = parseArgs({ options: FLAGS, strict: true });
  const get = (name: keyof typeof FLAGS): string | undefined => {
    const env = process.env[`BENCH_${name.toUpperCase().replace(/-/g, '_')}`];
    const flag = values[name];
    // An explicit flag wins over the environment, which wins over the default.
    return process.argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`))
      ? flag
      : (env ?? flag);
  };
  const positive = (name: keyof typeof FLAGS): number => {
    const value = Number(get(name));
    if (!Number.isFinite(value) || value <= 0)
      throw new Error(`--${name} must be a positive number`);
    return value;
  };
  const stateSeed = get('state-seed');
  if (stateSeed !== 'supersteps' && stateSeed !== 'update') {
    throw new Error('--state-seed must be supersteps or update');
  }
  const only = get('only');
  if (only !== undefined && only !== 'baseline' && only !== 'graphdock') {
    throw new Error('--only must be baseline or graphdock');
  }
  const scenario: ScenarioOptions = {
    durationMs: positive('duration') * 1000,
    repeats: Math.floor(positive('repeats')),
    warmupMs: Number(get('warmup') ?? 0) * 1000,
    concurrency: Math.floor(positive('concurrency')),
    threads: Math.floor(positive('threads')),
    smallThreads: Math.floor(positive('small-threads')),
    stateThreads: Math.floor(positive('state-threads')),
    seedConcurrency: Math.floor(positive('seed-concurrency')),
    stateSeed: stateSeed satisfies StateSeed,
  };
  return { scenario, only };
}

function environment() {
  const cpuList = cpus();
  return {
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    /** 1, 5 and 15 minute load averages when the run started: other work skews the figures. */
    loadAverageAtStart: loadavg().map((l) => Number(l.toFixed(2))),
    note:
      `${cpuList.length} CPU cores shared by the server under test, PostgreSQL (graphdock only) and ` +
      'the load generator. Both servers run side by side; windows alternate between them (baseline, ' +
      'graphdock, ...), the server not being measured is frozen (SIGSTOP) meanwhile, and the ' +
      'median window of each is reported.',
  };
}

const active = new Set<RunningServer>();

async function benchServer(
  name: ServerName,
  server: RunningServer,
  options: ScenarioOptions,
  run: ServerRun,
  lockstep: Lockstep,
): Promise<void> {
  try {
    await runScenario(server, options, run, lockstep);
  } catch (err) {
    lockstep.leave(name);
    console.error(`  ${name} server output (tail):\n${server.output().slice(-3000)}`);
    throw err;
  }
}

async function stopAll(): Promise<void> {
  await Promise.all([...active].map((s) => s.stop()));
  active.clear();
}

async function main(): Promise<number> {
  const startedAt = new Date().toISOString();
  const { scenario, only } = readOptions();
  const env = environment();
  console.log(`# Graphdock HTTP benchmark`);
  const [load1 = 0] = env.loadAverageAtStart;
  if (load1 > 0.5) {
    console.log(
      `WARNING: load average is ${load1} before the run; other work will skew the figures.`,
    );
  }
  console.log(
    `${scenario.concurrency} clients, ${scenario.warmupMs / 1000} s warm-up + ` +
      `${scenario.repeats} x ${scenario.durationMs / 1000} s per operation (median window), ${scenario.threads} threads; ${env.note}`,
  );

  const runs: ServerRun[] = [];
  const problems: string[] = [];
  const notes: string[] = [];
  const targets: [ServerName, () => Promise<RunningServer>][] = [
    ['baseline', startBaseline],
    ['graphdock', startGraphdock],
  ];
  const started: [ServerName, RunningServer][] = [];
  for (const [name, start] of targets) {
    if (only !== undefined && only !== name) continue;
    if (name === 'graphdock' && !graphdockAvailable()) {
      notes.push('graphdock was not measured: bin/graphdock.mjs does not exist yet');
      continue;
    }
    console.log(`\n## ${name}: starting ...`);
    try {
      const server = await start();
      active.add(server);
      started.push([name, server]);
      console.log(`  ${server.description} at ${server.url}`);
    } catch (err) {
      problems.push(`${name} failed to start: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const lockstep = new Lockstep(
    started.map(([name]) => name),
    {
      repeats: scenario.repeats,
      warmup: scenario.warmupMs > 0,
      settleMs: SETTLE_MS,
      settleAfter: ['baseline'],
      // While one server is measured the others are frozen, so their background work (the
      // baseline's periodic store writes) cannot take CPU from it.
      around: freezingOthers(started),
    },
  );
  try {
    await Promise.all(
      started.map(async ([name, server]) => {
        const run: ServerRun = {
          server: name,
          description: server.description,
          seeding: [],
          measurements: [],
        };
        runs.push(run);
        try {
          await benchServer(name, server, scenario, run, lockstep);
        } catch (err) {
          problems.push(`${name} failed: ${err instanceof Error ? err.message : String(err)}`);
          console.error(`  ${name} failed:`, err);
        }
      }),
    );
  } finally {
    await stopAll();
  }

  console.log(`\n## Results\n`);
  console.log(
    `${env.cpus} x ${env.cpuModel}, ${env.memoryGiB} GiB, Node ${env.node}. ` +
      `${scenario.concurrency} concurrent clients (closed loop, keep-alive), ` +
      `${scenario.repeats} windows of ${scenario.durationMs / 1000} s per operation (median reported) after ${scenario.warmupMs / 1000} s warm-up. ` +
      `${env.note} Load average at start: ${env.loadAverageAtStart.join(' ')}.\n`,
  );
  console.log(markdownReport(runs, scenario.threads));
  for (const line of [...notes, ...problems]) console.log(`\n**${line}**`);

  const file = writeJsonReport(join(REPO_ROOT, 'bench', 'results'), {
    startedAt,
    options: scenario,
    environment: env,
    runs,
    problems,
    notes,
  });
  console.log(`\nJSON: ${file}`);
  const failedRequests = runs.some((r) => r.measurements.some((m) => m.result.errors > 0));
  return problems.length > 0 || failedRequests ? 1 : 0;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the server under test ...`);
    void stopAll().finally(() => process.exit(130));
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  async (err: unknown) => {
    console.error(err);
    await stopAll();
    process.exitCode = 1;
  },
);
