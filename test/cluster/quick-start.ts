// The quick start on real pods, as steps a test and a benchmark share: PostgreSQL as a pod, the
// chart installed with its api and operator running the Graphdock image on the real node, and the
// control-plane API reached through port-forward. Only public surfaces: helm, kubectl, /v2.
import { Client } from '@langchain/langgraph-sdk';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildGraphdockImageArchive,
  buildImageArchive,
  buildPostgresImageArchive,
  type ImageArchive,
} from './images.js';
import { REAL_NODE_LABEL, startCluster, type Cluster } from './index.js';
import { postgresManifests } from './postgres-pod.js';

const REPO = join(import.meta.dirname, '..', '..');
const CHART = join(REPO, 'charts', 'graphdock');
const PG_PASSWORD = 'quick-start-password';
/** The control plane's first API key (the chart would generate one; fixed here to use it). */
export const CONTROL_PLANE_KEY = 'gd-quick-start-control-plane-key-0123456789';
export const SYSTEM_NAMESPACE = 'graphdock';
export const AGENTS_NAMESPACE = 'agents';
const realNode = { nodeSelector: { [REAL_NODE_LABEL]: 'real' } };

export const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

export interface QuickStartImages {
  graphdock: ImageArchive;
  postgres: ImageArchive;
  examples: ImageArchive;
  /** examples/ with the echo graph answering `echo v2: ...`: a changed graph for a PATCH. */
  examplesV2: ImageArchive;
}

/** The four archives (cached by content; the first build takes minutes). */
export async function buildQuickStartImages(log: (l: string) => void): Promise<QuickStartImages> {
  const graphdock = await buildGraphdockImageArchive({ log });
  const [postgres, examples] = await Promise.all([
    buildPostgresImageArchive({ log }),
    buildImageArchive({ config: join(REPO, 'examples', 'langgraph.json'), log }),
  ]);
  // The same project with one changed reply, in a folder of the same name (so the same image
  // repository, another tag).
  const dir = mkdtempSync(join(tmpdir(), 'gd-examples-v2-'));
  try {
    const project = join(dir, 'examples');
    cpSync(join(REPO, 'examples'), project, { recursive: true });
    const echo = join(project, 'graphs', 'echo.ts');
    const source = readFileSync(echo, 'utf8');
    const changed = source.replace('`echo: ${', '`echo v2: ${');
    if (changed === source) throw new Error(`${echo}: the echo reply was not found`);
    writeFileSync(echo, changed);
    const examplesV2 = await buildImageArchive({ config: join(project, 'langgraph.json'), log });
    return { graphdock, postgres, examples, examplesV2 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface ControlPlane {
  url: string;
  /** A /v2 request with the control plane's key; rejects unless 2xx; resolves to the JSON body. */
  json<T>(path: string, init?: { method?: string; body?: unknown }): Promise<T>;
  close(): Promise<void>;
}

export interface QuickStart {
  cluster: Cluster;
  api: ControlPlane;
  listenerId: string;
  postgresIp: string;
}

/**
 * A cluster with one real node, the images loaded, PostgreSQL running, the chart installed with
 * real api and operator pods, and a listener for the operator's compute id.
 */
export async function startQuickStart(
  images: QuickStartImages,
  log: (l: string) => void,
): Promise<QuickStart> {
  let t = Date.now();
  const cluster = await startCluster({ nodes: 0, realNode: true });
  log(`cluster with a real node started in ${seconds(t)}`);
  try {
    for (const image of [images.postgres, images.graphdock, images.examples, images.examplesV2]) {
      t = Date.now();
      await cluster.loadImage(image.archive);
      log(`loadImage ${image.ref}: ${seconds(t)}`);
    }
    for (const ns of [SYSTEM_NAMESPACE, AGENTS_NAMESPACE])
      await cluster.kubectl(['create', 'namespace', ns]);
    await cluster.kubectl(['apply', '-n', SYSTEM_NAMESPACE, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: postgresManifests(images.postgres.ref, PG_PASSWORD),
      }),
    });
    await cluster.kubectl(
      ['-n', SYSTEM_NAMESPACE, 'wait', '--for=condition=Ready', 'pod/postgres', '--timeout=90s'],
      { timeoutMs: 100_000 },
    );
    // No cluster DNS on the test node: the api, the operator and the agents' pods reach
    // PostgreSQL by its Service's ClusterIP.
    const postgresIp = (
      await cluster.kubectl([
        '-n',
        SYSTEM_NAMESPACE,
        'get',
        'service',
        'postgres',
        '-o',
        'jsonpath={.spec.clusterIP}',
      ])
    ).trim();
    await createControlPlaneDatabase(cluster);

    t = Date.now();
    const [repository, tag] = splitRef(images.graphdock.ref);
    await cluster
      .helm(
        [
          'install',
          'gd',
          CHART,
          '--namespace',
          SYSTEM_NAMESPACE,
          '--set',
          `image.repository=${repository}`,
          '--set',
          `image.tag=${tag}`,
          '--set',
          'image.pullPolicy=Never',
          '--set',
          `database.url=postgresql://postgres:${PG_PASSWORD}@${postgresIp}:5432/graphdock`,
          '--set',
          `operator.database.adminUrl=postgresql://postgres:${PG_PASSWORD}@${postgresIp}:5432/postgres`,
          '--set',
          `bootstrap.apiKey=${CONTROL_PLANE_KEY}`,
          // The operator starts below, once the api's address is known.
          '--set',
          'operator.replicas=0',
          '--wait',
          '--timeout',
          '240s',
        ],
        { timeoutMs: 260_000 },
      )
      .catch(async (err: Error) => {
        throw new Error(`${err.message}\n${await diagnostics(cluster)}`);
      });
    log(`helm install → api Ready: ${seconds(t)}`);

    // Agent pods check their API keys with the api. The chart's default address is the api
    // Service's DNS name, and the test node has no cluster DNS: give the operator the ClusterIP.
    t = Date.now();
    const apiIp = (
      await cluster.kubectl([
        '-n',
        SYSTEM_NAMESPACE,
        'get',
        'service',
        'gd-graphdock-api',
        '-o',
        'jsonpath={.spec.clusterIP}',
      ])
    ).trim();
    await cluster
      .helm(
        [
          'upgrade',
          'gd',
          CHART,
          '--namespace',
          SYSTEM_NAMESPACE,
          '--reuse-values',
          '--set',
          `operator.controlPlaneUrl=http://${apiIp}:8080`,
          // One operator is enough here (two would both start node on the node's two cores).
          '--set',
          'operator.replicas=1',
          '--wait',
          '--timeout',
          '240s',
        ],
        { timeoutMs: 260_000 },
      )
      .catch(async (err: Error) => {
        throw new Error(`${err.message}\n${await diagnostics(cluster)}`);
      });
    log(`helm upgrade → operator Ready: ${seconds(t)}`);

    const api = await controlPlane(cluster);
    const listener = await api.json<{ id: string }>('/v2/listeners', {
      method: 'POST',
      body: {
        compute_type: 'k8s',
        compute_id: 'default',
        compute_config: { k8s_namespaces: [AGENTS_NAMESPACE] },
      },
    });
    return { cluster, api, listenerId: listener.id, postgresIp };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

function splitRef(ref: string): [string, string] {
  const at = ref.lastIndexOf(':');
  return [ref.slice(0, at), ref.slice(at + 1)];
}

/** SQL in the database's pod (psql over its socket). */
export function psql(cluster: Cluster, sql: string, database = 'postgres'): Promise<string> {
  return cluster.kubectl([
    '-n',
    SYSTEM_NAMESPACE,
    'exec',
    'postgres',
    '--',
    'psql',
    '-h',
    '/tmp',
    '-U',
    'postgres',
    '-d',
    database,
    '-tAc',
    sql,
  ]);
}

/** The api's own database; the entrypoint may still be restarting the server once Ready. */
async function createControlPlaneDatabase(cluster: Cluster): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await psql(cluster, 'CREATE DATABASE graphdock');
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function controlPlane(cluster: Cluster): Promise<ControlPlane> {
  const forward = await cluster.portForward('service/gd-graphdock-api', 8080, {
    namespace: SYSTEM_NAMESPACE,
  });
  const url = `http://127.0.0.1:${forward.port}`;
  return {
    url,
    close: () => forward.close(),
    async json<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
      const res = await fetch(`${url}${path}`, {
        method: init.method ?? 'GET',
        headers: {
          'x-api-key': CONTROL_PLANE_KEY,
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      const text = await res.text();
      if (res.status >= 300)
        throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${text}`);
      return (text ? JSON.parse(text) : undefined) as T;
    },
  };
}

export interface Deployment {
  id: string;
  status: string;
  latest_revision_id: string;
  active_revision_id: string | null;
}
export interface Revision {
  id: string;
  status: string;
  status_message: string | null;
}

/** POST /v2/deployments of `image` in the agents' namespace; `secrets` become its env. */
export function createDeployment(
  qs: QuickStart,
  name: string,
  image: string,
  secrets: Record<string, string> = {},
): Promise<Deployment> {
  return qs.api.json<Deployment>('/v2/deployments', {
    method: 'POST',
    body: {
      name,
      source: 'external_docker',
      source_config: {
        listener_id: qs.listenerId,
        listener_config: { k8s_namespace: AGENTS_NAMESPACE },
        resource_spec: { min_scale: 1, max_scale: 1, cpu: 0.1, memory_mb: 256 },
      },
      source_revision_config: { image_uri: image },
      secrets: Object.entries(secrets).map(([n, value]) => ({ name: n, value })),
    },
  });
}

/** Polls the revision until `status`; fails at once on DEPLOY_FAILED (with its message). */
export async function waitForRevision(
  qs: QuickStart,
  deploymentId: string,
  revisionId: string,
  status: string,
  timeoutMs = 180_000,
): Promise<Revision> {
  const deadline = Date.now() + timeoutMs;
  let last: Revision | undefined;
  for (;;) {
    last = await qs.api.json<Revision>(`/v2/deployments/${deploymentId}/revisions/${revisionId}`);
    if (last.status === status) return last;
    if (last.status === 'DEPLOY_FAILED' || Date.now() > deadline)
      throw new Error(
        `revision ${revisionId}: ${JSON.stringify(last)}, not ${status}\n${await diagnostics(qs.cluster)}`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * A TCP relay pod in front of the deployment's Service, as an ingress would be: the test
 * port-forwards to the relay, and each connection it opens goes through kube-proxy to a Ready
 * pod of the Service, old or new, which a port-forward to the Service itself (pinned to one pod)
 * cannot show.
 */
export async function startFront(
  qs: QuickStart,
  name: string,
  serviceIp: string,
  image: string,
): Promise<void> {
  const script = [
    "const net = require('node:net');",
    'net.createServer({ allowHalfOpen: true }, (c) => {',
    '  const u = net.connect({ host: process.env.TARGET, port: 8000, allowHalfOpen: true });',
    '  c.pipe(u); u.pipe(c);',
    '  c.on("error", () => u.destroy()); u.on("error", () => c.destroy());',
    '}).listen(9000);',
  ].join('\n');
  await qs.cluster.kubectl(['apply', '-n', AGENTS_NAMESPACE, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        ...realNode,
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'relay',
            image,
            imagePullPolicy: 'Never',
            command: ['node', '-e', script],
            env: [{ name: 'TARGET', value: serviceIp }],
            ports: [{ containerPort: 9000 }],
            readinessProbe: { tcpSocket: { port: 9000 }, periodSeconds: 1 },
          },
        ],
      },
    }),
  });
  await qs.cluster.kubectl(
    ['-n', AGENTS_NAMESPACE, 'wait', '--for=condition=Ready', `pod/${name}`, '--timeout=90s'],
    { timeoutMs: 100_000 },
  );
}

export async function diagnostics(cluster: Cluster): Promise<string> {
  const parts = [await cluster.kubectl(['get', 'pods', '-A', '-o', 'wide']).catch(String)];
  for (const [ns, target] of [
    [SYSTEM_NAMESPACE, 'deployment/gd-graphdock-api'],
    [SYSTEM_NAMESPACE, 'deployment/gd-graphdock-operator'],
  ] as const)
    parts.push(
      await cluster.kubectl(['-n', ns, 'logs', target, '--tail=30']).catch((e: Error) => e.message),
    );
  return parts.join('\n');
}

/** The SDK without its own retries: every failed request counts. */
export const sdk = (apiUrl: string) =>
  new Client({ apiUrl, apiKey: RUNTIME_API_KEY, callerOptions: { maxRetries: 0 } });

/**
 * The key the SDK presents: the workspace's control-plane key, as a LangSmith key is presented
 * to a LangSmith deployment; the runtime checks it with the api.
 */
export const RUNTIME_API_KEY = CONTROL_PLANE_KEY;

/** An error with its causes (fetch hides the socket's error in `cause`). */
export function explain(err: unknown): string {
  const parts: string[] = [];
  for (let e = err; e; e = (e as { cause?: unknown }).cause)
    parts.push(e instanceof Error ? `${e.name}: ${e.message}` : JSON.stringify(e));
  return parts.join(' <- ');
}

type Messages = { messages: { content: string }[] };

/** A new thread and one echo run waited for; resolves to the reply. */
export async function echoOnce(client: Client, text: string): Promise<string> {
  const thread = await client.threads.create();
  const out = (await client.runs.wait(thread.thread_id, 'echo', {
    input: { messages: [{ role: 'user', content: text }] },
  })) as Messages;
  return out.messages.at(-1)?.content ?? '';
}

export async function deploymentPods(
  qs: QuickStart,
  deploymentId: string,
): Promise<{ metadata: { name: string; deletionTimestamp?: string } }[]> {
  const list = JSON.parse(
    await qs.cluster.kubectl([
      '-n',
      AGENTS_NAMESPACE,
      'get',
      'pods',
      '-l',
      `graphdock.dev/deployment-id=${deploymentId}`,
      '-o',
      'json',
    ]),
  ) as { items: { metadata: { name: string; deletionTimestamp?: string } }[] };
  return list.items;
}

export interface RolloutUnderLoad {
  /** Replies in the order they came, from both clients. */
  replies: string[];
  /** Each failed request: when, and why. */
  failures: string[];
  /** PATCH → the new revision DEPLOYED / → the old pod gone. */
  deployedMs: number;
  oldPodGoneMs: number;
  revisionId: string;
}

/**
 * PATCHes the deployment to `image` while two clients, through `apiUrl` (a port-forward to a
 * front relay), each run one echo run after another; stops them once the old pod is gone and
 * each has made a few more runs.
 */
export async function rolloutUnderLoad(
  qs: QuickStart,
  deploymentId: string,
  apiUrl: string,
  image: string,
): Promise<RolloutUnderLoad> {
  const client = sdk(apiUrl);
  const replies: string[] = [];
  const failures: string[] = [];
  let stop = false;
  const loops = [0, 1].map(async (n) => {
    for (let i = 0; !stop; i++) {
      try {
        replies.push(await echoOnce(client, `c${n}-${i}`));
      } catch (err) {
        failures.push(`${new Date().toISOString()} ${explain(err)}`);
      }
    }
  });
  try {
    while (replies.length < 4 && !failures.length) await new Promise((r) => setTimeout(r, 100));
    const t = Date.now();
    const patched = await qs.api.json<Deployment>(`/v2/deployments/${deploymentId}`, {
      method: 'PATCH',
      body: { source_revision_config: { image_uri: image } },
    });
    await waitForRevision(qs, deploymentId, patched.latest_revision_id, 'DEPLOYED');
    const deployedMs = Date.now() - t;
    const deadline = Date.now() + 120_000;
    while ((await deploymentPods(qs, deploymentId)).length !== 1) {
      if (Date.now() > deadline) throw new Error(`rollout stuck\n${await diagnostics(qs.cluster)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    const oldPodGoneMs = Date.now() - t;
    const settled = replies.length;
    while (replies.length < settled + 4) await new Promise((r) => setTimeout(r, 100));
    return { replies, failures, deployedMs, oldPodGoneMs, revisionId: patched.latest_revision_id };
  } finally {
    stop = true;
    await Promise.all(loops);
  }
}
