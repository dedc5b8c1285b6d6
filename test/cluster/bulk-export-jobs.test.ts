// Bulk export runs as Kubernetes Jobs, on the local control plane (kwok nodes run no container:
// a Job's pod "succeeds" as soon as it is bound, and stays Pending while the node is cordoned).
// A real `graphdock api` with GRAPHDOCK_EXPORT_EXECUTOR=jobs publishes BulkExports; a real
// `graphdock operator` turns them into Jobs. Checked: the Jobs are created (one per day run,
// within the concurrency), retried up to the attempts and then failed (and the api fails the run
// and the export), deleted on cancel, and their outcome mirrored into the BulkExport's status.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useControlPlane } from '../support/control-plane.js';
import {
  grantOperatorRbac,
  startOperatorProcess,
  type RunningOperator,
} from '../support/operator.js';
import { useS3Server } from '../support/s3.js';
import { until } from './operator-helpers.js';

const NS = 'exports';
const BUCKET = 'exports';
const KEYS = `k1:${randomBytes(32).toString('base64')}`;

const s3 = useS3Server({ buckets: [BUCKET] });
const cp = useControlPlane({
  namespaces: [NS],
  apiEnv: {
    GRAPHDOCK_EXPORT_EXECUTOR: 'jobs',
    GRAPHDOCK_EXPORT_JOBS_NAMESPACE: NS,
    GRAPHDOCK_EXPORT_MAX_ATTEMPTS: '2',
    GRAPHDOCK_EXPORT_POLL_MS: '200',
    GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS: KEYS,
  },
});
let operator: RunningOperator;
let destinationId = '';
let sessionId = '';
let node = '';

interface BulkExportResource {
  spec: { export_id: string; runs: { id: string }[]; max_attempts: number; cancelled?: boolean };
  status?: {
    phase?: string;
    progress?: string;
    runs?: { id: string; job: string; phase: string; attempts: number }[];
    conditions?: { type: string; status: string }[];
  };
}
interface Job {
  metadata: { name: string; labels: Record<string, string>; ownerReferences: { kind: string }[] };
  spec: {
    backoffLimit: number;
    template: {
      spec: {
        containers: {
          image: string;
          args: string[];
          env: { name: string; value?: string; valueFrom?: unknown }[];
        }[];
      };
    };
  };
}

async function call(method: string, path: string, json?: unknown) {
  const res = await cp.http(`/api/v1${path}`, {
    method,
    headers: { 'x-tenant-id': cp.workspaceId },
    ...(json !== undefined ? { json } : {}),
  });
  const text = await res.text();
  expect(res.status, `${method} ${path}: ${text}`).toBeLessThan(300);
  return JSON.parse(text) as Record<string, unknown>;
}

const resource = (exportId: string) =>
  cp.kubectlJson<BulkExportResource>(['get', 'bulkexport', `export-${exportId}`, '-n', NS]);
const jobs = async (exportId: string) =>
  (
    await cp.kubectlJson<{ items: Job[] }>([
      'get',
      'jobs',
      '-n',
      NS,
      '-l',
      `graphdock.dev/bulk-export-id=${exportId}`,
    ])
  ).items;
const pods = async (job: string) =>
  (
    await cp.kubectlJson<{ items: { metadata: { name: string }; status: { phase: string } }[] }>([
      'get',
      'pods',
      '-n',
      NS,
      '-l',
      `job-name=${job}`,
    ])
  ).items;

async function createExport(days: number) {
  const start = Date.parse('2026-11-01T00:00:00Z');
  return call('POST', '/bulk-exports', {
    bulk_export_destination_id: destinationId,
    session_id: sessionId,
    start_time: new Date(start).toISOString(),
    end_time: new Date(start + days * 86_400_000).toISOString(),
    format: 'Parquet',
  });
}

beforeAll(async () => {
  const kubeconfig = await grantOperatorRbac(cp.cluster);
  operator = await startOperatorProcess(kubeconfig, {
    computeId: 'cluster-a',
    identity: 'operator-a',
    env: {
      GRAPHDOCK_EXPORT_JOB_IMAGE: 'graphdock.test/graphdock:1',
      GRAPHDOCK_EXPORT_JOBS_NAMESPACE: NS,
      GRAPHDOCK_EXPORT_JOB_DATABASE_SECRET: 'gd-database',
      GRAPHDOCK_EXPORT_JOB_KEYS_SECRET: 'gd-bulk-export:KEYS',
      GRAPHDOCK_EXPORT_JOB_CONCURRENCY: '1',
    },
  });
  const dest = await call('POST', '/bulk-exports/destinations', {
    destination_type: 's3',
    display_name: 'exports',
    config: { bucket_name: BUCKET, prefix: 'jobs', endpoint_url: s3.endpoint },
    credentials: s3.writer,
  });
  destinationId = dest.id as string;
  sessionId = (await call('POST', '/sessions', { name: `jobs-${randomUUID()}` })).id as string;
  node = cp.cluster.nodeNames[0]!;
  // Pods stay Pending (their Jobs active) until the node takes them again.
  await cp.cluster.kubectl(['cordon', node]);
}, 240_000);
afterAll(async () => {
  await operator?.stop();
});

describe('bulk export runs as Jobs', () => {
  it('one Job per run within the concurrency, retried up to the attempts, then the run and the export fail', async () => {
    const exp = await createExport(2);
    const id = exp.id as string;
    const be = await until(
      'the BulkExport resource',
      () => resource(id),
      (r) => r.status?.progress === '0/2',
    );
    expect(be.spec.runs).toHaveLength(2);
    expect(be.spec.max_attempts).toBe(2);

    // Concurrency 1: one Job for the first day only.
    const [job] = await until(
      'the first Job',
      () => jobs(id),
      (j) => j.length === 1,
    );
    const firstRun = be.spec.runs[0]!.id;
    expect(job!.metadata.name).toBe(`gdx-${firstRun}`);
    expect(job!.metadata.ownerReferences[0]!.kind).toBe('BulkExport');
    expect(job!.spec.backoffLimit).toBe(1);
    const container = job!.spec.template.spec.containers[0]!;
    expect(container.image).toBe('graphdock.test/graphdock:1');
    expect(container.args).toEqual(['export-run', firstRun]);
    expect(container.env).toEqual(
      expect.arrayContaining([
        {
          name: 'DATABASE_URL',
          valueFrom: { secretKeyRef: { name: 'gd-database', key: 'DATABASE_URL' } },
        },
        {
          name: 'GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS',
          valueFrom: { secretKeyRef: { name: 'gd-bulk-export', key: 'KEYS' } },
        },
        { name: 'GRAPHDOCK_EXPORT_MAX_ATTEMPTS', value: '2' },
      ]),
    );

    // Each attempt's pod fails (as a crashed pod would, recording nothing in the database).
    for (let attempt = 1; attempt <= 2; attempt++) {
      const [pod] = await until(
        `pod of attempt ${attempt}`,
        () => pods(job!.metadata.name),
        (p) => p.filter((x) => x.status.phase === 'Pending').length === 1,
        60_000,
      ).then((p) => p.filter((x) => x.status.phase === 'Pending'));
      await cp.cluster.kubectl([
        'patch',
        'pod',
        pod!.metadata.name,
        '-n',
        NS,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { phase: 'Failed', reason: 'Evicted', message: 'test' } }),
      ]);
    }
    const failed = await until(
      'the BulkExport to fail',
      () => resource(id),
      (r) => r.status?.phase === 'Failed',
      90_000,
    );
    expect(failed.status?.runs?.[0]).toMatchObject({ id: firstRun, phase: 'Failed', attempts: 2 });
    expect(failed.status?.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Degraded', status: 'True' }),
        expect.objectContaining({ type: 'Ready', status: 'False' }),
      ]),
    );
    // The api takes the Job's verdict into the database: the run and its export failed.
    const run = await until(
      'the run to fail in the api',
      async () =>
        (await call('GET', `/bulk-exports/${id}/runs/${firstRun}`)) as {
          status: string;
          errors: Record<string, string> | null;
        },
      (r) => r.status === 'Failed',
      60_000,
    );
    expect(Object.values(run.errors ?? {}).join()).toMatch(/Job gdx-.* failed after 2 attempt/);
    expect((await call('GET', `/bulk-exports/${id}`)).status).toBe('Failed');
  });

  it('cancelling an export deletes its running Job', async () => {
    const exp = await createExport(1);
    const id = exp.id as string;
    await until(
      'its Job',
      () => jobs(id),
      (j) => j.length === 1,
    );
    await call('PATCH', `/bulk-exports/${id}`, { status: 'Cancelled' });
    const be = await until(
      'the BulkExport to be cancelled',
      () => resource(id),
      (r) => r.status?.phase === 'Cancelled',
      60_000,
    );
    expect(be.spec.cancelled).toBe(true);
    await until(
      'the Job to be deleted',
      () => jobs(id),
      (j) => j.length === 0,
      60_000,
    );
  });

  it('Jobs that complete are mirrored as Completed, with printer columns', async () => {
    const exp = await createExport(2);
    const id = exp.id as string;
    await until(
      'its first Job',
      () => jobs(id),
      (j) => j.length === 1,
    );
    await cp.cluster.kubectl(['uncordon', node]);
    const be = await until(
      'the BulkExport to complete',
      () => resource(id),
      (r) => r.status?.phase === 'Completed',
      90_000,
    );
    expect(be.status?.progress).toBe('2/2');
    expect(be.status?.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Ready', status: 'True' })]),
    );
    expect((await jobs(id)).map((j) => j.metadata.name).sort()).toEqual(
      be.spec.runs.map((r) => `gdx-${r.id}`).sort(),
    );
    const table = await cp.cluster.kubectl(['get', 'bulkexports', '-n', NS, `export-${id}`]);
    expect(table).toMatch(/EXPORT\s+PHASE\s+RUNS\s+ACTIVE\s+READY\s+AGE/);
    expect(table).toMatch(new RegExp(`${id}\\s+Completed\\s+2/2\\s+0\\s+True`));
  });
});
