// Start-up and idle footprint of `graphdock runtime`, from the TypeScript sources through tsx (a
// checkout) and from the compiled build (`npm run build`, what the image runs), on the image's
// Node.js and flags, against one PostgreSQL already up and migrated (as a pod finds it): time
// and CPU time from process start to the first successful run, and the resident memory of the
// server process 5 s after that run. The compiled build's compile cache is filled by
// `graphdock warm-up` first, as the image's build does; the `… no module caches` variants turn it
// and the resolution cache off (bin/module-caches.mjs), the others leave both on.
//
//   npx tsx bench/start/run.ts [--rounds 5] [--config examples/langgraph.json]
//                              [--variants "compiled, JS graph,compiled, JS graph, no module caches"]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { freePort, startPostgresServer } from '../../common/db/index.js';
import { buildProduct } from '../../scripts/build.js';
import { imageNode, imageNodeFlags } from '../../scripts/image-node.js';
import { cpuMs } from '../footprint/proc.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    config: { type: 'string', default: join(REPO, 'examples', 'langgraph.json') },
    variants: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const config = resolve(values.config);

// A JavaScript echo graph: what a runtime serving no TypeScript loads.
const jsProject = mkdtempSync(join(tmpdir(), 'graphdock-bench-js-'));
writeFileSync(
  join(jsProject, 'graph.mjs'),
  `import { MessagesAnnotation, StateGraph } from '@langchain/langgraph';
export const graph = new StateGraph(MessagesAnnotation)
  .addNode('echo', (s) => ({ messages: [{ role: 'ai', content: 'echo: ' + s.messages.at(-1).content }] }))
  .addEdge('__start__', 'echo').compile();
`,
);
writeFileSync(
  join(jsProject, 'langgraph.json'),
  JSON.stringify({ graphs: { echo: './graph.mjs:graph' } }),
);
// Packages resolve from this checkout, as a project under /deps resolves them in the image.
symlinkSync(join(REPO, 'node_modules'), join(jsProject, 'node_modules'));

// Laid out as in the image: the compiled modules beside node_modules.
const image = mkdtempSync(join(tmpdir(), 'graphdock-bench-dist-'));
const dist = join(image, 'app');
await buildProduct({ outDir: dist });
symlinkSync(join(REPO, 'node_modules'), join(dist, 'node_modules'));

const pgDir = mkdtempSync(join(tmpdir(), 'graphdock-bench-pg-'));
const pg = await startPostgresServer({ dataDir: join(pgDir, 'data'), ephemeral: true });

function rssKiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? 0);
}

const node = imageNode();
const flags = imageNodeFlags();
interface Sample {
  firstRunMs: number;
  firstRunCpuMs: number;
  rssMiB: number;
}

/** Both module caches off (bin/module-caches.mjs). */
const NO_MODULE_CACHES = { NODE_DISABLE_COMPILE_CACHE: '1', GRAPHDOCK_RESOLUTION_CACHE: 'false' };

async function once(
  entry: string,
  configPath: string,
  extraEnv: Record<string, string> = {},
): Promise<Sample> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(
    node,
    [
      ...flags,
      entry,
      'runtime',
      '--config',
      configPath,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
    ],
    {
      env: {
        ...process.env,
        NODE_COMPILE_CACHE: undefined,
        NODE_DISABLE_COMPILE_CACHE: undefined,
        GRAPHDOCK_RESOLUTION_CACHE: undefined,
        DATABASE_URL: pg.url,
        GRAPHDOCK_AUTH_TYPE: 'noop',
        LOG_LEVEL: 'warn',
        ...extraEnv,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const exited = new Promise((r) => child.once('exit', r));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/runs/wait`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          assistant_id: 'echo',
          input: { messages: [{ role: 'user', content: 'hi' }] },
        }),
      }).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const firstRunMs = performance.now() - started;
    const firstRunCpuMs = cpuMs(child.pid!);
    await new Promise((r) => setTimeout(r, 5_000));
    const rssMiB = rssKiB(child.pid!) / 1024;
    return { firstRunMs, firstRunCpuMs, rssMiB };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

const compiledEntry = join(dist, 'bin', 'graphdock.mjs');
const jsConfig = join(jsProject, 'langgraph.json');
const allVariants: [string, string, string, Record<string, string>?][] = [
  ['tsx (sources), TS graphs', join(REPO, 'bin', 'graphdock.mjs'), config],
  ['compiled, TS graphs', compiledEntry, config],
  ['compiled, TS graphs, no module caches', compiledEntry, config, NO_MODULE_CACHES],
  ['compiled, JS graph', compiledEntry, jsConfig],
  ['compiled, JS graph, no module caches', compiledEntry, jsConfig, NO_MODULE_CACHES],
];
const chosen = values.variants?.split(/,(?=\S)/);
const variants = chosen ? allVariants.filter(([name]) => chosen.includes(name)) : allVariants;
// As the image's build: the compile cache beside the build holds the runtime and both configs' graphs.
for (const configPath of [config, jsConfig])
  execFileSync(node, [...flags, compiledEntry, 'warm-up', '--config', configPath], {
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: 'inherit',
  });
// The first start migrates the database; it is not measured.
await once(compiledEntry, config);
const loadBefore = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
const samples = new Map<string, Sample[]>(variants.map(([name]) => [name, []]));
try {
  // Interleaved, so that a change of the machine's load falls on every variant alike.
  for (let round = 0; round < rounds; round++)
    for (const [name, entry, configPath, extraEnv] of variants)
      samples.get(name)!.push(await once(entry, configPath, extraEnv));
} finally {
  await pg.stop();
  for (const dir of [pgDir, image, jsProject]) rmSync(dir, { recursive: true, force: true });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `node ${node} ${flags.join(' ')}; ${rounds} rounds; load before ${loadBefore}, after ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(
  '| variant | start → first run p50 (each) | CPU to first run p50 (each) | idle RSS p50 |',
);
console.log('| --- | --- | --- | --- |');
for (const [name, list] of samples) {
  const first = list.map((s) => s.firstRunMs);
  const cpu = list.map((s) => s.firstRunCpuMs);
  const each = (xs: number[]) => xs.map((x) => (x / 1000).toFixed(2)).join(', ');
  console.log(
    `| ${name} | ${(median(first) / 1000).toFixed(2)} s (${each(first)}) | ` +
      `${(median(cpu) / 1000).toFixed(2)} s (${each(cpu)}) | ` +
      `${median(list.map((s) => s.rssMiB)).toFixed(0)} MiB |`,
  );
}
