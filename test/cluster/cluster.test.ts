// The local control plane is a real one: nodes Ready, Deployments roll out to Ready pods through
// the controller-manager, scheduler and kwok, RBAC is enforced, helm runs, and the apiserver can
// be restarted under the controllers.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startCluster, type Cluster } from './index.js';

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ nodes: 3 });
});

afterAll(async () => {
  await cluster?.stop();
});

interface NodeList {
  items: {
    metadata: { name: string };
    status: { conditions: { type: string; status: string }[] };
  }[];
}

function deployment(name: string, replicas: number): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        // No container runtime exists: kwok marks the pod Running/Ready whatever the image.
        spec: { containers: [{ name: 'server', image: 'example.invalid/graphdock:test' }] },
      },
    },
  });
}

describe('local Kubernetes control plane', () => {
  test('kubectl get nodes shows every fake node Ready', async () => {
    const nodes = JSON.parse(await cluster.kubectl(['get', 'nodes', '-o', 'json'])) as NodeList;
    expect(nodes.items.map((n) => n.metadata.name).sort()).toEqual(cluster.nodeNames);
    for (const node of nodes.items) {
      const ready = node.status.conditions.find((c) => c.type === 'Ready');
      expect(ready?.status, node.metadata.name).toBe('True');
    }
    expect(await cluster.kubectl(['get', 'nodes'])).toMatch(/kwok-node-0\s+Ready/);
  });

  test('a Deployment with 2 replicas rolls out to 2 available, Running pods', async () => {
    await cluster.kubectl(['apply', '-f', '-'], { input: deployment('web', 2) });
    const rollout = await cluster.kubectl(
      ['rollout', 'status', 'deployment/web', '--timeout=150s'],
      {
        timeoutMs: 160_000,
      },
    );
    expect(rollout).toContain('successfully rolled out');
    const status = JSON.parse(
      await cluster.kubectl(['get', 'deployment', 'web', '-o', 'jsonpath={.status}']),
    ) as { availableReplicas?: number; readyReplicas?: number };
    expect(status.availableReplicas).toBe(2);
    expect(status.readyReplicas).toBe(2);
    const pods = await cluster.kubectl([
      'get',
      'pods',
      '-l',
      'app=web',
      '-o',
      'jsonpath={range .items[*]}{.status.phase} {.spec.nodeName} {.status.podIP}{"\\n"}{end}',
    ]);
    const lines = pods.trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toMatch(/^Running kwok-node-\d \d+\.\d+\.\d+\.\d+$/);
  });

  test('RBAC is enforced for users outside system:masters', async () => {
    const kubeconfig = await cluster.userKubeconfig('alice', ['developers']);
    await expect(
      cluster.kubectl(['--kubeconfig', kubeconfig, 'get', 'pods', '-n', 'default']),
    ).rejects.toThrow(/forbidden: User "alice" cannot list resource "pods"/);
    const canI = await cluster
      .kubectl(['auth', 'can-i', 'create', 'deployments', '--as', 'alice'])
      .catch((error: Error) => error.message);
    expect(canI).toMatch(/failed: no$/);
  });

  test('helm runs against the cluster', async () => {
    expect(await cluster.helm(['version', '--short'])).toMatch(/^v3\.\d+\.\d+/);
    expect(await cluster.helm(['list', '--all-namespaces', '-o', 'json'])).toBe('[]\n');
  });

  test('after an apiserver restart, data survives and controllers keep reconciling', async () => {
    await cluster.kubectl(['create', 'configmap', 'survivor', '--from-literal=k=v']);
    await cluster.restartApiserver({ downMs: 1_000 });
    expect(
      await cluster.kubectl(['get', 'configmap', 'survivor', '-o', 'jsonpath={.data.k}']),
    ).toBe('v');
    // A crash (SIGKILL) this time; then the controller-manager, scheduler and kwok must have
    // reconnected for a scale-up to reach Ready.
    await cluster.restartApiserver({ crash: true });
    await cluster.kubectl(['scale', 'deployment/web', '--replicas=3']);
    await cluster.kubectl(['rollout', 'status', 'deployment/web', '--timeout=150s'], {
      timeoutMs: 160_000,
    });
    expect(
      await cluster.kubectl([
        'get',
        'deployment',
        'web',
        '-o',
        'jsonpath={.status.availableReplicas}',
      ]),
    ).toBe('3');
  });

  test('stop() ends every process and removes the work folder', async () => {
    const pids = cluster.pids();
    expect(pids).toHaveLength(5);
    await cluster.stop();
    for (const pid of pids) expect(() => process.kill(pid, 0), `pid ${pid}`).toThrow(/ESRCH/);
    expect(existsSync(cluster.workDir)).toBe(false);
  });
});
