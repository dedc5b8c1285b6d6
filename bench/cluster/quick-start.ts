// The quick start on the real node (test/cluster/quick-start.ts): the chart's api and operator as
// real pods, then, one deployment at a time, POST /v2/deployments of the examples image → its
// revision DEPLOYED → the first run the official SDK gets answered through port-forward to the
// deployment's Service; then rollouts (PATCH to a changed graph) under two clients that keep
// making runs through a relay in front of the Service, counting failed requests.
//
//   npx tsx bench/cluster/quick-start.ts [--deployments 10] [--rollouts 3]
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import {
  AGENTS_NAMESPACE,
  buildQuickStartImages,
  createDeployment,
  deploymentPods,
  echoOnce,
  rolloutUnderLoad,
  sdk,
  startFront,
  startQuickStart,
  waitForRevision,
} from '../../test/cluster/quick-start.js';

const { values } = parseArgs({
  options: {
    deployments: { type: 'string', default: '10' },
    rollouts: { type: 'string', default: '3' },
  },
});
const log = (line: string) => console.error(`bench: ${line}`);
const loads: number[] = [];
const sampleLoad = () => loads.push(loadavg()[0]!);

const images = await buildQuickStartImages(log);
const qs = await startQuickStart(images, log);
const toDeployed: number[] = [];
const toFirstRun: number[] = [];
const rollouts: { deployedMs: number; oldPodGoneMs: number; runs: number; failed: number }[] = [];
try {
  for (let i = 0; i < Number(values.deployments); i++) {
    sampleLoad();
    const t = performance.now();
    const deployment = await createDeployment(qs, `bench-${i}`, images.examples.ref);
    await waitForRevision(qs, deployment.id, deployment.latest_revision_id, 'DEPLOYED');
    toDeployed.push(performance.now() - t);
    const forward = await qs.cluster.portForward(`service/gd-${deployment.id}`, 8000, {
      namespace: AGENTS_NAMESPACE,
    });
    try {
      const reply = await echoOnce(sdk(`http://127.0.0.1:${forward.port}`), 'first');
      if (reply !== 'echo: first') throw new Error(`unexpected reply ${reply}`);
      toFirstRun.push(performance.now() - t);
    } finally {
      await forward.close();
    }
    log(
      `deployment ${i}: DEPLOYED ${(toDeployed.at(-1)! / 1000).toFixed(1)} s, first run ${(toFirstRun.at(-1)! / 1000).toFixed(1)} s`,
    );
    // One at a time: the node's two cores are the measured resource.
    await qs.api.json(`/v2/deployments/${deployment.id}`, { method: 'DELETE' });
    while ((await deploymentPods(qs, deployment.id)).length)
      await new Promise((r) => setTimeout(r, 500));
  }

  const deployment = await createDeployment(qs, 'bench-rollout', images.examples.ref);
  await waitForRevision(qs, deployment.id, deployment.latest_revision_id, 'DEPLOYED');
  const serviceIp = (
    await qs.cluster.kubectl([
      '-n',
      AGENTS_NAMESPACE,
      'get',
      `service/gd-${deployment.id}`,
      '-o',
      'jsonpath={.spec.clusterIP}',
    ])
  ).trim();
  await startFront(qs, 'front', serviceIp, images.graphdock.ref);
  const forward = await qs.cluster.portForward('pod/front', 9000, { namespace: AGENTS_NAMESPACE });
  try {
    for (let i = 0; i < Number(values.rollouts); i++) {
      sampleLoad();
      const image = i % 2 === 0 ? images.examplesV2.ref : images.examples.ref;
      const r = await rolloutUnderLoad(
        qs,
        deployment.id,
        `http://127.0.0.1:${forward.port}`,
        image,
      );
      rollouts.push({
        deployedMs: r.deployedMs,
        oldPodGoneMs: r.oldPodGoneMs,
        runs: r.replies.length,
        failed: r.failures.length,
      });
      log(`rollout ${i}: ${JSON.stringify(rollouts.at(-1))} ${r.failures.join(' | ')}`);
    }
  } finally {
    await forward.close();
  }
} finally {
  await qs.api.close();
  await qs.cluster.stop();
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const p50 = (xs: number[]) => sorted(xs)[Math.floor((xs.length - 1) / 2)] ?? NaN;
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model}, ${Math.round(totalmem() / 2 ** 30)} GiB; load average (1 min) during the runs ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
);
console.log('| Measure | p50 | max | n |');
console.log('| --- | --- | --- | --- |');
console.log(
  `| POST /v2/deployments → revision DEPLOYED | ${s(p50(toDeployed))} | ${s(Math.max(...toDeployed))} | ${toDeployed.length} |`,
);
console.log(
  `| POST /v2/deployments → first run answered (SDK, port-forward) | ${s(p50(toFirstRun))} | ${s(Math.max(...toFirstRun))} | ${toFirstRun.length} |`,
);
const deployed = rollouts.map((r) => r.deployedMs);
const gone = rollouts.map((r) => r.oldPodGoneMs);
console.log(
  `| PATCH → new revision DEPLOYED | ${s(p50(deployed))} | ${s(Math.max(...deployed))} | ${rollouts.length} |`,
);
console.log(
  `| PATCH → old pod gone | ${s(p50(gone))} | ${s(Math.max(...gone))} | ${rollouts.length} |`,
);
console.log(
  `| Runs failed during a rollout (of runs made; each is 2 requests) | ${rollouts.map((r) => `${r.failed} of ${r.runs + r.failed}`).join(', ')} | | ${rollouts.length} |`,
);
