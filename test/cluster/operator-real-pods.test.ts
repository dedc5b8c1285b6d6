// The operator's deployments as real pods: the api and the operator run on the host, PostgreSQL
// and the examples image run on the real node. A deployment reaches DEPLOYED only once its pod
// is Ready on /ok?check_db=1; its runtime accepts exactly the keys of its workspace (checked with
// the api through a relay on the node's link), and a revision whose image cannot be pulled, or
// whose pod crash-loops, ends DEPLOY_FAILED with the reason while the previous one keeps serving.
// The test reaches the runtime only through port-forward on 127.0.0.1, with the official SDK.
import { Client } from '@langchain/langgraph-sdk';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_KEY, otherTenant, useControlPlane } from '../support/control-plane.js';
import {
  grantOperatorRbac,
  startOperatorProcess,
  type RunningOperator,
} from '../support/operator.js';
import { buildImageArchive, buildPostgresImageArchive, type ImageArchive } from './images.js';
import {
  createDeployment,
  createListener,
  deploymentRequest,
  json,
  until,
  waitForRevision,
  type DeploymentBody,
  type RevisionBody,
} from './operator-helpers.js';
import { postgresManifests } from './postgres-pod.js';

const REPO = join(import.meta.dirname, '..', '..');
const PG_PASSWORD = 'operator-real-pods';
const NAMESPACE = 'agents';
const log = (line: string) => console.log(`operator-real-pods: ${line}`);
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

const cp = useControlPlane({ namespaces: [NAMESPACE], cluster: { nodes: 0, realNode: true } });
let operator: RunningOperator;
let examples: ImageArchive;
let listenerId: string;
let deployment: DeploymentBody;
let firstRevision: string;
let secondKey: string;
let other: { key: string };
const randomKey = 'gdk_random_key_nobody_has_0123456789abcdef';

beforeAll(async () => {
  const t = Date.now();
  const [postgres, examplesImage] = await Promise.all([
    buildPostgresImageArchive({ log }),
    buildImageArchive({ config: join(REPO, 'examples/langgraph.json'), log }),
  ]);
  examples = examplesImage;
  for (const image of [postgres, examples]) await cp.cluster.loadImage(image.archive);
  log(`images loaded: ${seconds(t)}`);
  await cp.cluster.kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: postgresManifests(postgres.ref, PG_PASSWORD),
    }),
  });
  await cp.cluster.kubectl(['wait', '--for=condition=Ready', 'pod/postgres', '--timeout=120s'], {
    timeoutMs: 130_000,
  });
  const postgresIp = (
    await cp.cluster.kubectl(['get', 'service', 'postgres', '-o', 'jsonpath={.spec.clusterIP}'])
  ).trim();
  // The operator administers the server through a port-forward; pods use the Service's address.
  const pgForward = await cp.cluster.portForward('pod/postgres', 5432);
  const apiForPods = await cp.cluster.exposeToPods(cp.api.port);
  listenerId = await createListener(cp, 'real-node', [NAMESPACE]);
  operator = await startOperatorProcess(await grantOperatorRbac(cp.cluster), {
    computeId: 'real-node',
    identity: 'operator-real',
    databaseUrl: `postgresql://postgres:${PG_PASSWORD}@127.0.0.1:${pgForward.port}/postgres`,
    env: {
      GRAPHDOCK_OPERATOR_DATABASE_HOST: `${postgresIp}:5432`,
      GRAPHDOCK_CONTROL_PLANE_URL: `http://${apiForPods.host}:${apiForPods.port}`,
    },
  });
  secondKey = await cp.tenancy.createApiKey(cp.workspaceId);
  other = await otherTenant(cp.tenancy);
}, 600_000);

afterAll(async () => {
  await operator?.stop();
}, 60_000);

async function diagnostics(): Promise<string> {
  const parts = [
    await cp.cluster.kubectl(['get', 'pods', '-A', '-o', 'wide']).catch(String),
    await cp.cluster
      .kubectl(['logs', '-n', NAMESPACE, `deployment/gd-${deployment.id}`, '--tail=30'])
      .catch(String),
    operator.output().slice(-4000),
  ];
  return parts.join('\n');
}

/** Through a port-forward to the deployment's Service: a thread and a run with `key`. */
async function withService<T>(fn: (apiUrl: string) => Promise<T>): Promise<T> {
  const forward = await cp.cluster.portForward(`svc/gd-${deployment.id}`, 8000, {
    namespace: NAMESPACE,
  });
  try {
    return await fn(`http://127.0.0.1:${forward.port}`);
  } finally {
    await forward.close();
  }
}

async function echoRun(apiUrl: string, apiKey: string, text: string): Promise<string> {
  const client = new Client({ apiUrl, apiKey });
  const thread = await client.threads.create();
  const state = (await client.runs.wait(thread.thread_id, 'echo', {
    input: { messages: [{ role: 'user', content: text }] },
  })) as { messages: { content: string }[] };
  return state.messages.at(-1)!.content;
}

const status = async (apiUrl: string, key: string | undefined) =>
  (
    await fetch(`${apiUrl}/assistants/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
      body: '{}',
    })
  ).status;

async function waitFailed(revisionId: string): Promise<RevisionBody> {
  const t = Date.now();
  const revision = await until(
    `revision ${revisionId} DEPLOY_FAILED`,
    () => json<RevisionBody>(cp, `/v2/deployments/${deployment.id}/revisions/${revisionId}`),
    (r) => r.status === 'DEPLOY_FAILED' || r.status === 'DEPLOYED',
    180_000,
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}\n${await diagnostics()}`);
  });
  log(`revision ${revision.revision_number}: PATCH → ${revision.status}: ${seconds(t)}`);
  return revision;
}

async function readyCondition(revisionId: string) {
  const cr = await cp.kubectlJson<{
    status: { conditions: { type: string; status: string; reason: string; message: string }[] };
  }>(['get', 'agentrevision', revisionId, '-n', NAMESPACE]);
  return cr.status.conditions.find((c) => c.type === 'Ready')!;
}

/** The previous revision still serves: its pod Ready, the Service answers runs. */
async function previousStillServes(label: string) {
  const read = await json<DeploymentBody>(cp, `/v2/deployments/${deployment.id}`);
  expect(read.active_revision_id).toBe(firstRevision);
  const pods = await cp.kubectlJson<{
    items: {
      metadata: { annotations: Record<string, string> };
      status: { conditions?: { type: string; status: string }[] };
    }[];
  }>(['get', 'pods', '-n', NAMESPACE, '-l', `app.kubernetes.io/instance=gd-${deployment.id}`]);
  const ready = pods.items.filter((p) =>
    p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
  expect(ready.map((p) => p.metadata.annotations['graphdock.dev/revision-id'])).toEqual([
    firstRevision,
  ]);
  const answer = await withService((apiUrl) => echoRun(apiUrl, BOOTSTRAP_KEY, label));
  expect(answer).toBe(`echo: ${label}`);
}

describe('operator deployments on the real node', () => {
  it('DEPLOYED once the pod is Ready on /ok?check_db=1; its runtime serves runs with a workspace key', async () => {
    const t = Date.now();
    deployment = await createDeployment(
      cp,
      deploymentRequest('real', listenerId, NAMESPACE, {
        image: examples.ref,
        resource_spec: { min_scale: 1, max_scale: 1, cpu: 0.1, memory_mb: 128 },
        secrets: [{ name: 'GRAPHDOCK_RUN_LEASE_SECS', value: '10' }],
      }),
    );
    firstRevision = deployment.latest_revision_id;
    await waitForRevision(cp, deployment, firstRevision, 'DEPLOYED', 240_000).catch(
      async (err: Error) => {
        throw new Error(`${err.message}\n${await diagnostics()}`);
      },
    );
    log(`POST → DEPLOYED: ${seconds(t)}`);
    // DEPLOYED means a Ready pod of this revision: the Service answers at once.
    const answer = await withService((apiUrl) => echoRun(apiUrl, BOOTSTRAP_KEY, 'first'));
    log(`POST → first run: ${seconds(t)}`);
    expect(answer).toBe('echo: first');
  }, 300_000);

  it("accepts exactly the workspace's keys; another workspace's, a random or no key get 401", async () => {
    await withService(async (apiUrl) => {
      expect(await echoRun(apiUrl, secondKey, 'second key')).toBe('echo: second key');
      expect(await status(apiUrl, other.key)).toBe(401);
      expect(await status(apiUrl, randomKey)).toBe(401);
      expect(await status(apiUrl, undefined)).toBe(401);
      // Revoked in the control plane: refused by the pod within 30 s.
      const key = await cp.tenancy.createApiKey(cp.workspaceId);
      expect(await status(apiUrl, key)).toBe(200);
      await cp.tenancy.revokeApiKey(key);
      const revoked = Date.now();
      while ((await status(apiUrl, key)) !== 401) {
        expect(Date.now() - revoked).toBeLessThan(30_000);
        await new Promise((r) => setTimeout(r, 500));
      }
      log(`revoked key refused by the pod after ${seconds(revoked)}`);
    });
  }, 120_000);

  it('no key in plain text in custom resources, ConfigMaps, Secrets, pod specs or logs', async () => {
    const keys = [BOOTSTRAP_KEY, secondKey, other.key];
    const objects = await cp.cluster.kubectl([
      'get',
      'agentdeployments,agentrevisions,configmaps,deployments,pods',
      '-A',
      '-o',
      'json',
    ]);
    const secrets = await cp.kubectlJson<{ items: { data?: Record<string, string> }[] }>([
      'get',
      'secrets',
      '-A',
    ]);
    const decoded = secrets.items
      .flatMap((s) => Object.values(s.data ?? {}))
      .map((v) => Buffer.from(v, 'base64').toString());
    const podLogs = await cp.cluster.kubectl([
      'logs',
      '-n',
      NAMESPACE,
      '-l',
      `app.kubernetes.io/instance=gd-${deployment.id}`,
      '--tail=-1',
    ]);
    expect(podLogs).toContain('checked with the control plane');
    for (const key of keys) {
      expect(objects).not.toContain(key);
      expect(decoded.join('\n')).not.toContain(key);
      expect(podLogs).not.toContain(key);
      expect(operator.output()).not.toContain(key);
      expect(cp.api.output()).not.toContain(key);
    }
  });

  it('an image that cannot be pulled: DEPLOY_FAILED (ImagePullBackOff), the previous revision serves', async () => {
    const patched = await json<DeploymentBody>(cp, `/v2/deployments/${deployment.id}`, {
      method: 'PATCH',
      json: { source_revision_config: { image_uri: 'graphdock.test/never-loaded:1' } },
    });
    const revision = await waitFailed(patched.latest_revision_id);
    expect(revision.status).toBe('DEPLOY_FAILED');
    expect(revision.status_message).toContain('ImagePullBackOff');
    expect(revision.status_message).toContain('graphdock.test/never-loaded:1');
    expect(await readyCondition(patched.latest_revision_id)).toMatchObject({
      status: 'False',
      reason: 'ImagePullBackOff',
    });
    await previousStillServes('after a failed pull');
  }, 240_000);

  it('a pod that crash-loops: DEPLOY_FAILED (CrashLoopBackOff), the previous revision serves', async () => {
    // The runtime exits 1 at start on a setting it cannot parse.
    const patched = await json<DeploymentBody>(cp, `/v2/deployments/${deployment.id}`, {
      method: 'PATCH',
      json: {
        source_revision_config: { image_uri: examples.ref },
        secrets: [{ name: 'GRAPHDOCK_RUN_LEASE_SECS', value: 'not-a-number' }],
      },
    });
    const revision = await waitFailed(patched.latest_revision_id);
    expect(revision.status).toBe('DEPLOY_FAILED');
    expect(revision.status_message).toContain('CrashLoopBackOff');
    expect(revision.status_message).toContain('last exit code 1');
    // The runtime's own line, kept by kubelet as the container's termination message.
    expect(revision.status_message).toContain(
      'graphdock: invalid environment: GRAPHDOCK_RUN_LEASE_SECS:',
    );
    expect(await readyCondition(patched.latest_revision_id)).toMatchObject({
      status: 'False',
      reason: 'CrashLoopBackOff',
    });
    await previousStillServes('after a crash loop');
  }, 240_000);
});
