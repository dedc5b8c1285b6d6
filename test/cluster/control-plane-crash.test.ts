// Crash safety of the control plane's writes: an api process SIGKILLed before each write of a
// create and of a PATCH (test/cluster/fault/killing-api.ts) leaves either nothing a reader sees
// or a complete deployment, and the operator removes every leftover after its grace period,
// logging each once. Also what older versions could leave: a deployment with no revision and
// revision Secrets without an owner.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_KEY, useControlPlane } from '../support/control-plane.js';
import {
  grantOperatorRbac,
  startOperatorProcess,
  type RunningOperator,
} from '../support/operator.js';
import { REPO_ROOT, startServer } from '../support/server.js';
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

const cp = useControlPlane({ namespaces: ['agents'] });
const GRACE_SECONDS = 15;
/** Writes of a create: deployment (pending), revision, Secret, clearing the mark. */
const CREATE_WRITES = 4;
/** Writes of a PATCH making a revision: revision (pending), Secret, deployment, clearing the mark. */
const PATCH_WRITES = 4;
const PENDING = 'graphdock.dev/pending';

let operator: RunningOperator;
let listenerId: string;
let apiKubeconfig: string;

beforeAll(async () => {
  const kubeconfig = await grantOperatorRbac(cp.cluster);
  apiKubeconfig = await cp.cluster.userKubeconfig('graphdock-api');
  listenerId = await createListener(cp, 'crash', ['agents']);
  operator = await startOperatorProcess(kubeconfig, {
    computeId: 'crash',
    identity: 'operator-crash',
    databaseUrl: cp.pgUrl,
    args: ['--orphan-grace-seconds', String(GRACE_SECONDS)],
  });
});
afterAll(async () => {
  if (process.env.OPERATOR_LOG_FILE)
    writeFileSync(process.env.OPERATOR_LOG_FILE, operator?.output() ?? '');
  await operator?.stop();
});

/** An api that dies (SIGKILL) just before its `killAt`th Kubernetes write (0: never). */
function killingApi(killAt: number) {
  return startServer({
    command: 'api',
    entry: join(REPO_ROOT, 'test', 'cluster', 'fault', 'killing-api.ts'),
    node: { binary: process.execPath, flags: ['--import', 'tsx'] },
    databaseUrl: cp.pgUrl,
    env: {
      KUBECONFIG: apiKubeconfig,
      GRAPHDOCK_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
      GRAPHDOCK_TEST_KILL_AT_WRITE: String(killAt),
    },
  });
}

/** Sends one request to an api set to die at write `killAt`; 'killed' when it died. */
async function requestKilledAt(
  killAt: number,
  path: string,
  method: string,
  body: unknown,
): Promise<number | 'killed'> {
  const api = await killingApi(killAt);
  const outcome = await fetch(`${api.url}${path}`, {
    method,
    headers: { 'x-api-key': BOOTSTRAP_KEY, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then(
    (res) => res.status,
    () => 'killed' as const,
  );
  if (outcome === 'killed') {
    await until(
      'the killed api to exit',
      async () => api.process.signalCode,
      (signal) => signal === 'SIGKILL',
      10_000,
    );
  } else await api.stop();
  return outcome;
}

interface Meta {
  name: string;
  uid: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  ownerReferences?: { kind: string; name: string; uid: string }[];
}
interface Census {
  ghosts: string[];
  orphans: string[];
}

/**
 * Ghosts: deployments a reader could meet that are not whole (still pending, or whose latest
 * revision or its Secret is missing). Orphans: revisions no deployment points at that are still
 * pending, or whose deployment is gone; Secrets with no owner, or whose owner is gone.
 */
async function census(): Promise<Census> {
  const get = async <T>(what: string, selector?: string) =>
    (
      await cp.kubectlJson<{ items: T[] }>([
        'get',
        what,
        '-n',
        'agents',
        ...(selector ? ['-l', selector] : []),
      ])
    ).items;
  const deployments = await get<{ metadata: Meta; spec: { latest_revision: { id: string } } }>(
    'agentdeployments',
  );
  const revisions = await get<{ metadata: Meta; spec: { deployment_id: string } }>(
    'agentrevisions',
  );
  const secrets = await get<{ metadata: Meta }>('secrets', 'graphdock.dev/revision-id');
  const revisionUids = new Set(revisions.map((r) => r.metadata.uid));
  const secretNames = new Set(secrets.map((s) => s.metadata.name));
  const byName = new Map(deployments.map((d) => [d.metadata.name, d]));
  const ghosts = deployments
    .filter(
      (d) =>
        d.metadata.annotations?.[PENDING] !== undefined ||
        !revisions.some((r) => r.metadata.name === d.spec.latest_revision.id) ||
        !secretNames.has(`${d.spec.latest_revision.id}-secrets`),
    )
    .map((d) => `deployment ${d.metadata.name}`);
  const orphans = [
    ...revisions
      .filter((r) => {
        const owner = byName.get(r.spec.deployment_id);
        if (!owner) return true;
        return (
          r.metadata.annotations?.[PENDING] !== undefined &&
          owner.spec.latest_revision.id !== r.metadata.name
        );
      })
      .map((r) => `revision ${r.metadata.name}`),
    ...secrets
      .filter((s) => !s.metadata.ownerReferences?.some((o) => revisionUids.has(o.uid)))
      .map((s) => `secret ${s.metadata.name}`),
  ];
  return { ghosts, orphans };
}

const orphanLines = (text: string) =>
  operator
    .output()
    .split('\n')
    .filter((line) => line.includes('orphan:') && line.includes(text));

describe('an api killed between writes', () => {
  it('SIGKILL before each write of a create and of a PATCH: N kills, 0 orphans, 0 ghosts', async () => {
    let kills = 0;
    // Create: killed before write n leaves the first n-1 writes; none of them commits.
    for (let n = 1; n <= CREATE_WRITES; n++) {
      const outcome = await requestKilledAt(
        n,
        '/v2/deployments',
        'POST',
        deploymentRequest(`crash-create-${n}`, listenerId, 'agents'),
      );
      expect(outcome, `create killed at write ${n}`).toBe('killed');
      kills++;
      // Nothing of an unfinished create is visible.
      const listed = await json<{ resources: { name: string }[] }>(cp, '/v2/deployments?limit=100');
      expect(listed.resources.map((d) => d.name)).not.toContain(`crash-create-${n}`);
    }
    // The same entry point with no kill completes.
    expect(
      await requestKilledAt(
        0,
        '/v2/deployments',
        'POST',
        deploymentRequest('crash-create-whole', listenerId, 'agents'),
      ),
    ).toBe(201);

    // PATCH (new image and secrets) of a deployment made by a healthy api.
    const base = await createDeployment(cp, deploymentRequest('crash-patch', listenerId, 'agents'));
    const patchBody = (n: number) => ({
      source_revision_config: { image_uri: `registry.local/agent:patch-${n}` },
      secrets: [{ name: 'OPENAI_API_KEY', value: `sk-patch-${n}` }],
    });
    for (let n = 1; n <= PATCH_WRITES; n++) {
      const outcome = await requestKilledAt(n, `/v2/deployments/${base.id}`, 'PATCH', patchBody(n));
      expect(outcome, `PATCH killed at write ${n}`).toBe('killed');
      kills++;
      // Whatever the deployment points at exists, with its Secret.
      const read = await json<DeploymentBody>(cp, `/v2/deployments/${base.id}`);
      await json(cp, `/v2/deployments/${base.id}/revisions/${read.latest_revision_id}`);
    }
    // The 4th kill left a committed revision still marked; this PATCH clears that mark first.
    expect(
      await requestKilledAt(0, `/v2/deployments/${base.id}`, 'PATCH', patchBody(PATCH_WRITES + 1)),
    ).toBe(200);
    expect(kills).toBe(CREATE_WRITES + PATCH_WRITES);

    // The operator removes what the kills left once the grace period has passed.
    const settled = await until(
      '0 orphans and 0 ghosts',
      census,
      (c) => c.orphans.length === 0 && c.ghosts.length === 0,
      GRACE_SECONDS * 1000 + 90_000,
    );
    console.log(
      `${kills} kills, ${settled.orphans.length} orphans, ${settled.ghosts.length} ghosts`,
    );

    const names = (
      await json<{ resources: { name: string }[] }>(cp, '/v2/deployments?limit=100')
    ).resources
      .map((d) => d.name)
      .sort();
    expect(names).toEqual(['crash-create-whole', 'crash-patch']);
    // Killed before its 4th write (the mark on the revision), the 4th PATCH had committed; the
    // earlier ones had not. Revision numbers stay distinct and gap-free.
    const revisions = await json<{
      resources: (RevisionBody & { source_revision_config: { image_uri: string } })[];
    }>(cp, `/v2/deployments/${base.id}/revisions`);
    expect(
      revisions.resources.map((r) => [r.revision_number, r.source_revision_config.image_uri]),
    ).toEqual([
      [3, `registry.local/agent:patch-${PATCH_WRITES + 1}`],
      [2, `registry.local/agent:patch-${PATCH_WRITES}`],
      [1, 'registry.local/agent:1'],
    ]);
    // Complete and working: both remaining deployments roll out their latest revision.
    for (const name of names) {
      const d = (
        await json<{ resources: DeploymentBody[] & { name: string }[] }>(
          cp,
          `/v2/deployments?name_contains=${name}`,
        )
      ).resources[0]!;
      await waitForRevision(cp, d, d.latest_revision_id, 'DEPLOYED');
    }

    // Each leftover logged once: 3 unfinished creates (killed at writes 2-4), 2 unfinished
    // PATCH revisions (killed at writes 2-3); a kill before the first write left nothing.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(orphanLines('whose create never finished')).toHaveLength(3);
    expect(orphanLines('its change never finished')).toHaveLength(2);
  });
});

describe('what older versions left', () => {
  it('a deployment with no revision and unowned revision Secrets are removed or adopted, each logged once', async () => {
    const ghostId = '0e0e0e0e-0000-4000-8000-00000000000a';
    const missingRevision = '0e0e0e0e-0000-4000-8000-00000000000b';
    const goneRevision = '0e0e0e0e-0000-4000-8000-00000000000c';
    const kept = await createDeployment(cp, deploymentRequest('old-kept', listenerId, 'agents'));
    const keptSecret = `${kept.latest_revision_id}-secrets`;
    const workspaceId = cp.workspaceId;
    const labels = (deploymentId: string, revisionId: string) => ({
      'graphdock.dev/workspace-id': workspaceId,
      'graphdock.dev/deployment-id': deploymentId,
      'graphdock.dev/revision-id': revisionId,
    });
    const secret = (name: string, l: Record<string, string>) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: 'agents', labels: l },
      stringData: { OPENAI_API_KEY: 'sk-left-behind' },
    });
    // An older api's create killed after its deployment: no revision, an unowned Secret.
    // An older api's PATCH killed after the Secret: no revision at all for it.
    // And an older api's create killed before the owner reference: the revision exists.
    await cp.cluster.kubectl(['delete', 'secret', keptSecret, '-n', 'agents']);
    await cp.cluster.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'graphdock.dev/v1alpha1',
            kind: 'AgentDeployment',
            metadata: {
              name: ghostId,
              namespace: 'agents',
              labels: {
                'graphdock.dev/workspace-id': workspaceId,
                'graphdock.dev/deployment-id': ghostId,
                'graphdock.dev/listener-id': listenerId,
              },
            },
            spec: {
              workspace_id: workspaceId,
              name: 'old-ghost',
              source: 'external_docker',
              source_config: {
                listener_id: listenerId,
                listener_config: { k8s_namespace: 'agents' },
                custom_url: null,
                resource_spec: null,
              },
              source_revision_config: { image_uri: 'registry.local/agent:1' },
              secret_names: ['OPENAI_API_KEY'],
              latest_revision: { id: missingRevision, number: 1 },
            },
          },
          secret(`${missingRevision}-secrets`, labels(ghostId, missingRevision)),
          secret(`${goneRevision}-secrets`, labels(kept.id, goneRevision)),
          secret(keptSecret, labels(kept.id, kept.latest_revision_id)),
        ],
      }),
    });
    const settled = await until(
      '0 orphans and 0 ghosts',
      census,
      (c) => c.orphans.length === 0 && c.ghosts.length === 0,
      GRACE_SECONDS * 1000 + 90_000,
    );
    expect(settled).toEqual({ ghosts: [], orphans: [] });
    const adopted = await cp.kubectlJson<{ metadata: Meta }>([
      'get',
      'secret',
      keptSecret,
      '-n',
      'agents',
    ]);
    expect(adopted.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'AgentRevision', name: kept.latest_revision_id }),
    ]);
    await waitForRevision(cp, kept, kept.latest_revision_id, 'DEPLOYED');
    await new Promise((r) => setTimeout(r, 3_000));
    expect(orphanLines('has no revision')).toHaveLength(1);
    expect(orphanLines(`Secret ${goneRevision}-secrets`)).toHaveLength(1);
    expect(orphanLines(`Secret of revision ${kept.latest_revision_id}`)).toHaveLength(1);
  });
});

// Here because this file runs an operator: the workload must agree with the revision and GET.
describe('a replica-only PATCH', () => {
  it('keeps CPU and memory in the revision, the running workload and GET', async () => {
    const created = await createDeployment(
      cp,
      deploymentRequest('replicas-only', listenerId, 'agents', {
        resource_spec: { min_scale: 1, max_scale: 1, cpu: 0.5, memory_mb: 256 },
      }),
    );
    await waitForRevision(cp, created, created.latest_revision_id, 'DEPLOYED');
    const patched = await json<DeploymentBody>(cp, `/v2/deployments/${created.id}`, {
      method: 'PATCH',
      json: { source_config: { resource_spec: { min_scale: 2, max_scale: 2 } } },
    });
    await waitForRevision(cp, created, patched.latest_revision_id, 'DEPLOYED');
    const workload = await cp.kubectlJson<{
      spec: {
        replicas: number;
        template: { spec: { containers: { resources: { requests: Record<string, string> } }[] } };
      };
    }>(['get', 'deployment', `gd-${created.id}`, '-n', 'agents']);
    expect(workload.spec.replicas).toBe(2);
    expect(workload.spec.template.spec.containers[0]!.resources.requests).toEqual({
      cpu: '500m',
      memory: '256Mi',
    });
    const read = await json<{ source_config: { resource_spec: unknown } }>(
      cp,
      `/v2/deployments/${created.id}`,
    );
    expect(read.source_config.resource_spec).toEqual({
      min_scale: 2,
      max_scale: 2,
      cpu: 0.5,
      memory_mb: 256,
    });
  });
});
