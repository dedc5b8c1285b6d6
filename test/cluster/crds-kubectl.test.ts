// The generated CRDs in a real kube-apiserver: accepted as structural, CEL immutability refuses
// edits through `kubectl apply` with readable messages, printer columns, `kubectl wait`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from './crds.js';
import { startCluster, type Cluster } from './index.js';

let cluster: Cluster;
const WS = '3f2b6a3e-8a0e-4b8e-9d3e-0a1b2c3d4e5f';
const LISTENER_ID = '5a2b6a3e-8a0e-4b8e-9d3e-0a1b2c3d4e5f';
const DEPLOYMENT_ID = '6b2b6a3e-8a0e-4b8e-9d3e-0a1b2c3d4e5f';
const REVISION_ID = '7c2b6a3e-8a0e-4b8e-9d3e-0a1b2c3d4e5f';

const listener = (computeId: string, computeType = 'k8s', version = '1') => ({
  apiVersion: 'graphdock.dev/v1alpha1',
  kind: 'Listener',
  metadata: { name: 'edge' },
  spec: {
    workspace_id: WS,
    compute_type: computeType,
    compute_id: computeId,
    compute_config: { k8s_namespaces: ['agents'] },
    version,
  },
});

const deployment = (over: {
  name?: string;
  listener?: string;
  namespace?: string;
  image?: string;
}) => ({
  apiVersion: 'graphdock.dev/v1alpha1',
  kind: 'AgentDeployment',
  metadata: { name: DEPLOYMENT_ID, namespace: 'agents' },
  spec: {
    workspace_id: WS,
    name: over.name ?? 'agent',
    source: 'external_docker',
    source_config: {
      listener_id: over.listener ?? LISTENER_ID,
      listener_config: { k8s_namespace: over.namespace ?? 'agents' },
      resource_spec: { min_scale: 1 },
    },
    source_revision_config: { image_uri: over.image ?? 'registry.local/agent:1' },
    secret_names: [],
    latest_revision: { id: REVISION_ID, number: 1 },
  },
});

const revision = (image: string) => ({
  apiVersion: 'graphdock.dev/v1alpha1',
  kind: 'AgentRevision',
  metadata: { name: REVISION_ID, namespace: 'agents' },
  spec: {
    workspace_id: WS,
    deployment_id: DEPLOYMENT_ID,
    deployment_name: 'agent',
    revision_number: 1,
    source: 'external_docker',
    source_revision_config: { image_uri: image },
    secrets_ref: { name: `${REVISION_ID}-secrets`, keys: [] },
  },
});

const apply = (obj: unknown) =>
  cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(obj) });

async function refused(obj: unknown): Promise<string> {
  try {
    await apply(obj);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('kubectl apply was accepted');
}

beforeAll(async () => {
  cluster = await startCluster({ nodes: 1 });
  await installCrds(cluster);
  await cluster.kubectl(['create', 'namespace', 'agents']);
});

afterAll(async () => {
  await cluster?.stop();
});

describe('CEL immutability through kubectl apply', () => {
  it('a Listener keeps its compute_type and compute_id; other fields may change', async () => {
    await apply(listener('cluster-a'));
    await apply(listener('cluster-a', 'k8s', '2'));
    expect(await refused(listener('cluster-b'))).toContain('compute_id is immutable');
    expect(await refused(listener('cluster-a', 'ecs'))).toMatch(/compute_type|Unsupported value/);
  });

  it('an AgentDeployment keeps its name, listener and namespace; its image may change', async () => {
    await apply(deployment({}));
    await apply(deployment({ image: 'registry.local/agent:2' }));
    expect(await refused(deployment({ name: 'renamed' }))).toContain('name is immutable');
    expect(
      await refused(deployment({ listener: '9d2b6a3e-8a0e-4b8e-9d3e-0a1b2c3d4e5f' })),
    ).toContain('source_config.listener_id is immutable');
    expect(await refused(deployment({ namespace: 'other' }))).toContain(
      'source_config.listener_config is immutable',
    );
  });

  it('an AgentRevision spec never changes', async () => {
    await apply(revision('registry.local/agent:1'));
    expect(await refused(revision('registry.local/agent:2'))).toContain(
      'AgentRevision spec is immutable: create a new revision instead',
    );
  });

  it('the schema refuses bad values (structural validation)', async () => {
    const bad = listener('cluster-a');
    (bad.spec as Record<string, unknown>).workspace_id = 'not-a-uuid';
    bad.metadata.name = 'bad';
    expect(await refused(bad)).toMatch(/workspace_id/);
  });
});

describe('kubectl get and wait', () => {
  it('prints status, revision, image, endpoint and age columns, and answers to short names', async () => {
    await cluster.kubectl([
      'patch',
      'agentdeployment',
      DEPLOYMENT_ID,
      '-n',
      'agents',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { status: 'READY', endpoint: 'http://agent.agents:8000' } }),
    ]);
    const table = await cluster.kubectl(['get', 'agd', '-n', 'agents']);
    const [header, row] = table.trim().split('\n');
    expect(header?.split(/\s+/)).toEqual([
      'NAME',
      'AGENT',
      'STATUS',
      'REVISION',
      'IMAGE',
      'ENDPOINT',
      'READY',
      'AGE',
    ]);
    expect(row).toMatch(
      new RegExp(
        `^${DEPLOYMENT_ID}\\s+agent\\s+READY\\s+1\\s+registry.local/agent:2\\s+http://agent.agents:8000\\s`,
      ),
    );
    const revisions = await cluster.kubectl(['get', 'agr', '-n', 'agents']);
    expect(revisions.split('\n')[0]?.split(/\s+/)).toEqual([
      'NAME',
      'DEPLOYMENT',
      'REVISION',
      'STATUS',
      'IMAGE',
      'ENDPOINT',
      'AGE',
    ]);
    const listeners = await cluster.kubectl(['get', 'gdl']);
    expect(listeners).toMatch(/COMPUTE-ID\s+NAMESPACES\s+VERSION\s+READY\s+AGE/);
    expect(listeners).toContain('cluster-a');
  });

  it('kubectl wait --for=condition=Ready follows the Ready condition', async () => {
    const waiting = cluster.kubectl([
      'wait',
      '--for=condition=Ready',
      '--timeout=60s',
      '-n',
      'agents',
      `agentrevision/${REVISION_ID}`,
    ]);
    await new Promise((r) => setTimeout(r, 1000));
    await cluster.kubectl([
      'patch',
      'agentrevision',
      REVISION_ID,
      '-n',
      'agents',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          status: 'DEPLOYED',
          observedGeneration: 1,
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              observedGeneration: 1,
              lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
              reason: 'Deployed',
              message: 'rollout complete',
            },
          ],
        },
      }),
    ]);
    expect(await waiting).toContain('condition met');
  });

  it('status is a subresource: writes to the main resource do not change it', async () => {
    const withStatus = {
      ...revision('registry.local/agent:1'),
      status: { status: 'DEPLOY_FAILED' },
    };
    await apply(withStatus);
    const got = JSON.parse(
      await cluster.kubectl(['get', 'agentrevision', REVISION_ID, '-n', 'agents', '-o', 'json']),
    ) as { status: { status: string } };
    expect(got.status.status).toBe('DEPLOYED');
  });
});
