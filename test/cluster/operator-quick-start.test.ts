import { writeFileSync } from 'node:fs';
// The spec's quick-start flow with the operator running: create a deployment through the REST
// API, poll its latest revision until DEPLOYED, PATCH it, and see the new revision take over.
import { randomUUID } from 'node:crypto';
import type { V1EnvVar } from '@kubernetes/client-node';
import { Client as LangSmithClient } from 'langsmith';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseName } from '../../operator/index.js';
import { useControlPlane } from '../support/control-plane.js';
import {
  grantOperatorRbac,
  startOperatorProcess,
  type RunningOperator,
} from '../support/operator.js';
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

const cp = useControlPlane({ namespaces: ['agents', 'elsewhere'] });
let operator: RunningOperator;
let listenerId: string;

beforeAll(async () => {
  const kubeconfig = await grantOperatorRbac(cp.cluster);
  listenerId = await createListener(cp, 'cluster-a', ['agents']);
  operator = await startOperatorProcess(kubeconfig, {
    computeId: 'cluster-a',
    identity: 'operator-a',
    databaseUrl: cp.pgUrl,
    // The pods never run here (kwok); the URL is what their trace endpoint is made from.
    env: { GRAPHDOCK_CONTROL_PLANE_URL: cp.url },
  });
});
afterAll(async () => {
  if (process.env.OPERATOR_LOG_FILE)
    writeFileSync(process.env.OPERATOR_LOG_FILE, operator?.output() ?? '');
  await operator?.stop();
});

async function databaseExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: cp.pgUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return (rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

describe('quick start', () => {
  let deployment: DeploymentBody;

  it('a new deployment reaches DEPLOYED with its database, Secret, Deployment, Service and PDB', async () => {
    deployment = await createDeployment(
      cp,
      deploymentRequest('quick-start', listenerId, 'agents', {
        resource_spec: { min_scale: 2, max_scale: 2, cpu: 0.5, memory_mb: 256 },
      }),
    );
    const revision = await waitForRevision(
      cp,
      deployment,
      deployment.latest_revision_id,
      'DEPLOYED',
    );
    expect(revision.revision_number).toBe(1);
    const read = await json<DeploymentBody>(cp, `/v2/deployments/${deployment.id}`);
    expect(read).toMatchObject({
      status: 'READY',
      active_revision_id: deployment.latest_revision_id,
    });

    const name = `gd-${deployment.id}`;
    const workload = await cp.kubectlJson<{
      spec: {
        replicas: number;
        template: {
          spec: {
            terminationGracePeriodSeconds: number;
            containers: {
              image: string;
              readinessProbe: { httpGet: { path: string } };
              livenessProbe: { httpGet: { path: string } };
              resources: { requests: Record<string, string> };
              envFrom: { secretRef: { name: string } }[];
            }[];
          };
        };
      };
      status: { availableReplicas: number };
      metadata: { ownerReferences: { kind: string; name: string }[] };
    }>(['get', 'deployment', name, '-n', 'agents']);
    const container = workload.spec.template.spec.containers[0]!;
    expect(workload.spec.replicas).toBe(2);
    expect(workload.status.availableReplicas).toBe(2);
    expect(container.image).toBe('registry.local/agent:1');
    expect(container.readinessProbe.httpGet.path).toBe('/ok?check_db=1');
    expect(container.livenessProbe.httpGet.path).toBe('/ok');
    expect(container.resources.requests).toEqual({ cpu: '500m', memory: '256Mi' });
    // Time for the runtime's 180 s grace for its runs, not Kubernetes' default 30 s.
    expect(workload.spec.template.spec.terminationGracePeriodSeconds).toBe(205);
    expect(workload.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'AgentDeployment', name: deployment.id }),
    ]);

    const secret = await cp.kubectlJson<{ data: Record<string, string> }>([
      'get',
      'secret',
      container.envFrom[0]!.secretRef.name,
      '-n',
      'agents',
    ]);
    const decoded = (k: string) => Buffer.from(secret.data[k] ?? '', 'base64').toString();
    expect(decoded('OPENAI_API_KEY')).toBe('sk-test');
    expect(decoded('DATABASE_URL')).toContain(`/${databaseName(deployment.id)}`);
    // The URL works: the deployment's own role can connect to its own database.
    const client = new pg.Client({ connectionString: decoded('DATABASE_URL') });
    await client.connect();
    expect((await client.query('SELECT current_user AS u')).rows[0]).toEqual({
      u: databaseName(deployment.id),
    });
    await client.end();

    await cp.cluster.kubectl(['get', 'service', name, '-n', 'agents']);
    await cp.cluster.kubectl(['get', 'poddisruptionbudget', name, '-n', 'agents']);
    // min_scale == max_scale: no autoscaler.
    await expect(cp.cluster.kubectl(['get', 'hpa', name, '-n', 'agents'])).rejects.toThrow(
      /NotFound/,
    );
  });

  it('PATCH makes a new revision that reaches DEPLOYED; the old one is no longer active', async () => {
    const first = deployment.latest_revision_id;
    const patched = await json<DeploymentBody>(cp, `/v2/deployments/${deployment.id}`, {
      method: 'PATCH',
      json: {
        source_revision_config: { image_uri: 'registry.local/agent:2' },
        source_config: { resource_spec: { min_scale: 1, max_scale: 3, cpu: 0.25, memory_mb: 256 } },
        secrets: [{ name: 'ANTHROPIC_API_KEY', value: 'k2' }],
      },
    });
    expect(patched.latest_revision_id).not.toBe(first);
    const second = await waitForRevision(cp, deployment, patched.latest_revision_id, 'DEPLOYED');
    expect(second.revision_number).toBe(2);
    const read = await until(
      'active revision moves',
      () => json<DeploymentBody>(cp, `/v2/deployments/${deployment.id}`),
      (d) => d.active_revision_id === patched.latest_revision_id,
    );
    expect(read.status).toBe('READY');
    const revisions = await json<{ resources: RevisionBody[] }>(
      cp,
      `/v2/deployments/${deployment.id}/revisions`,
    );
    expect(revisions.resources.map((r) => [r.revision_number, r.status])).toEqual([
      [2, 'DEPLOYED'],
      [1, 'DEPLOYED'],
    ]);
    const image = await cp.cluster.kubectl([
      'get',
      'deployment',
      `gd-${deployment.id}`,
      '-n',
      'agents',
      '-o',
      'jsonpath={.spec.template.spec.containers[0].image}',
    ]);
    expect(image).toBe('registry.local/agent:2');
    // The new revision's secrets replace the old ones (a dropped secret is gone).
    const env = await cp.kubectlJson<{ data: Record<string, string> }>([
      'get',
      'secret',
      `gd-${deployment.id}-env`,
      '-n',
      'agents',
    ]);
    expect(Object.keys(env.data).sort()).toEqual(['ANTHROPIC_API_KEY', 'DATABASE_URL']);
    // min_scale < max_scale: an autoscaler now owns the replica count.
    const hpa = await cp.kubectlJson<{ spec: { minReplicas: number; maxReplicas: number } }>([
      'get',
      'hpa',
      `gd-${deployment.id}`,
      '-n',
      'agents',
    ]);
    expect(hpa.spec).toMatchObject({ minReplicas: 1, maxReplicas: 3 });
  });

  it("pods trace into the api's ingest with the deployment's own key, rotated per revision", async () => {
    const workload = await cp.kubectlJson<{
      spec: { template: { spec: { containers: { env: V1EnvVar[] }[] } } };
    }>(['get', 'deployment', `gd-${deployment.id}`, '-n', 'agents']);
    const env = workload.spec.template.spec.containers[0]!.env;
    const secretName = `gd-${deployment.id}-traces`;
    expect(env).toEqual(
      expect.arrayContaining([
        { name: 'GRAPHDOCK_TRACES_ENDPOINT', value: `${cp.url}/api/v1` },
        {
          name: 'GRAPHDOCK_TRACES_API_KEY',
          valueFrom: { secretKeyRef: { name: secretName, key: 'key' } },
        },
        { name: 'GRAPHDOCK_DEPLOYMENT_NAME', value: 'quick-start' },
      ]),
    );
    const secret = await cp.kubectlJson<{
      data: Record<string, string>;
      metadata: { ownerReferences: { kind: string; name: string }[] };
    }>(['get', 'secret', secretName, '-n', 'agents']);
    expect(secret.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'AgentDeployment', name: deployment.id }),
    ]);
    const decoded = (k: string) => Buffer.from(secret.data[k] ?? '', 'base64').toString();
    // Revision 2 rotated the key; revision 1's pods may still send the previous one.
    const [current, previous] = [decoded('key'), decoded('previous')];
    expect(current).toMatch(/^gdt\./);
    expect(previous).toMatch(/^gdt\./);
    expect(previous).not.toBe(current);

    // What the runtime does: the official SDK sends a run with the key, into the project.
    const ids: string[] = [];
    for (const key of [current, previous]) {
      const client = new LangSmithClient({ apiUrl: `${cp.url}/api/v1`, apiKey: key });
      const id = randomUUID();
      ids.push(id);
      await client.createRun({
        id,
        name: 'agent',
        run_type: 'chain',
        inputs: { q: 1 },
        project_name: 'quick-start',
        start_time: Date.now(),
      });
      await client.awaitPendingTraceBatches();
      expect((await client.readRun(id)).id).toBe(id);
    }
    // Stored in the deployment's workspace: its ordinary keys read the runs too.
    const run = await json<{ session_id: string }>(cp, `/api/v1/runs/${ids[0]}`);
    const projects = await json<{ id: string }[]>(cp, `/api/v1/sessions?name=quick-start`);
    expect(projects.map((p) => p.id)).toEqual([run.session_id]);
    // Trace routes only, and only the keys in the Secret.
    const deployments = await cp.http('/v2/deployments', { key: current });
    expect(deployments.status).toBe(403);
    const forged = await cp.http(`/api/v1/runs/${ids[0]}`, { key: `${current.slice(0, -4)}AAAA` });
    expect(forged.status).toBe(401);
  });

  it('kubectl wait --for=condition=Ready works on the AgentDeployment and its revision', async () => {
    await cp.cluster.kubectl([
      'wait',
      '--for=condition=Ready',
      '--timeout=60s',
      '-n',
      'agents',
      `agentdeployment/${deployment.id}`,
      `agentrevision/${deployment.latest_revision_id}`,
    ]);
    const out = await cp.cluster.kubectl(['get', 'agd', deployment.id, '-n', 'agents']);
    expect(out).toMatch(/READY\s/);
    expect(out).toContain(`gd-${deployment.id}.agents.svc.cluster.local`);
  });

  it('a newer revision supersedes one that never deployed (SKIPPED)', async () => {
    // Revision 3 asks for more CPU than any fake node has: its pods stay Pending (DEPLOYING).
    const stuck = await json<DeploymentBody>(cp, `/v2/deployments/${deployment.id}`, {
      method: 'PATCH',
      json: {
        source_revision_config: { image_uri: 'registry.local/agent:3' },
        source_config: { resource_spec: { min_scale: 1, max_scale: 3, cpu: 64, memory_mb: 256 } },
      },
    });
    await waitForRevision(cp, deployment, stuck.latest_revision_id, 'DEPLOYING');
    const fixed = await json<DeploymentBody>(cp, `/v2/deployments/${deployment.id}`, {
      method: 'PATCH',
      json: {
        source_revision_config: { image_uri: 'registry.local/agent:4' },
        source_config: { resource_spec: { min_scale: 1, max_scale: 3, cpu: 0.25, memory_mb: 256 } },
      },
    });
    await waitForRevision(cp, deployment, fixed.latest_revision_id, 'DEPLOYED');
    const skipped = await json<RevisionBody>(
      cp,
      `/v2/deployments/${deployment.id}/revisions/${stuck.latest_revision_id}`,
    );
    expect(skipped).toMatchObject({ status: 'SKIPPED', revision_number: 3 });
    expect(skipped.status_message).toContain('Superseded by revision 4');
  });

  it('listener status shows the operator version and a recent heartbeat', async () => {
    const listeners = await cp.kubectlJson<{
      items: {
        spec: { compute_id: string };
        status?: { operatorVersion?: string; lastHeartbeatTime?: string };
      }[];
    }>(['get', 'listeners']);
    const mine = listeners.items.find((l) => l.spec.compute_id === 'cluster-a');
    expect(mine?.status?.operatorVersion).toMatch(/^\d+\.\d+\.\d+/);
    const age = Date.now() - Date.parse(mine?.status?.lastHeartbeatTime ?? '');
    expect(age).toBeLessThan(30_000);
  });

  it('another compute id and another namespace are left alone', async () => {
    const otherListener = await createListener(cp, 'cluster-b', ['elsewhere']);
    const other = await createDeployment(
      cp,
      deploymentRequest('not-mine', otherListener, 'elsewhere'),
    );
    // Give the operator time to (wrongly) act, then check it did not.
    await new Promise((r) => setTimeout(r, 3_000));
    const rev = await json<RevisionBody>(
      cp,
      `/v2/deployments/${other.id}/revisions/${other.latest_revision_id}`,
    );
    expect(rev.status).toBe('CREATING');
    await expect(
      cp.cluster.kubectl(['get', 'deployment', `gd-${other.id}`, '-n', 'elsewhere']),
    ).rejects.toThrow(/NotFound/);
  });

  it('metrics count reconciles and expose the queue depth', async () => {
    expect((await fetch(`${operator.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${operator.url}/readyz`)).status).toBe(200);
    const text = await operator.metrics();
    expect(text).toMatch(
      /controller_runtime_reconcile_total\{controller="agentdeployment",result="success"\} [1-9]/,
    );
    expect(text).toContain('controller_runtime_reconcile_time_seconds_bucket');
    expect(text).toContain('workqueue_depth{name="agentdeployment"}');
    expect(text).toMatch(/leader_election_master_status\{name="[^"]+"\} 1/);
  });

  it('deleting the deployment removes what it created and drops its database', async () => {
    expect(await databaseExists(databaseName(deployment.id))).toBe(true);
    const res = await cp.http(`/v2/deployments/${deployment.id}`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    await until(
      'AgentDeployment gone',
      () => cp.cluster.kubectl(['get', 'agd', '-n', 'agents', '-o', 'name']),
      (out) => !out.includes(deployment.id),
    );
    for (const kind of ['deployment', 'service', 'pdb', 'hpa', 'secret'])
      expect(
        await cp.cluster.kubectl(['get', kind, '-n', 'agents', '-o', 'name']),
        kind,
      ).not.toContain(`gd-${deployment.id}`);
    expect(await databaseExists(databaseName(deployment.id))).toBe(false);
    const events = await cp.cluster.kubectl(['get', 'events', '-n', 'agents']);
    expect(events).toContain('Deployed');
    expect(events).toContain('CleanedUp');
  });

  it('a Retain policy keeps the database of a deleted deployment', async () => {
    const kept = await createDeployment(cp, deploymentRequest('kept-db', listenerId, 'agents'));
    await waitForRevision(cp, kept, kept.latest_revision_id, 'DEPLOYED');
    await cp.cluster.kubectl([
      'annotate',
      'agd',
      kept.id,
      '-n',
      'agents',
      'graphdock.dev/database-retain-policy=Retain',
    ]);
    expect((await cp.http(`/v2/deployments/${kept.id}`, { method: 'DELETE' })).status).toBe(204);
    await until(
      'AgentDeployment gone',
      () => cp.cluster.kubectl(['get', 'agd', '-n', 'agents', '-o', 'name']),
      (out) => !out.includes(kept.id),
    );
    expect(
      await cp.cluster.kubectl(['get', 'deployment', '-n', 'agents', '-o', 'name']),
    ).not.toContain(kept.id);
    expect(await databaseExists(databaseName(kept.id))).toBe(true);
  });
});
