// A cluster to poke at by hand: `npx tsx test/cluster/start-cli.ts [--nodes 3] [--real-node [--load x.oci.tar]...]` prints one JSON
// line ({server, kubeconfigPath, workDir, realNode?, pids}) and keeps the cluster up until SIGINT/SIGTERM.
// Also used by watchdog.test.ts as a process that dies without calling stop().
import { parseArgs } from 'node:util';
import { startCluster } from './index.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '3' },
    'real-node': { type: 'boolean' },
    // Image archives to load into the real node's containerd.
    load: { type: 'string', multiple: true, default: [] },
  },
});
const cluster = await startCluster({ nodes: Number(values.nodes), realNode: values['real-node'] });
for (const archive of values.load) await cluster.loadImage(archive);
const { server, kubeconfigPath, workDir, realNode } = cluster;
console.log(JSON.stringify({ server, kubeconfigPath, workDir, realNode, pids: cluster.pids() }));
const shutdown = (): void => {
  void cluster.stop().then(() => process.exit(0));
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
setInterval(() => undefined, 60_000); // stay alive until a signal
