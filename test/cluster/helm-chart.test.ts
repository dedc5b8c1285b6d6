// The Helm chart against a real kube-apiserver: lint, server-side dry-run of the rendered
// manifests (cluster-wide and namespaced RBAC), values.schema.json refusals, and a real
// `helm install` whose resources exist, whose Deployments roll out (kwok marks pods Ready) and
// whose service accounts hold exactly the permissions the code asks for.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { load, loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_PLANE_API_EXPORT_RULES } from '../../api/index.js';
import { loadOperatorEnv } from '../../common/config/index.js';
import { OPERATOR_EXPORT_RULES } from '../../operator/index.js';
import { REPO_ROOT } from '../support/server.js';
import { startCluster, type Cluster } from './index.js';

const CHART = join(REPO_ROOT, 'charts', 'graphdock');
const DB = ['--set', 'database.url=postgresql://graphdock:secret@postgres:5432/graphdock'];
const NAMESPACED = ['--set', 'watchNamespaces={agents-a,agents-b}'];

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
}

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ nodes: 2 });
  for (const ns of ['agents-a', 'agents-b', 'elsewhere'])
    await cluster.kubectl(['create', 'namespace', ns]);
});

afterAll(async () => {
  await cluster?.stop();
});

const template = (args: string[]) => cluster.helm(['template', 'gd', CHART, ...DB, ...args]);

/** Resolves to the failure message; fails the test if the command succeeded. */
async function failureOf(run: Promise<string>): Promise<string> {
  const outcome = await run.then(
    () => undefined,
    (err: unknown) => (err instanceof Error ? err.message : String(err)),
  );
  expect(outcome, 'the command should have failed').toBeDefined();
  return outcome ?? '';
}

function kinds(yaml: string): string[] {
  return (loadAll(yaml) as (Manifest | null)[]).filter((m) => m).map((m) => `${m!.kind}`);
}

/** `helm lint` prints its findings on stdout and only a summary on stderr: keep both. */
function helmLint(args: string[]): Promise<{ failed: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(join(cluster.binDir, 'helm'), ['lint', CHART, ...args], (error, stdout, stderr) =>
      resolve({ failed: error !== null, output: `${stdout}\n${stderr}` }),
    );
  });
}

/** `kubectl auth can-i` as a service account: "yes" or "no" (it exits 1 on "no"). */
async function canI(serviceAccount: string, namespace: string, args: string[]): Promise<string> {
  const as = `--as=system:serviceaccount:${namespace}:${serviceAccount}`;
  try {
    return (await cluster.kubectl(['auth', 'can-i', ...args, as])).trim();
  } catch (err) {
    if (err instanceof Error && /failed: no$/.test(err.message.trim())) return 'no';
    throw err;
  }
}

describe('helm lint and template', () => {
  it('bulkExport.executor=jobs: the api publishes, the operator runs Jobs with the Secrets, each with its Role', async () => {
    const yaml = await template(['--set', 'bulkExport.executor=jobs', '--namespace', 'default']);
    const all = (loadAll(yaml) as (Manifest | null)[]).filter((m) => m) as unknown as (Manifest & {
      rules?: unknown[];
      spec?: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
    })[];
    const role = (name: string) =>
      all.find((m) => m.kind === 'Role' && m.metadata.name === name)?.rules;
    expect(role('gd-graphdock-api-export-jobs')).toEqual(CONTROL_PLANE_API_EXPORT_RULES);
    expect(role('gd-graphdock-operator-export-jobs')).toEqual(OPERATOR_EXPORT_RULES);
    const env = (deployment: string) =>
      Object.fromEntries(
        all
          .find((m) => m.kind === 'Deployment' && m.metadata.name === deployment)!
          .spec!.template.spec.containers[0]!.env.filter((e) => e.value !== undefined)
          .map((e) => [e.name, e.value!]),
      );
    expect(env('gd-graphdock-api')).toMatchObject({
      GRAPHDOCK_EXPORT_EXECUTOR: 'jobs',
      GRAPHDOCK_EXPORT_JOBS_NAMESPACE: 'default',
    });
    // What the operator makes of its rendered environment: Jobs of its image with the chart's
    // database and key Secrets.
    const settings = loadOperatorEnv(env('gd-graphdock-operator')).exportJobs;
    expect(settings).toMatchObject({
      namespace: 'default',
      databaseSecret: { name: 'gd-graphdock-database', key: 'DATABASE_URL' },
      keysSecret: {
        name: 'gd-graphdock-bulk-export',
        key: 'GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS',
      },
      concurrency: 2,
    });
    expect(settings?.image).toMatch(/graphdock/);
    for (const name of [settings!.databaseSecret.name, settings!.keysSecret.name])
      expect(all.some((m) => m.kind === 'Secret' && m.metadata.name === name)).toBe(true);
    const out = await cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], {
      input: await template([
        '--set',
        'bulkExport.executor=jobs',
        '--namespace',
        'default',
        '--include-crds',
      ]),
    });
    expect(out).toContain(
      'role.rbac.authorization.k8s.io/gd-graphdock-operator-export-jobs created',
    );
  });

  it('lints clean, also with --strict', async () => {
    const out = await cluster.helm(['lint', CHART, '--strict', ...DB]);
    expect(out).toContain('0 chart(s) failed');
    await cluster.helm(['lint', CHART, '--strict', ...DB, ...NAMESPACED]);
  });

  it('the default render is accepted by the API server (dry-run=server), CRDs included', async () => {
    const yaml = await template(['--include-crds', '--namespace', 'default']);
    expect(kinds(yaml)).toEqual(
      expect.arrayContaining([
        'CustomResourceDefinition',
        'ClusterRole',
        'ClusterRoleBinding',
        'Role',
        'RoleBinding',
        'Secret',
        'ServiceAccount',
        'Deployment',
        'Service',
      ]),
    );
    expect(kinds(yaml)).not.toContain('ServiceMonitor');
    const out = await cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], { input: yaml });
    expect(out).toContain(
      'customresourcedefinition.apiextensions.k8s.io/agentdeployments.graphdock.dev created (server dry run)',
    );
    expect(out).toContain('deployment.apps/gd-graphdock-operator created (server dry run)');
    // The operator's memory target (under 200 MB at 500 deployments) was measured with this.
    const operator = (loadAll(yaml) as (Manifest | null)[]).find(
      (m) => m?.kind === 'Deployment' && m.metadata.name === 'gd-graphdock-operator',
    ) as unknown as {
      spec: {
        template: {
          spec: {
            containers: { command?: string[]; env?: { name: string; value?: string }[] }[];
          };
        };
      };
    };
    expect(operator.spec.template.spec.containers[0]?.env).toContainEqual({
      name: 'NODE_OPTIONS',
      value: '--max-semi-space-size=2',
    });
    // And without the runtime's --no-memory-reducer (the image's entrypoint has it).
    expect(operator.spec.template.spec.containers[0]?.command).toEqual([
      'node',
      '/app/bin/graphdock.mjs',
    ]);
  });

  it('namespaced RBAC: Roles in each watched namespace, accepted by the API server', async () => {
    const yaml = await template([...NAMESPACED, '--namespace', 'default']);
    const manifests = (loadAll(yaml) as (Manifest | null)[]).filter((m): m is Manifest => !!m);
    const roles = manifests
      .filter((m) => m.kind === 'Role')
      .map((m) => `${m.metadata.namespace}/${m.metadata.name}`)
      .sort();
    expect(roles).toEqual([
      'agents-a/gd-graphdock-api',
      'agents-a/gd-graphdock-operator',
      'agents-b/gd-graphdock-api',
      'agents-b/gd-graphdock-operator',
      'default/gd-graphdock-operator-leader-election',
    ]);
    const out = await cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], { input: yaml });
    expect(out).toContain(
      'role.rbac.authorization.k8s.io/gd-graphdock-api created (server dry run)',
    );
  });

  it('renders a ServiceMonitor only when enabled', async () => {
    const yaml = await template([
      '--set',
      'serviceMonitor.enabled=true',
      '--set',
      'serviceMonitor.labels.release=prom',
    ]);
    const monitor = (loadAll(yaml) as ((Manifest & { spec: unknown }) | null)[]).find(
      (m) => m?.kind === 'ServiceMonitor',
    );
    expect(monitor?.spec).toMatchObject({
      endpoints: [{ port: 'http', path: '/metrics', interval: '30s' }],
      selector: { matchLabels: { 'app.kubernetes.io/component': 'operator' } },
    });
    expect(monitor?.metadata).toMatchObject({ labels: { release: 'prom' } });
  });

  it('passes api.tracesPublicUrl to the api, and no variable when it is empty', async () => {
    type Deployment = Manifest & {
      spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
    };
    const apiEnv = async (args: string[]) =>
      (loadAll(await template(args)) as (Deployment | null)[])
        .find((m) => m?.kind === 'Deployment' && m.metadata.name.endsWith('-api'))!
        .spec.template.spec.containers[0]!.env.filter(
          (e) => e.name === 'GRAPHDOCK_TRACES_PUBLIC_URL',
        );
    expect(
      await apiEnv(['--set', 'api.tracesPublicUrl=https://traces.example.com/api/v1']),
    ).toEqual([
      { name: 'GRAPHDOCK_TRACES_PUBLIC_URL', value: 'https://traces.example.com/api/v1' },
    ]);
    expect(await apiEnv([])).toEqual([]);
    expect(await failureOf(template(['--set', 'api.tracesPublicUrl=ftp://x']))).toMatch(
      /tracesPublicUrl/,
    );
  });
});

describe('values.schema.json and required values', () => {
  it('a negative replica count fails lint and template with the field named', async () => {
    const lint = await helmLint([...DB, '--set', 'operator.replicas=-1']);
    expect(lint.failed).toBe(true);
    expect(lint.output).toMatch(/at '\/operator\/replicas': minimum: got -1, want 0/);
    const render = await failureOf(template(['--set', 'operator.replicas=-1']));
    expect(render).toContain("values don't meet the specifications of the schema");
  });

  it('a misspelt key, a bad plan and a bad namespace name are refused', async () => {
    expect(await failureOf(template(['--set', 'api.replica=2']))).toMatch(
      /additional properties 'replica' not allowed/,
    );
    expect(await failureOf(template(['--set', 'bootstrap.organizationPlan=gold']))).toMatch(
      /\/bootstrap\/organizationPlan/,
    );
    expect(await failureOf(template(['--set', 'watchNamespaces={Not_Valid}']))).toMatch(
      /\/watchNamespaces\/0/,
    );
    expect(await failureOf(template(['--set', 'bootstrap.apiKey=short']))).toMatch(
      /\/bootstrap\/apiKey/,
    );
  });

  it('without a database the api cannot be rendered, with a message saying what to set', async () => {
    const message = await failureOf(cluster.helm(['template', 'gd', CHART]));
    expect(message).toContain('database.url or database.existingSecret.name is required');
    // The operator alone needs no database of the chart's.
    await cluster.helm(['template', 'gd', CHART, '--set', 'api.enabled=false']);
  });
});

describe('helm install', () => {
  const ns = 'graphdock';

  it('installs CRDs, RBAC, Secrets, Deployments and Services; pods roll out', async () => {
    await cluster.helm(
      [
        'install',
        'gd',
        CHART,
        '--namespace',
        ns,
        '--create-namespace',
        ...DB,
        '--set',
        'operator.database.adminUrl=postgresql://admin:secret@postgres:5432/postgres',
        '--wait',
        '--timeout',
        '180s',
      ],
      { timeoutMs: 240_000 },
    );
    const crds = await cluster.kubectl(['get', 'crd', '-o', 'name']);
    for (const plural of ['listeners', 'agentdeployments', 'agentrevisions'])
      expect(crds).toContain(`${plural}.graphdock.dev`);
    const names = await cluster.kubectl([
      '-n',
      ns,
      'get',
      'deployments,services,secrets,serviceaccounts,roles,rolebindings',
      '-o',
      'name',
    ]);
    for (const name of [
      'deployment.apps/gd-graphdock-api',
      'deployment.apps/gd-graphdock-operator',
      'service/gd-graphdock-api',
      'service/gd-graphdock-operator-metrics',
      'secret/gd-graphdock-bootstrap',
      'secret/gd-graphdock-database',
      'secret/gd-graphdock-operator-database',
      'serviceaccount/gd-graphdock-api',
      'serviceaccount/gd-graphdock-operator',
      'role.rbac.authorization.k8s.io/gd-graphdock-operator-leader-election',
    ])
      expect(names).toContain(name);
    const operator = JSON.parse(
      await cluster.kubectl(['-n', ns, 'get', 'deployment/gd-graphdock-operator', '-o', 'json']),
    ) as {
      status: { readyReplicas?: number };
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    };
    expect(operator.status.readyReplicas).toBe(2);
    expect(operator.spec.template.spec.containers[0]?.args.slice(0, 3)).toEqual([
      'operator',
      '--compute-id',
      'default',
    ]);
  });

  it('generates a bootstrap API key once and keeps it on upgrade', async () => {
    const readKey = async () =>
      Buffer.from(
        await cluster.kubectl([
          '-n',
          ns,
          'get',
          'secret',
          'gd-graphdock-bootstrap',
          '-o',
          'jsonpath={.data.GRAPHDOCK_BOOTSTRAP_API_KEY}',
        ]),
        'base64',
      ).toString();
    const key = await readKey();
    expect(key).toMatch(/^gdk_[A-Za-z0-9]{40}$/);
    await cluster.helm([
      'upgrade',
      'gd',
      CHART,
      '--namespace',
      ns,
      ...DB,
      '--set',
      'api.replicas=2',
    ]);
    expect(await readKey()).toBe(key);
  });

  it("the service accounts hold the code's permissions and nothing more", async () => {
    expect(
      await canI('gd-graphdock-api', ns, [
        'create',
        'agentdeployments.graphdock.dev',
        '-n',
        'elsewhere',
      ]),
    ).toBe('yes');
    expect(await canI('gd-graphdock-api', ns, ['create', 'secrets', '-n', 'elsewhere'])).toBe(
      'yes',
    );
    expect(await canI('gd-graphdock-api', ns, ['list', 'secrets', '-n', 'elsewhere'])).toBe('no');
    expect(
      await canI('gd-graphdock-api', ns, ['create', 'deployments.apps', '-n', 'elsewhere']),
    ).toBe('no');
    expect(
      await canI('gd-graphdock-operator', ns, ['create', 'deployments.apps', '-n', 'elsewhere']),
    ).toBe('yes');
    expect(
      await canI('gd-graphdock-operator', ns, [
        'patch',
        'agentrevisions.graphdock.dev',
        '--subresource=status',
        '-n',
        'elsewhere',
      ]),
    ).toBe('yes');
    expect(
      await canI('gd-graphdock-operator', ns, ['create', 'leases.coordination.k8s.io', '-n', ns]),
    ).toBe('yes');
    expect(
      await canI('gd-graphdock-operator', ns, [
        'create',
        'leases.coordination.k8s.io',
        '-n',
        'elsewhere',
      ]),
    ).toBe('no');
    expect(await canI('gd-graphdock-operator', ns, ['delete', 'pods', '-n', 'elsewhere'])).toBe(
      'no',
    );
    expect(await canI('gd-graphdock-operator', ns, ['get', 'secrets', '-n', 'kube-system'])).toBe(
      'yes',
    );
  });

  it('a namespaced install grants access only in the watched namespaces', async () => {
    const nsB = 'graphdock-scoped';
    await cluster.helm(
      [
        'install',
        'scoped',
        CHART,
        '--namespace',
        nsB,
        '--create-namespace',
        ...DB,
        ...NAMESPACED,
        '--wait',
        '--timeout',
        '180s',
      ],
      { timeoutMs: 240_000 },
    );
    const sa = 'scoped-graphdock-operator';
    expect(await canI(sa, nsB, ['create', 'deployments.apps', '-n', 'agents-a'])).toBe('yes');
    expect(await canI(sa, nsB, ['create', 'deployments.apps', '-n', 'agents-b'])).toBe('yes');
    expect(await canI(sa, nsB, ['create', 'deployments.apps', '-n', 'elsewhere'])).toBe('no');
    expect(await canI(sa, nsB, ['watch', 'listeners.graphdock.dev'])).toBe('yes');
    // Informers run per watched namespace: no reads elsewhere, not even list/watch.
    expect(await canI(sa, nsB, ['watch', 'deployments.apps', '-n', 'elsewhere'])).toBe('no');
    expect(await canI(sa, nsB, ['watch', 'deployments.apps', '-n', 'agents-b'])).toBe('yes');
    expect(
      await canI(sa, nsB, ['list', 'agentdeployments.graphdock.dev', '--all-namespaces']),
    ).toBe('no');
    expect(await canI(sa, nsB, ['get', 'secrets', '-n', 'elsewhere'])).toBe('no');
    const api = 'scoped-graphdock-api';
    expect(
      await canI(api, nsB, ['create', 'agentdeployments.graphdock.dev', '-n', 'agents-a']),
    ).toBe('yes');
    expect(
      await canI(api, nsB, ['create', 'agentdeployments.graphdock.dev', '-n', 'elsewhere']),
    ).toBe('no');
    expect(await canI(api, nsB, ['create', 'listeners.graphdock.dev'])).toBe('yes');
    expect(await canI(api, nsB, ['list', 'agentrevisions.graphdock.dev', '-n', 'elsewhere'])).toBe(
      'no',
    );
  });

  it('helm uninstall removes what it installed but keeps the CRDs (and so every custom resource)', async () => {
    await cluster.helm(['uninstall', 'scoped', '--namespace', 'graphdock-scoped', '--wait']);
    const roles = await cluster.kubectl(['-n', 'agents-a', 'get', 'roles', '-o', 'name']);
    expect(roles).not.toContain('scoped-graphdock');
    expect(await cluster.kubectl(['get', 'crd', '-o', 'name'])).toContain(
      'agentdeployments.graphdock.dev',
    );
    expect(
      load(await cluster.kubectl(['get', 'clusterrole', 'gd-graphdock-api', '-o', 'yaml'])),
    ).toBeTruthy();
  });
});
