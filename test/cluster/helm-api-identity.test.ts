// The chart's wiring for the api, end to end: a real `graphdock api` process runs with exactly
// what the chart gives its pod (the bootstrap and database Secrets as environment, a token of the
// chart's api service account, namespaced RBAC for one watched namespace) and serves the
// control-plane flow. A missing permission in the chart's RBAC fails this test.
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump, load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgresServer, type PostgresServer } from '../../common/db/index.js';
import { REPO_ROOT, startServer, type RunningServer } from '../support/server.js';
import { startCluster, type Cluster } from './index.js';

const CHART = join(REPO_ROOT, 'charts', 'graphdock');
const NS = 'graphdock';

let cluster: Cluster;
let postgres: PostgresServer;
let api: RunningServer;
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

/** The admin kubeconfig's cluster entry with the service account's token as the only user. */
function serviceAccountKubeconfig(token: string): string {
  const admin = load(readFileSync(cluster.kubeconfigPath, 'utf8')) as {
    clusters: { name: string }[];
  };
  const clusterName = admin.clusters[0]!.name;
  const path = join(dir, 'api.kubeconfig');
  writeFileSync(
    path,
    dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: admin.clusters,
      users: [{ name: 'graphdock-api', user: { token } }],
      contexts: [{ name: 'api', context: { cluster: clusterName, user: 'graphdock-api' } }],
      'current-context': 'api',
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
      'watchNamespaces={agents}',
      '--wait',
      '--timeout',
      '180s',
    ],
    { timeoutMs: 240_000 },
  );
  const token = (
    await cluster.kubectl(['-n', NS, 'create', 'token', 'gd-graphdock-api', '--duration=1h'])
  ).trim();
  // The pod's environment: envFrom the bootstrap Secret, DATABASE_URL from the database Secret.
  const bootstrap = await secretData('gd-graphdock-bootstrap');
  const database = await secretData('gd-graphdock-database');
  apiKey = bootstrap.GRAPHDOCK_BOOTSTRAP_API_KEY!;
  api = await startServer({
    command: 'api',
    env: {
      ...bootstrap,
      DATABASE_URL: database.DATABASE_URL,
      KUBECONFIG: serviceAccountKubeconfig(token),
    },
  });
});

afterAll(async () => {
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

describe("graphdock api with the chart's Secrets and service account", () => {
  let listenerId: string;

  it('the generated bootstrap key authenticates; a wrong key does not', async () => {
    expect(apiKey).toMatch(/^gdk_/);
    const wrong = await fetch(`${api.url}/v2/listeners`, { headers: { 'x-api-key': 'nope' } });
    expect(wrong.status).toBe(401);
    const res = await http('/v2/listeners', 'POST', {
      compute_type: 'k8s',
      compute_id: 'default',
      compute_config: { k8s_namespaces: ['agents', 'elsewhere'] },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    listenerId = ((await res.json()) as { id: string }).id;
  });

  it('creates, lists, patches and deletes a deployment in the watched namespace', async () => {
    const created = await http(
      '/v2/deployments',
      'POST',
      deploymentBody(listenerId, 'a', 'agents'),
    );
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect(
      await cluster.kubectl(['-n', 'agents', 'get', 'agentdeployments', '-o', 'name']),
    ).toContain(id);

    const list = (await (await http('/v2/deployments')).json()) as { resources: { id: string }[] };
    expect(list.resources.map((d) => d.id)).toContain(id);

    const patched = await http(`/v2/deployments/${id}`, 'PATCH', {
      source_revision_config: { image_uri: 'registry.local/agent:2' },
    });
    expect(patched.status, await patched.clone().text()).toBe(200);
    const revisions = (await (await http(`/v2/deployments/${id}/revisions`)).json()) as {
      resources: unknown[];
    };
    expect(revisions.resources).toHaveLength(2);

    expect((await http(`/v2/deployments/${id}`, 'DELETE')).status).toBe(204);
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
