// The chart's wiring end to end: real `graphdock api` and `graphdock operator` processes run with
// exactly what the chart gives their pods (its Secrets as environment, tokens of its service
// accounts, namespaced RBAC for one watched namespace, the leader-election Role in the release
// namespace) and carry a deployment to DEPLOYED. A missing permission in the chart fails this.
// The namespaced-mode ClusterRoles hold only Listener rules, so both processes must list and
// watch per namespace (GRAPHDOCK_WATCH_NAMESPACES, which the chart sets on both pods).
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
/** An api told about more namespaces than its RBAC covers (a misconfiguration). */
let overreachingApi: RunningServer;
let operator: RunningOperator;
let watchNamespaces: Record<'api' | 'operator', string | undefined>;
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

/** The value the chart gives a component's container for an environment variable. */
async function podEnv(deployment: string, name: string): Promise<string | undefined> {
  const env = JSON.parse(
    await cluster.kubectl([
      '-n',
      NS,
      'get',
      'deployment',
      deployment,
      '-o',
      'jsonpath={.spec.template.spec.containers[0].env}',
    ]),
  ) as { name: string; value?: string }[];
  return env.find((e) => e.name === name)?.value;
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
  watchNamespaces = {
    api: await podEnv('gd-graphdock-api', 'GRAPHDOCK_WATCH_NAMESPACES'),
    operator: await podEnv('gd-graphdock-operator', 'GRAPHDOCK_WATCH_NAMESPACES'),
  };
  const apiEnv = {
    ...bootstrap,
    DATABASE_URL: database.DATABASE_URL,
    KUBECONFIG: await serviceAccountKubeconfig('gd-graphdock-api'),
  };
  api = await startServer({
    command: 'api',
    env: { ...apiEnv, GRAPHDOCK_WATCH_NAMESPACES: watchNamespaces.api },
  });
  overreachingApi = await startServer({
    command: 'api',
    env: { ...apiEnv, GRAPHDOCK_WATCH_NAMESPACES: 'agents,elsewhere' },
  });
  // The operator's pod: its database Secret, its service account, the Lease in the release
  // namespace (the chart sets POD_NAMESPACE; here the flag says the same).
  const operatorDatabase = await secretData('gd-graphdock-operator-database');
  operator = await startOperatorProcess(await serviceAccountKubeconfig('gd-graphdock-operator'), {
    computeId: COMPUTE_ID,
    identity: 'helm-operator-0',
    databaseUrl: operatorDatabase.GRAPHDOCK_OPERATOR_DATABASE_URL,
    args: ['--leader-election-namespace', NS],
    env: { GRAPHDOCK_WATCH_NAMESPACES: watchNamespaces.operator ?? '' },
  });
});

afterAll(async () => {
  await operator?.stop();
  await api?.stop();
  await overreachingApi?.stop();
  await cluster?.stop();
  await postgres?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const http = (path: string, method = 'GET', json?: unknown, server = api) =>
  fetch(`${server.url}${path}`, {
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

interface Created {
  id: string;
  latest_revision_id: string;
}

const revisionStatus = async (deploymentId: string, revisionId: string) => {
  const res = await http(`/v2/deployments/${deploymentId}/revisions/${revisionId}`);
  return ((await res.json()) as { status: string }).status;
};

/** Informer failures the apiserver's RBAC caused (a 429 while it starts is not one). */
const refusedWatches = () =>
  operator
    .output()
    .split('\n')
    .filter((line) => line.includes('watch failed') && /403|forbidden/i.test(line));

const kubectlNames = async (namespace: string, kinds: string) =>
  (await cluster.kubectl(['-n', namespace, 'get', kinds, '-o', 'name'])).trim();

describe("graphdock api and operator with the chart's Secrets and service accounts", () => {
  let listenerId: string;
  let deployment: Created;

  it('the chart limits both pods to its watchNamespaces; their ClusterRoles hold no namespaced reads', async () => {
    expect(watchNamespaces).toEqual({ api: 'agents', operator: 'agents' });
    for (const sa of ['gd-graphdock-api', 'gd-graphdock-operator']) {
      const as = `--as=system:serviceaccount:${NS}:${sa}`;
      const cannot = cluster.kubectl([
        'auth',
        'can-i',
        'list',
        'agentdeployments.graphdock.dev',
        '--all-namespaces',
        as,
      ]);
      await expect(cannot).rejects.toThrow(/no$/);
    }
  });

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

  it('a deployment in the watched namespace reaches DEPLOYED; PATCH rolls a new revision', async () => {
    const created = await http(
      '/v2/deployments',
      'POST',
      deploymentBody(listenerId, 'a', 'agents'),
    );
    expect(created.status, await created.clone().text()).toBe(201);
    deployment = (await created.json()) as Created;
    await until(
      'revision 1 DEPLOYED',
      () => revisionStatus(deployment.id, deployment.latest_revision_id),
      (s) => s === 'DEPLOYED',
      120_000,
    );
    const list = (await (await http('/v2/deployments')).json()) as { resources: { id: string }[] };
    expect(list.resources.map((d) => d.id)).toEqual([deployment.id]);

    const patched = await http(`/v2/deployments/${deployment.id}`, 'PATCH', {
      source_revision_config: { image_uri: 'registry.local/agent:2' },
    });
    expect(patched.status, await patched.clone().text()).toBe(200);
    const second = (await patched.json()) as { latest_revision_id: string };
    expect(second.latest_revision_id).not.toBe(deployment.latest_revision_id);
    await until(
      'revision 2 DEPLOYED',
      () => revisionStatus(deployment.id, second.latest_revision_id),
      (s) => s === 'DEPLOYED',
      120_000,
    );
    // Its informers listed and watched per namespace: no 403 from a cluster-wide watch.
    expect(refusedWatches()).toEqual([]);
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

  it('a deployment outside the watched namespaces is refused with 422 and leaves nothing there', async () => {
    const res = await http('/v2/deployments', 'POST', deploymentBody(listenerId, 'b', 'elsewhere'));
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: { loc: string[]; msg: string }[] };
    expect(body.detail[0]!.loc).toEqual([
      'body',
      'source_config',
      'listener_config',
      'k8s_namespace',
    ]);
    expect(body.detail[0]!.msg).toContain(
      "Namespace 'elsewhere' is not managed by this control plane",
    );
    expect(body.detail[0]!.msg).toContain('agents');
    expect(await kubectlNames('elsewhere', 'agentdeployments,agentrevisions,secrets')).toBe('');
  });

  it('a Kubernetes 403 (no RBAC in the namespace) answers 403 naming the namespace and permission', async () => {
    const res = await http(
      '/v2/deployments',
      'POST',
      deploymentBody(listenerId, 'c', 'elsewhere'),
      overreachingApi,
    );
    const text = await res.text();
    expect(res.status, text).toBe(403);
    const detail = (JSON.parse(text) as { detail: string }).detail;
    expect(detail).toContain("create agentdeployments.graphdock.dev in namespace 'elsewhere'");
    expect(detail).toContain('missing RBAC permission');
    expect(await kubectlNames('elsewhere', 'agentdeployments,agentrevisions,secrets')).toBe('');
    // Listing merges per-namespace lists; the namespace without a Role is named too.
    const list = await http('/v2/deployments', 'GET', undefined, overreachingApi);
    expect(list.status).toBe(403);
    expect(((await list.json()) as { detail: string }).detail).toContain(
      "list agentdeployments.graphdock.dev in namespace 'elsewhere'",
    );
  });

  it('the operator ignores deployments in namespaces it does not watch and says so on the listener', async () => {
    // Placed behind the api's back (kubectl as admin), on this operator's listener.
    const stray = JSON.parse(
      await cluster.kubectl(['-n', 'agents', 'get', 'agd', deployment.id, '-o', 'json']),
    ) as { spec: Record<string, unknown>; metadata: { labels: Record<string, string> } };
    const strayId = '00000000-0000-4000-8000-00000000beef';
    const manifest = {
      apiVersion: 'graphdock.dev/v1alpha1',
      kind: 'AgentDeployment',
      metadata: {
        name: strayId,
        namespace: 'elsewhere',
        labels: { ...stray.metadata.labels, 'graphdock.dev/deployment-id': strayId },
      },
      spec: {
        ...stray.spec,
        source_config: {
          ...(stray.spec.source_config as object),
          listener_config: { k8s_namespace: 'elsewhere' },
        },
      },
    };
    await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
    const degraded = await until(
      'listener Degraded=True',
      async () => {
        const listeners = JSON.parse(
          await cluster.kubectl(['get', 'listeners.graphdock.dev', '-o', 'json']),
        ) as {
          items: {
            status?: {
              conditions?: { type: string; status: string; reason: string; message: string }[];
            };
          }[];
        };
        return listeners.items
          .flatMap((l) => l.status?.conditions ?? [])
          .find((c) => c.type === 'Degraded');
      },
      (c) => c?.status === 'True',
      60_000,
    );
    expect(degraded?.reason).toBe('NamespacesNotWatched');
    expect(degraded?.message).toContain('Namespaces elsewhere of this listener are not watched');
    // A few heartbeats later: untouched (no finalizer, no status, no workload), operator healthy.
    await new Promise((r) => setTimeout(r, 6_000));
    const after = JSON.parse(
      await cluster.kubectl(['-n', 'elsewhere', 'get', 'agd', strayId, '-o', 'json']),
    ) as { metadata: { finalizers?: string[] }; status?: unknown };
    expect(after.metadata.finalizers ?? []).toEqual([]);
    expect(after.status).toBeUndefined();
    expect(await kubectlNames('elsewhere', 'deployments')).toBe('');
    expect(operator.process.exitCode).toBeNull();
    expect((await fetch(`${operator.url}/healthz`)).status).toBe(200);
    expect(refusedWatches()).toEqual([]);
    await cluster.kubectl(['-n', 'elsewhere', 'delete', 'agd', strayId]);
  });

  it('a listener in use cannot be deleted or lose the namespace its deployments run in (409)', async () => {
    const del = await http(`/v2/listeners/${listenerId}`, 'DELETE');
    expect(del.status).toBe(409);
    const delDetail = ((await del.json()) as { detail: string }).detail;
    expect(delDetail).toContain(`Listener ID ${listenerId} cannot be deleted`);
    expect(delDetail).toContain(deployment.id);

    const narrow = await http(`/v2/listeners/${listenerId}`, 'PATCH', {
      compute_config: { k8s_namespaces: ['elsewhere'] },
    });
    expect(narrow.status).toBe(409);
    expect(((await narrow.json()) as { detail: string }).detail).toContain(
      `Namespace(s) 'agents' cannot be removed from listener ID ${listenerId}`,
    );
    // Dropping a namespace nobody uses is fine.
    const unused = await http(`/v2/listeners/${listenerId}`, 'PATCH', {
      compute_config: { k8s_namespaces: ['agents'] },
    });
    expect(unused.status, await unused.clone().text()).toBe(200);
    // The listener and the deployment are as they were: still served, still DEPLOYED.
    const one = (await (await http(`/v2/deployments/${deployment.id}`)).json()) as {
      status: string;
    };
    expect(one.status).toBe('READY');
  });

  it('deleting the deployment removes what the operator created; then the listener can go', async () => {
    expect(await kubectlNames('agents', 'deployments')).toContain('deployment.apps/');
    expect((await http(`/v2/deployments/${deployment.id}`, 'DELETE')).status).toBe(204);
    // A deployment being deleted no longer holds its listener.
    const del = await http(`/v2/listeners/${listenerId}`, 'DELETE');
    expect(del.status, await del.clone().text()).toBe(204);
    await until(
      'agent Deployments gone from agents',
      () => kubectlNames('agents', 'deployments'),
      (out) => out === '',
      120_000,
    );
    expect(await kubectlNames('agents', 'agentdeployments')).toBe('');
  });
});
