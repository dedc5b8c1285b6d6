// Runs `graphdock operator` as a real child process against a test cluster, as a Kubernetes
// user holding only OPERATOR_RULES (and the leader-election Role), and waits for /readyz.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../../common/db/index.js';
import {
  OPERATOR_EXPORT_RULES,
  OPERATOR_LEADER_ELECTION_RULES,
  OPERATOR_RULES,
} from '../../operator/index.js';
import type { Cluster } from '../cluster/index.js';
import { REPO_ROOT } from './server.js';

export const OPERATOR_USER = 'graphdock-operator';
export const LEASE_NAMESPACE = 'default';

export function operatorRbac() {
  const roleRef = (kind: string) => ({
    apiGroup: 'rbac.authorization.k8s.io',
    kind,
    name: OPERATOR_USER,
  });
  const subjects = [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: OPERATOR_USER }];
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: OPERATOR_USER },
        // The export rules are a Role in the exports' namespace in the chart; here, everywhere.
        rules: [...OPERATOR_RULES, ...OPERATOR_EXPORT_RULES],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: OPERATOR_USER },
        roleRef: roleRef('ClusterRole'),
        subjects,
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: OPERATOR_USER, namespace: LEASE_NAMESPACE },
        rules: OPERATOR_LEADER_ELECTION_RULES,
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: OPERATOR_USER, namespace: LEASE_NAMESPACE },
        roleRef: roleRef('Role'),
        subjects,
      },
    ],
  });
}

export interface RunningOperator {
  url: string;
  identity: string;
  process: ChildProcess;
  output(): string;
  metrics(): Promise<string>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export interface OperatorProcessOptions {
  computeId: string;
  identity: string;
  databaseUrl?: string;
  /** Extra flags, e.g. ['--progress-deadline-seconds', '5']. */
  args?: string[];
  env?: Record<string, string>;
}

/** Grants the operator user its rules; call once per cluster. */
export async function grantOperatorRbac(cluster: Cluster): Promise<string> {
  await cluster.kubectl(['apply', '-f', '-'], { input: operatorRbac() });
  return cluster.userKubeconfig(OPERATOR_USER);
}

export async function startOperatorProcess(
  kubeconfig: string,
  options: OperatorProcessOptions,
): Promise<RunningOperator> {
  // Another process may take the free port before the operator binds it: start again elsewhere.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOperatorOnce(kubeconfig, options, await freePort());
    } catch (error) {
      if (attempt >= 3 || !/EADDRINUSE|address already in use/.test(String(error))) throw error;
    }
  }
}

async function startOperatorOnce(
  kubeconfig: string,
  options: OperatorProcessOptions,
  port: number,
): Promise<RunningOperator> {
  const args = [
    join(REPO_ROOT, 'bin', 'graphdock.mjs'),
    'operator',
    '--compute-id',
    options.computeId,
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
    '--identity',
    options.identity,
    '--leader-election-namespace',
    LEASE_NAMESPACE,
    // Short lease times keep fail-over tests quick; generous enough for a busy 2-core machine.
    '--lease-duration-seconds',
    '6',
    '--renew-deadline-seconds',
    '4',
    '--retry-period-seconds',
    '1',
    '--heartbeat-seconds',
    '2',
    ...(options.args ?? []),
  ];
  const env: Record<string, string | undefined> = {
    ...process.env,
    KUBECONFIG: kubeconfig,
    LOG_LEVEL: process.env.OPERATOR_LOG_LEVEL ?? 'info',
    GRAPHDOCK_OPERATOR_DATABASE_URL: options.databaseUrl,
    ...options.env,
  };
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (c: Buffer) => (log = (log + c.toString()).slice(-200_000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`operator exited with ${child.exitCode}:\n${log}`);
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`operator not ready within 60 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    identity: options.identity,
    process: child,
    output: () => log,
    metrics: async () => (await fetch(`${url}/metrics`)).text(),
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
