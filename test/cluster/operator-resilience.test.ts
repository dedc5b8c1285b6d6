// The operator when things go wrong: a rollout that never becomes ready, no database server,
// the leader dying, and the API server restarting in the middle of reconciling.
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useControlPlane } from '../support/control-plane.js';
import {
  grantOperatorRbac,
  LEASE_NAMESPACE,
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

const cp = useControlPlane({ namespaces: ['agents', 'nodb'] });
const operators: RunningOperator[] = [];
let kubeconfig: string;
let listenerId: string;

const start = async (identity: string, computeId = 'main', withDatabase = true) => {
  const op = await startOperatorProcess(kubeconfig, {
    computeId,
    identity,
    databaseUrl: withDatabase ? cp.pgUrl : undefined,
    args: ['--progress-deadline-seconds', '5'],
  });
  operators.push(op);
  return op;
};

const leaseHolder = async (name = 'graphdock-operator-main') =>
  (
    await cp.cluster.kubectl([
      'get',
      'lease',
      name,
      '-n',
      LEASE_NAMESPACE,
      '-o',
      'jsonpath={.spec.holderIdentity}',
    ])
  ).trim();

beforeAll(async () => {
  kubeconfig = await grantOperatorRbac(cp.cluster);
  listenerId = await createListener(cp, 'main', ['agents']);
  await start('replica-a');
  await start('replica-b');
});
afterAll(async () => {
  if (process.env.OPERATOR_LOG_FILE)
    writeFileSync(process.env.OPERATOR_LOG_FILE, operators.map((o) => o.output()).join('\n----\n'));
  await Promise.all(operators.map((o) => o.stop('SIGKILL')));
});

describe('rollouts that fail', () => {
  it('a rollout whose pods never become Ready ends DEPLOY_FAILED after the progress deadline', async () => {
    // 64 CPUs fit no fake node (32 each): the pods stay Pending and the deadline (5 s) passes.
    const d = await createDeployment(
      cp,
      deploymentRequest('never-ready', listenerId, 'agents', {
        resource_spec: { min_scale: 1, max_scale: 1, cpu: 64, memory_mb: 256 },
      }),
    );
    const failed = await waitForRevision(cp, d, d.latest_revision_id, 'DEPLOY_FAILED', 120_000);
    expect(failed.status_message).toMatch(/progress deadline/i);
    const read = await json<DeploymentBody>(cp, `/v2/deployments/${d.id}`);
    expect(read.active_revision_id).toBeNull();
    const degraded = await cp.cluster.kubectl([
      'get',
      'agd',
      d.id,
      '-n',
      'agents',
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Degraded")].status}',
    ]);
    expect(degraded).toBe('True');

    // A fixed revision deploys, and the deployment becomes healthy again.
    const fixed = await json<DeploymentBody>(cp, `/v2/deployments/${d.id}`, {
      method: 'PATCH',
      json: { source_config: { resource_spec: { min_scale: 1, max_scale: 1, cpu: 0.5 } } },
    });
    await waitForRevision(cp, d, fixed.latest_revision_id, 'DEPLOYED', 120_000);
  });
});

describe('databases', () => {
  it('without a database server a deployment waits in AWAITING_DATABASE; POSTGRES_URI_CUSTOM needs none', async () => {
    const noDbListener = await createListener(cp, 'nodb', ['nodb']);
    await start('nodb-operator', 'nodb', false);
    const waiting = await createDeployment(cp, deploymentRequest('waits', noDbListener, 'nodb'));
    const revision = await waitForRevision(
      cp,
      waiting,
      waiting.latest_revision_id,
      'AWAITING_DEPLOY',
    );
    expect(revision.status_message).toMatch(/database/i);
    expect((await json<DeploymentBody>(cp, `/v2/deployments/${waiting.id}`)).status).toBe(
      'AWAITING_DATABASE',
    );

    const custom = 'postgres://someone:pw@db.example:5432/agentdb';
    const own = await createDeployment(
      cp,
      deploymentRequest('own-db', noDbListener, 'nodb', {
        secrets: [{ name: 'POSTGRES_URI_CUSTOM', value: custom }],
      }),
    );
    await waitForRevision(cp, own, own.latest_revision_id, 'DEPLOYED');
    expect((await json<DeploymentBody>(cp, `/v2/deployments/${own.id}`)).status).toBe('READY');
    const url = await cp.cluster.kubectl([
      'get',
      'secret',
      `gd-${own.id}-env`,
      '-n',
      'nodb',
      '-o',
      'jsonpath={.data.DATABASE_URL}',
    ]);
    expect(Buffer.from(url, 'base64').toString()).toBe(custom);
  });
});

describe('leader election', () => {
  it('one replica acts; when it is killed the other takes over within the lease time', async () => {
    const holder = await until(
      'a leader',
      () => leaseHolder(),
      (h) => h !== '',
    );
    const leader = operators.find((o) => o.identity === holder)!;
    const standby = operators.find(
      (o) => o.identity !== holder && o.identity.startsWith('replica'),
    )!;
    expect(await leader.metrics()).toMatch(
      /leader_election_master_status\{name="graphdock-operator-main"\} 1/,
    );
    expect(await standby.metrics()).toMatch(
      /leader_election_master_status\{name="graphdock-operator-main"\} 0/,
    );
    // Both are ready (caches synced); only the leader reconciles.
    expect((await fetch(`${standby.url}/readyz`)).status).toBe(200);
    expect(await standby.metrics()).not.toMatch(
      /controller_runtime_reconcile_total\{[^}]*\} [1-9]/,
    );

    const killedAt = Date.now();
    await leader.stop('SIGKILL');
    await until(
      'the standby holds the lease',
      () => leaseHolder(),
      (h) => h === standby.identity,
      30_000,
    );
    const takeoverMs = Date.now() - killedAt;
    // Lease duration 6 s, retry period 1 s: allow generous slack for a loaded machine.
    expect(takeoverMs).toBeLessThan(15_000);

    const d = await createDeployment(cp, deploymentRequest('after-failover', listenerId, 'agents'));
    await waitForRevision(cp, d, d.latest_revision_id, 'DEPLOYED');
    expect(await standby.metrics()).toMatch(/controller_runtime_reconcile_total\{[^}]*\} [1-9]/);
  });
});

describe('API server restart', () => {
  it('deployments created just before a restart converge to DEPLOYED afterwards', async () => {
    const created: DeploymentBody[] = [];
    for (let i = 0; i < 5; i++)
      created.push(
        await createDeployment(cp, deploymentRequest(`restart-${i}`, listenerId, 'agents')),
      );
    await cp.cluster.restartApiserver({ downMs: 2_000, crash: true });
    for (const d of created)
      await waitForRevision(cp, d, d.latest_revision_id, 'DEPLOYED', 120_000);

    // And the operator still follows changes after the restart (its watches reconnected).
    const patched = await json<DeploymentBody>(cp, `/v2/deployments/${created[0]!.id}`, {
      method: 'PATCH',
      json: { source_revision_config: { image_uri: 'registry.local/agent:after-restart' } },
    });
    const rev = await waitForRevision(cp, created[0]!, patched.latest_revision_id, 'DEPLOYED');
    expect(rev.revision_number).toBe(2);
    const all = await json<{ resources: RevisionBody[] }>(
      cp,
      `/v2/deployments/${created[0]!.id}/revisions`,
    );
    expect(all.resources.map((r) => r.status)).toEqual(['DEPLOYED', 'DEPLOYED']);
  });
});
