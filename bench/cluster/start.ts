// Start-up cost of the local Kubernetes control plane (test/cluster) with cached tools: cluster
// start to "nodes Ready + default ServiceAccount", a 2-replica Deployment rollout, graceful and
// crash apiserver restarts, stop. Baseline in the same run: the embedded PostgreSQL start that
// every integration run already pays.
//
//   npx tsx bench/cluster/start.ts [--rounds 3]
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startPostgresServer } from '../../common/db/index.js';
import { ensureTools, startCluster } from '../../test/cluster/index.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const rounds = Number(values.rounds);

const samples: Record<string, number[]> = {};
const record = (name: string, ms: number): void => void (samples[name] ??= []).push(ms);
async function timed<T>(name: string, action: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await action();
  record(name, performance.now() - started);
  return result;
}

const deployment = JSON.stringify({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'bench', namespace: 'default' },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'bench' } },
    template: {
      metadata: { labels: { app: 'bench' } },
      spec: { containers: [{ name: 'c', image: 'example.invalid/bench:1' }] },
    },
  },
});

await timed('tools check (cached build-tools.sh)', () => ensureTools());
for (let round = 0; round < rounds; round++) {
  const pgDir = mkdtempSync(join(tmpdir(), 'graphdock-bench-pg-'));
  const pg = await timed('baseline: embedded PostgreSQL start', () =>
    startPostgresServer({ dataDir: join(pgDir, 'data'), ephemeral: true }),
  );
  await pg.stop();
  rmSync(pgDir, { recursive: true, force: true });

  const cluster = await timed('cluster start (3 nodes Ready)', () => startCluster({ nodes: 3 }));
  await timed('Deployment 2 replicas: apply to rolled out', async () => {
    await cluster.kubectl(['apply', '-f', '-'], { input: deployment });
    await cluster.kubectl(['rollout', 'status', 'deployment/bench', '--timeout=120s']);
  });
  await timed('apiserver restart (graceful, 3 s grace)', () => cluster.restartApiserver());
  await timed('apiserver restart (crash)', () => cluster.restartApiserver({ crash: true }));
  await timed('cluster stop', () => cluster.stop());
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const baseline = median(samples['baseline: embedded PostgreSQL start'] ?? [1]);
console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), rounds: ${rounds}`);
console.log('| step | median | min | max | x baseline |');
console.log('| --- | --- | --- | --- | --- |');
for (const [name, xs] of Object.entries(samples)) {
  const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
  const ratio = (median(xs) / baseline).toFixed(1);
  console.log(
    `| ${name} | ${s(median(xs))} | ${s(Math.min(...xs))} | ${s(Math.max(...xs))} | ${ratio} |`,
  );
}
