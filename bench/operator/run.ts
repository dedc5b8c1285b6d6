// The operator on the local Kubernetes control plane (test/cluster), with `graphdock api` and
// `graphdock operator` as processes, as in the cluster tests:
//   1. latency: POST /v2/deployments to revision DEPLOYED, one deployment at a time (p50, p99);
//      baseline in the same run: a plain 1-replica Deployment applied with kubectl until
//      `kubectl rollout status` returns (the cluster's own floor for "a pod is Ready").
//   2. burst: N deployments POSTed at once (20 in flight), time until every revision is DEPLOYED.
//   3. memory: operator RSS once M deployments in total are DEPLOYED (baseline: its RSS idle).
// Latency and burst deployments get their own database (created by the operator); the extra
// memory-phase deployments bring POSTGRES_URI_CUSTOM and min_scale 0, so the run does not
// create hundreds of databases and pods just to weigh the operator's caches.
//
//   npx tsx bench/operator/run.ts [--latency 20] [--burst 200] [--total 500] [--workers 8]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startPostgresServer } from '../../common/db/index.js';
import { startCluster } from '../../test/cluster/index.js';
import { grantOperatorRbac, startOperatorProcess } from '../../test/support/operator.js';
import { REPO_ROOT, startServer } from '../../test/support/server.js';

const { values } = parseArgs({
  options: {
    latency: { type: 'string', default: '20' },
    burst: { type: 'string', default: '200' },
    total: { type: 'string', default: '500' },
    workers: { type: 'string', default: '8' },
    nodes: { type: 'string', default: '3' },
    /** NODE_OPTIONS for the operator process, e.g. "--max-old-space-size=128". */
    'node-options': { type: 'string', default: '' },
  },
});
const LATENCY_N = Number(values.latency);
const BURST_N = Number(values.burst);
const TOTAL_N = Number(values.total);
const KEY = 'gdk_bootstrap_key_for_bench_0123456789';
const NS = 'agents';

const pgDir = mkdtempSync(join(tmpdir(), 'graphdock-bench-op-pg-'));
const [cluster, pg] = await Promise.all([
  startCluster({ nodes: Number(values.nodes) }),
  startPostgresServer({ dataDir: join(pgDir, 'data'), ephemeral: true }),
]);
const cleanups: (() => Promise<unknown>)[] = [
  () => cluster.stop(),
  () => pg.stop(),
  async () => rmSync(pgDir, { recursive: true, force: true }),
];
try {
  await cluster.kubectl(['apply', '--server-side', '-f', join(REPO_ROOT, 'crds')]);
  await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  await cluster.kubectl(['create', 'namespace', NS]);
  const api = await startServer({
    command: 'api',
    databaseUrl: pg.url,
    env: { KUBECONFIG: cluster.kubeconfigPath, GRAPHDOCK_BOOTSTRAP_API_KEY: KEY },
  });
  cleanups.unshift(() => api.stop());
  const call = async <T>(path: string, init: { method?: string; json?: unknown } = {}) => {
    const res = await fetch(`${api.url}${path}`, {
      method: init.method ?? 'GET',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
    });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const listener = await call<{ id: string }>('/v2/listeners', {
    method: 'POST',
    json: { compute_type: 'k8s', compute_id: 'bench', compute_config: { k8s_namespaces: [NS] } },
  });
  const kubeconfig = await grantOperatorRbac(cluster);
  const operator = await startOperatorProcess(kubeconfig, {
    computeId: 'bench',
    identity: 'bench-operator',
    databaseUrl: pg.url,
    args: ['--workers', values.workers],
    env: values['node-options'] ? { NODE_OPTIONS: values['node-options'] } : {},
  });
  cleanups.unshift(() => operator.stop());
  const rssMb = () => {
    const status = readFileSync(`/proc/${operator.process.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  };
  // Wait until the operator leads before measuring anything.
  for (;;) {
    if (/leader_election_master_status\{[^}]*\} 1/.test(await operator.metrics())) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const idleRss = rssMb();

  let seq = 0;
  const create = (custom = false) =>
    call<{ id: string; latest_revision_id: string }>('/v2/deployments', {
      method: 'POST',
      json: {
        name: `bench-${seq++}`,
        source: 'external_docker',
        source_config: {
          listener_id: listener.id,
          listener_config: { k8s_namespace: NS },
          resource_spec: { min_scale: custom ? 0 : 1, max_scale: custom ? 0 : 1, cpu: 0.1 },
        },
        source_revision_config: { image_uri: 'registry.local/agent:1' },
        secrets: custom
          ? [{ name: 'POSTGRES_URI_CUSTOM', value: 'postgres://u:p@db.example:5432/d' }]
          : [],
      },
    });

  // Baseline: the cluster alone rolling out one Ready pod.
  const baseline: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await cluster.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: `plain-${i}`, namespace: 'default' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: `plain-${i}` } },
          template: {
            metadata: { labels: { app: `plain-${i}` } },
            spec: { containers: [{ name: 'c', image: 'registry.local/agent:1' }] },
          },
        },
      }),
    });
    await cluster.kubectl(['rollout', 'status', `deployment/plain-${i}`, '--timeout=120s']);
    baseline.push(performance.now() - started);
  }

  // 1. Latency, one at a time.
  const latencies: number[] = [];
  for (let i = 0; i < LATENCY_N; i++) {
    const started = performance.now();
    const d = await create();
    for (;;) {
      const r = await call<{ status: string }>(
        `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`,
      );
      if (r.status === 'DEPLOYED') break;
      await new Promise((res) => setTimeout(res, 25));
    }
    latencies.push(performance.now() - started);
  }

  const deployedCount = async () => {
    const out = await cluster.kubectl([
      'get',
      'agr',
      '-n',
      NS,
      '-o',
      'jsonpath={range .items[*]}{.status.status}{"\\n"}{end}',
    ]);
    return out.split('\n').filter((s) => s === 'DEPLOYED').length;
  };
  const inBatches = async (n: number, custom: boolean) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < n) {
          next++;
          await create(custom);
        }
      }),
    );
  };
  const waitDeployed = async (target: number, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    let count = 0;
    while (Date.now() < deadline) {
      count = await deployedCount();
      if (count >= target) return count;
      await new Promise((r) => setTimeout(r, 500));
    }
    return count;
  };

  // 2. Burst.
  const burstStart = performance.now();
  await inBatches(BURST_N, false);
  const postedMs = performance.now() - burstStart;
  const burstDeployed = await waitDeployed(LATENCY_N + BURST_N, 300_000);
  const burstMs = performance.now() - burstStart;

  // 3. Memory with TOTAL_N deployments.
  const extra = Math.max(0, TOTAL_N - LATENCY_N - BURST_N);
  await inBatches(extra, true);
  const totalDeployed = await waitDeployed(LATENCY_N + BURST_N + extra, 300_000);
  await new Promise((r) => setTimeout(r, 5_000));
  const loadedRss = rssMb();

  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const pct = (xs: number[], p: number) =>
    sorted(xs)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const base = pct(baseline, 50);
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), workers: ${values.workers}, fake nodes: ${values.nodes}, operator NODE_OPTIONS: ${values['node-options'] || '(none)'}`,
  );
  console.log('| measure | value | x baseline | target |');
  console.log('| --- | --- | --- | --- |');
  console.log(
    `| baseline: plain Deployment (1 pod) apply to rolled out, p50 of 5 | ${s(base)} | 1.0 | |`,
  );
  console.log(
    `| POST to DEPLOYED p50 (${LATENCY_N} one at a time) | ${s(pct(latencies, 50))} | ${(pct(latencies, 50) / base).toFixed(1)} | < 3 s |`,
  );
  console.log(
    `| POST to DEPLOYED p99 | ${s(pct(latencies, 99))} | ${(pct(latencies, 99) / base).toFixed(1)} | |`,
  );
  console.log(
    `| ${BURST_N} POSTed at once (20 in flight): all POSTs answered | ${s(postedMs)} | | |`,
  );
  console.log(
    `| ${BURST_N} at once: all DEPLOYED (${burstDeployed - LATENCY_N}/${BURST_N}) | ${s(burstMs)} | ${(burstMs / base).toFixed(1)} | < 60 s |`,
  );
  console.log(`| operator RSS idle (0 deployments) | ${idleRss.toFixed(0)} MB | 1.0 | |`);
  console.log(
    `| operator RSS with ${totalDeployed} deployments DEPLOYED | ${loadedRss.toFixed(0)} MB | ${(loadedRss / idleRss).toFixed(1)} | < 200 MB |`,
  );
} finally {
  for (const cleanup of cleanups) await cleanup().catch((e: unknown) => console.error(e));
}
