// The chart's wiring end to end: real `graphdock api` and `graphdock operator` processes run with
// exactly what the chart gives their pods (its Secrets as environment, tokens of its service
// accounts, namespaced RBAC for one watched namespace, the leader-election Role in the release
// namespace) and carry a deployment to DEPLOYED. A missing permission in the chart fails this.
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump, load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgresServer, type PostgresServer } from '../../common/db/index.js';
import { startOperatorProcess, type RunningOperator } from '../support/operator.js';
import { REPO_ROOT, startServer, type RunningServer } from '../support/server.js';
import { startCluster, type Cluster } from './index.js';
import { until } from './operator-helpers.js';

const CHART = join(REPO_ROOT, 'charts', 'graphdock');
const NS = 'graphdock';
const COMPUTE_ID = 'helm-e2e';

let cluster: Cluster;
let postgres: PostgresServer;
let api: RunningServer;
let operator: RunningOperator;
let dir: string;
let apiKey: string;

async function secretData(name: string): Promise<Record<string, string>> {
  const data = JSON.parse(
    await cluster.kubectl(['-n', NS, 'get', 'secret', name, '-o', 'jsonpath={.data}']),
  ) as Record<string, string>;
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
  );
}

/** The admin kubeconfig's cluster entry with a service account's token as the only user. */
async function serviceAccountKubeconfig(serviceAccount: string): Promise<string> {
  const token = (
    await cluster.kubectl(['-n', NS, 'create', 'token', serviceAccount, '--duration=1h'])
  ).trim();
  const admin = load(readFileSync(cluster.kubeconfigPath, 'utf8')) as {
    clusters: { name: string }[];
  };
  const clusterName = admin.clusters[0]!.name;
  const path = join(dir, `${serviceAccount}.kubeconfig`);
  writeFileSync(
    path,
    dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: admin.clusters,
      users: [{ name: serviceAccount, user: { token } }],
      contexts: [{ name: 'sa', context: { cluster: clusterName, user: serviceAccount } }],
      'current-context': 'sa',
    }),
  );
  return path;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'graphdock-helm-api-'));
  [cluster, postgres] = await Promise.all([
    startCluster({ nodes: 1 }),
    startPostgresServer({ dataDir: join(dir, 'pg'), ephemeral: true }),
  ]);
  for (const ns of ['agents', 'elsewhere']) await cluster.kubectl(['create', 'namespace', ns]);
  await cluster.helm(
    [
      'install',
      'gd',
      CHART,
      '--namespace',
      NS,
      '--create-namespace',
      '--set',
      `database.url=${postgres.url}`,
      '--set',
      `operator.database.adminUrl=${postgres.url}`,
      '--set',
      `operator.computeId=${COMPUTE_ID}`,
      '--set',
      'watchNamespaces={agents}',
      '--wait',
      '--timeout',
      '180s',
    ],
    { timeoutMs: 240_000 },
  );
  // The pod's environment: envFrom the bootstrap Secret, DATABASE_URL from the database Secret.
  const bootstrap = await secretData('gd-graphdock-bootstrap');
  const database = await secretData('gd-graphdock-database');
  apiKey = bootstrap.GRAPHDOCK_BOOTSTRAP_API_KEY!;
  api = await startServer({
    command: 'api',
    env: {
      ...bootstrap,
      DATABASE_URL: database.DATABASE_URL,
      KUBECONFIG: await serviceAccountKubeconfig('gd-graphdock-api'),
    },
  });
  // The operator's pod: its database Secret, its service account, the Lease in the release
  // namespace (the chart sets POD_NAMESPACE; here the flag says the same).
  const operatorDatabase = await secretData('gd-graphdock-operator-database');
  operator = await startOperatorProcess(await serviceAccountKubeconfig('gd-graphdock-operator'), {
    computeId: COMPUTE_ID,
    identity: 'helm-operator-0',
    databaseUrl: operatorDatabase.GRAPHDOCK_OPERATOR_DATABASE_URL,
    args: ['--leader-election-namespace', NS],
  });
});

afterAll(async () => {
  await operator?.stop();
  await api?.stop();
  await cluster?.stop();
  await postgres?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const http = (path: string, method = 'GET', json?: unknown) =>
  fetch(`${api.url}${path}`, {
    method,
    headers: {
      'x-api-key': apiKey,
      ...(json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });

const deploymentBody = (listenerId: string, name: string, namespace: string) => ({
  name,
  source: 'external_docker',
  source_config: {
    listener_id: listenerId,
    listener_config: { k8s_namespace: namespace },
    resource_spec: { min_scale: 1, max_scale: 1 },
  },
  source_revision_config: { image_uri: 'registry.local/agent:1' },
  secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-test' }],
});

describe("graphdock api and operator with the chart's Secrets and service accounts", () => {
  let listenerId: string;

  it('the generated bootstrap key authenticates; a wrong key does not', async () => {
    expect(apiKey).toMatch(/^gdk_/);
    const wrong = await fetch(`${api.url}/v2/listeners`, { headers: { 'x-api-key': 'nope' } });
    expect(wrong.status).toBe(401);
    const res = await http('/v2/listeners', 'POST', {
      compute_type: 'k8s',
      compute_id: COMPUTE_ID,
      compute_config: { k8s_namespaces: ['agents', 'elsewhere'] },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    listenerId = ((await res.json()) as { id: string }).id;
  });

  const revisionStatus = async (deploymentId: string, revisionId: string) => {
    const res = await http(`/v2/deployments/${deploymentId}/revisions/${revisionId}`);
    return ((await res.json()) as { status: string }).status;
  };

  it('a deployment in the watched namespace reaches DEPLOYED; PATCH rolls a new revision', async () => {
    const created = await http(
      '/v2/deployments',
      'POST',
      deploymentBody(listenerId, 'a', 'agents'),
    );
    expect(created.status, await created.clone().text()).toBe(201);
    const first = (await created.json()) as { id: string; latest_revision_id: string };
    await until(
      'revision 1 DEPLOYED',
      () => revisionStatus(first.id, first.latest_revision_id),
      (s) => s === 'DEPLOYED',
      120_000,
    );
    const list = (await (await http('/v2/deployments')).json()) as { resources: { id: string }[] };
    expect(list.resources.map((d) => d.id)).toContain(first.id);

    const patched = await http(`/v2/deployments/${first.id}`, 'PATCH', {
      source_revision_config: { image_uri: 'registry.local/agent:2' },
    });
    expect(patched.status, await patched.clone().text()).toBe(200);
    const second = (await patched.json()) as { latest_revision_id: string };
    expect(second.latest_revision_id).not.toBe(first.latest_revision_id);
    await until(
      'revision 2 DEPLOYED',
      () => revisionStatus(first.id, second.latest_revision_id),
      (s) => s === 'DEPLOYED',
      120_000,
    );
  });

  it('the operator leads through a Lease in the release namespace', async () => {
    const holder = await cluster.kubectl([
      '-n',
      NS,
      'get',
      'leases',
      '-o',
      'jsonpath={.items[*].spec.holderIdentity}',
    ]);
    expect(holder.split(' ')).toContain('helm-operator-0');
  });

  it('deleting the deployment removes what the operator created', async () => {
    const list = (await (await http('/v2/deployments')).json()) as { resources: { id: string }[] };
    const id = list.resources[0]!.id;
    const before = await cluster.kubectl(['-n', 'agents', 'get', 'deployments', '-o', 'name']);
    expect(before).toContain('deployment.apps/');
    expect((await http(`/v2/deployments/${id}`, 'DELETE')).status).toBe(204);
    await until(
      'agent Deployments gone from agents',
      () => cluster.kubectl(['-n', 'agents', 'get', 'deployments', '-o', 'name']),
      (out) => out.trim() === '',
      120_000,
    );
  });

  it('cannot write outside the watched namespaces, and leaves nothing behind there', async () => {
    const res = await http('/v2/deployments', 'POST', deploymentBody(listenerId, 'b', 'elsewhere'));
    expect(res.status).toBeGreaterThanOrEqual(400);
    const leftovers = await cluster.kubectl([
      '-n',
      'elsewhere',
      'get',
      'agentdeployments,agentrevisions,secrets',
      '-o',
      'name',
    ]);
    expect(leftovers.trim()).toBe('');
  });
});
