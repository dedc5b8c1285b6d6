// Installs the graphdock.dev CRDs into a test cluster and waits until they serve.
import { join } from 'node:path';
import { REPO_ROOT } from '../support/server.js';
import type { Cluster } from './index.js';

const CRDS = [
  'crd/listeners.graphdock.dev',
  'crd/agentdeployments.graphdock.dev',
  'crd/agentrevisions.graphdock.dev',
  'crd/bulkexports.graphdock.dev',
];

/**
 * `kubectl wait --for=condition=Established` fails at once ("accessor error") when it reads a
 * CRD before the apiserver has written any status condition: that case is retried.
 */
export async function installCrds(cluster: Cluster): Promise<void> {
  await cluster.kubectl(['apply', '--server-side', '-f', join(REPO_ROOT, 'crds')]);
  for (let attempt = 1; ; attempt++) {
    try {
      await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...CRDS]);
      return;
    } catch (err) {
      if (attempt >= 20 || !/accessor error/.test((err as Error).message)) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
