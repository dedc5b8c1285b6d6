// The real node: pods run real processes from an image loaded from an OCI archive, a real
// readiness probe decides Ready, kubectl port-forward/logs/exec go through the apiserver and the
// kubelet, kube-proxy routes a Service between pods (inside the node's network namespace), and
// stop() leaves nothing of the node on the machine.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { BUSYBOX_IMAGE, POD_CIDR, REAL_NODE_LABEL, startCluster, type Cluster } from './index.js';
import { run } from './node.js';
import { hostDirs, hostIptables, nodeLeftovers, staleShimSockets } from './node-leftovers.js';

let cluster: Cluster;
let iptablesBefore: string;
let staleSocketsBefore: string[];
let hostDirsBefore: string[];
const sysctlsBefore = readFileSync('/proc/sys/kernel/panic_on_oops', 'utf8');

beforeAll(async () => {
  iptablesBefore = await hostIptables();
  staleSocketsBefore = staleShimSockets();
  hostDirsBefore = hostDirs();
  cluster = await startCluster({ nodes: 1, realNode: true });
});

afterAll(async () => {
  await cluster?.stop();
});

const node = (): NonNullable<Cluster['realNode']> => {
  if (!cluster.realNode) throw new Error('no real node');
  return cluster.realNode;
};

/** A pod pinned to the real node, running busybox with `script`. */
function pod(
  name: string,
  script: string,
  extra: Record<string, unknown> = {},
  podSpec: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: name } },
    spec: {
      nodeSelector: { [REAL_NODE_LABEL]: 'real' },
      terminationGracePeriodSeconds: 1,
      ...podSpec,
      containers: [
        {
          name: 'main',
          image: BUSYBOX_IMAGE,
          imagePullPolicy: 'Never',
          command: ['sh', '-c', script],
          ...extra,
        },
      ],
    },
  });
}

async function podJson(name: string): Promise<{
  spec: { nodeName?: string };
  status: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { ready: boolean; started?: boolean; containerID?: string }[];
  };
}> {
  return JSON.parse(await cluster.kubectl(['get', 'pod', name, '-o', 'json'])) as Awaited<
    ReturnType<typeof podJson>
  >;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const inNode = async (command: string[]): Promise<string> =>
  (await run('ip', ['netns', 'exec', node().netns, ...command])).stdout;

// The web server comes up 3 s after its container starts; until then its probe fails.
const WEB_SCRIPT = `mkdir -p /www && echo "hello from $(hostname)" > /www/index.html
echo "web starting"; sleep 3; exec httpd -f -v -p 8080 -h /www`;
const readinessProbe = (port: number) => ({
  readinessProbe: { httpGet: { path: '/index.html', port }, periodSeconds: 1, failureThreshold: 1 },
});

test('the busybox archive loads into the node, which kwok leaves alone', async () => {
  const names = await cluster.loadImage(join(node().nodeBinDir, 'images', 'busybox.oci.tar'));
  expect(names).toEqual([BUSYBOX_IMAGE]);
  const nodeInfo = JSON.parse(
    await cluster.kubectl(['get', 'node', node().name, '-o', 'json']),
  ) as {
    metadata: { annotations?: Record<string, string> };
    status: { nodeInfo: { kubeletVersion: string; containerRuntimeVersion: string } };
  };
  expect(nodeInfo.status.nodeInfo.kubeletVersion).toBe('v1.36.3');
  expect(nodeInfo.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\//);
  expect(nodeInfo.metadata.annotations?.['kwok.x-k8s.io/node']).toBeUndefined();
});

test('a pod runs a real process, turns Ready by its readiness probe, and answers through port-forward', async () => {
  await cluster.kubectl(['apply', '-f', '-'], {
    input: pod('web', WEB_SCRIPT, { ports: [{ containerPort: 8080 }], ...readinessProbe(8080) }),
  });
  // Same image, a probe on a port nothing listens on: Running, never Ready.
  await cluster.kubectl(['apply', '-f', '-'], {
    input: pod('never-ready', 'exec sleep 3600', readinessProbe(9999)),
  });
  await cluster.kubectl(['wait', '--for=condition=Ready', 'pod/web', '--timeout=90s'], {
    timeoutMs: 100_000,
  });
  const web = await podJson('web');
  expect(web.spec.nodeName).toBe(node().name);
  expect(web.status.podIP?.startsWith(POD_CIDR.split('.').slice(0, 3).join('.') + '.')).toBe(true);
  expect(web.status.containerStatuses?.[0]?.containerID).toMatch(/^containerd:\/\//);

  await until('never-ready running', async () => {
    return (await podJson('never-ready')).status.containerStatuses?.[0]?.started === true;
  });
  await new Promise((r) => setTimeout(r, 3_000)); // several probe periods
  const neverReady = await podJson('never-ready');
  expect(neverReady.status.phase).toBe('Running');
  expect(neverReady.status.containerStatuses?.[0]?.ready).toBe(false);

  const forward = await cluster.portForward('pod/web', 8080);
  try {
    const res = await fetch(`http://127.0.0.1:${forward.port}/index.html`);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^hello from web$/m);
  } finally {
    await forward.close();
  }
  expect(await cluster.kubectl(['logs', 'web'])).toContain('web starting');
  expect(await cluster.kubectl(['exec', 'web', '--', 'cat', '/proc/1/cmdline'])).toContain('httpd');
});

test('a second pod reaches the first through its Service, and pods reach the apiserver', async () => {
  await cluster.kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    }),
  });
  const clusterIp = (
    await cluster.kubectl(['get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}'])
  ).trim();
  // Service env vars are set for pods created after the Service; kube-proxy may need a moment.
  await cluster.kubectl(['apply', '-f', '-'], {
    input: pod(
      'client',
      `# busybox's wget crashes in this static build; nc speaks the HTTP needed.
get() { printf 'GET %s HTTP/1.0\r\n\r\n' "$3" | nc -w 5 "$1" "$2"; }
for i in $(seq 60); do
  if out=$(get "$WEB_SERVICE_HOST" "$WEB_SERVICE_PORT" /index.html) && echo "$out" | grep -q hello; then
    echo "$out"; break
  fi
  sleep 1
done
# Plain HTTP to the apiserver's TLS port: a 400 proves the kubernetes Service reaches it.
get "$KUBERNETES_SERVICE_HOST" "$KUBERNETES_SERVICE_PORT" / || true`,
      {},
      { restartPolicy: 'Never' },
    ),
  });
  await until('client pod to finish', async () => {
    const phase = (await podJson('client')).status.phase;
    return phase === 'Succeeded' || phase === 'Failed';
  });
  const logs = await cluster.kubectl(['logs', 'client']);
  expect(logs).toMatch(/^hello from web$/m);
  expect(logs, logs).toMatch(/400 Bad Request/);

  // The rules live in the node's namespace, not on the host.
  expect(await inNode(['iptables-save', '-t', 'nat'])).toContain(`-d ${clusterIp}/32`);
  expect(await hostIptables()).not.toContain(clusterIp);
});

test('stop() removes every process, mount, cgroup, namespace and rule of the node', async () => {
  const { netns, cgroup } = node();
  const traces = {
    workDir: cluster.workDir,
    netns,
    cgroup,
    hostIf: `gdh${netns.replace(/^graphdock-/, '')}`,
  };
  // While it runs, the traces are there: the check can see them.
  const running = await nodeLeftovers(traces);
  for (const kind of ['process', 'network namespace', 'link', 'cgroup', 'mount', 'folder']) {
    expect(running.some((t) => t.startsWith(kind))).toBe(true);
  }
  await cluster.stop();
  expect(await nodeLeftovers(traces)).toEqual([]);
  expect(await hostIptables()).toBe(iptablesBefore);
  expect(staleShimSockets().filter((s) => !staleSocketsBefore.includes(s))).toEqual([]);
  expect(hostDirs()).toEqual(hostDirsBefore);
  expect(readFileSync('/proc/sys/kernel/panic_on_oops', 'utf8')).toBe(sysctlsBefore);
});
