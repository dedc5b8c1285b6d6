import type { V1Job } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { loadOperatorEnv } from '../../common/config/index.js';
import { exportJob, planExport, runPhase, type BulkExport } from '../../operator/index.js';

const RUNS = [
  '11111111-1111-4111-8111-111111111111',
  '22222222-2222-4222-8222-222222222222',
  '33333333-3333-4333-8333-333333333333',
];

function resource(over: Partial<BulkExport['spec']> = {}, status?: BulkExport['status']) {
  return {
    apiVersion: 'graphdock.dev/v1alpha1',
    kind: 'BulkExport',
    metadata: { name: 'export-e', namespace: 'gd', uid: 'uid-1', generation: 1 },
    spec: {
      export_id: 'eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee',
      tenant_id: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa',
      session_id: 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb',
      destination_id: 'cccccccc-cccc-4ccc-8ccc-cccccccccccc',
      runs: RUNS.map((id, i) => ({
        id,
        start_time: `2026-01-0${i + 1}T00:00:00.000Z`,
        end_time: `2026-01-0${i + 2}T00:00:00.000Z`,
      })),
      max_attempts: 3,
      ...over,
    },
    ...(status ? { status } : {}),
  } satisfies BulkExport;
}

const SETTINGS = {
  image: 'graphdock.local/graphdock:1',
  imagePullPolicy: 'IfNotPresent' as const,
  databaseSecret: { name: 'gd-database', key: 'DATABASE_URL' },
  keysSecret: { name: 'gd-bulk-export', key: 'GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS' },
  concurrency: 2,
  activeDeadlineSeconds: 3600,
  env: { GRAPHDOCK_EXPORT_MAX_ATTEMPTS: '99', GRAPHDOCK_EXPORT_ROWS_PER_FILE: '100' },
};

function job(status: V1Job['status']): V1Job {
  return { metadata: { name: 'j' }, status };
}

describe('export Jobs', () => {
  it('runs `graphdock export-run <run>` with the secrets, attempts bounded by the resource', () => {
    const j = exportJob(resource(), RUNS[0]!, SETTINGS);
    expect(j.metadata?.name).toBe(`gdx-${RUNS[0]}`);
    expect(j.metadata?.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'BulkExport',
        name: 'export-e',
        uid: 'uid-1',
        controller: true,
      }),
    ]);
    expect(j.spec?.backoffLimit).toBe(2); // 3 attempts: the first pod and two retries
    expect(j.spec?.podFailurePolicy?.rules[0]).toMatchObject({
      action: 'FailJob',
      onExitCodes: { operator: 'In', values: [3] },
    });
    const pod = j.spec!.template.spec!;
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.automountServiceAccountToken).toBe(false);
    const c = pod.containers[0]!;
    expect(c.image).toBe('graphdock.local/graphdock:1');
    expect(c.args).toEqual(['export-run', RUNS[0]]);
    expect(c.env).toEqual([
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: SETTINGS.databaseSecret } },
      {
        name: 'GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS',
        valueFrom: { secretKeyRef: SETTINGS.keysSecret },
      },
      { name: 'GRAPHDOCK_EXPORT_ROWS_PER_FILE', value: '100' },
      // The resource's attempts win over the operator's own setting.
      { name: 'GRAPHDOCK_EXPORT_MAX_ATTEMPTS', value: '3' },
    ]);
    expect(j.spec?.template.metadata?.labels).toMatchObject({
      'graphdock.dev/bulk-export-id': 'eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee',
      'graphdock.dev/export-run-id': RUNS[0],
    });
  });

  it('starts Jobs up to the concurrency, then one per finished run', () => {
    const first = planExport(resource(), new Map(), 2);
    expect(first.start).toEqual([RUNS[0], RUNS[1]]);
    expect(first.status).toMatchObject({ phase: 'Pending', progress: '0/3', active: 0 });

    const jobs = new Map([
      [RUNS[0]!, job({ succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] })],
      [RUNS[1]!, job({ active: 1, failed: 1 })],
    ]);
    const next = planExport(resource(), jobs, 2);
    expect(next.start).toEqual([RUNS[2]]);
    expect(next.status).toMatchObject({
      phase: 'Running',
      progress: '1/3',
      succeeded: 1,
      active: 1,
    });
    expect(next.status.runs?.[1]).toMatchObject({ phase: 'Running', attempts: 2 });
  });

  it('a run whose Job is gone keeps its recorded outcome and gets no new Job', () => {
    const done = planExport(
      resource(
        {},
        {
          runs: RUNS.map((id) => ({
            id,
            job: `gdx-${id}`,
            phase: 'Succeeded' as const,
            attempts: 1,
          })),
        },
      ),
      new Map(),
      2,
    );
    expect(done.start).toEqual([]);
    expect(done.status.phase).toBe('Completed');
    expect(done.status.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  it('a failed Job fails the export and marks it Degraded', () => {
    const failed = job({
      failed: 3,
      conditions: [
        { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'limit' },
      ],
    });
    expect(runPhase(RUNS[0]!, failed, undefined)).toMatchObject({
      phase: 'Failed',
      attempts: 3,
      message: 'BackoffLimitExceeded: limit',
    });
    const plan = planExport(resource(), new Map([[RUNS[0]!, failed]]), 1);
    expect(plan.status.phase).toBe('Failed');
    expect(plan.status.conditions?.find((c) => c.type === 'Degraded')?.status).toBe('True');
  });

  it('a cancelled export deletes its unfinished Jobs and starts none', () => {
    const jobs = new Map([
      [RUNS[0]!, job({ succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] })],
      [RUNS[1]!, job({ active: 1 })],
    ]);
    const plan = planExport(resource({ cancelled: true }), jobs, 2);
    expect(plan.delete).toEqual([`gdx-${RUNS[1]}`]);
    expect(plan.start).toEqual([]);
    expect(plan.status.phase).toBe('Cancelled');
  });

  it('the operator runs export Jobs only when given an image, namespace and both secrets', () => {
    expect(loadOperatorEnv({}).exportJobs).toBeUndefined();
    expect(() => loadOperatorEnv({ GRAPHDOCK_EXPORT_JOB_IMAGE: 'gd:1' })).toThrow(
      /GRAPHDOCK_EXPORT_JOB_DATABASE_SECRET/,
    );
    const env = loadOperatorEnv({
      GRAPHDOCK_EXPORT_JOB_IMAGE: 'gd:1',
      POD_NAMESPACE: 'gd',
      GRAPHDOCK_EXPORT_JOB_DATABASE_SECRET: 'gd-database',
      GRAPHDOCK_EXPORT_JOB_KEYS_SECRET: 'mine:KEYS',
      GRAPHDOCK_EXPORT_RETRY_DELAY_MS: '1000',
      GRAPHDOCK_EXPORT_EXECUTOR: 'jobs',
      GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS: 'k1:secret',
    });
    expect(env.exportJobs).toMatchObject({
      namespace: 'gd',
      databaseSecret: { name: 'gd-database', key: 'DATABASE_URL' },
      keysSecret: { name: 'mine', key: 'KEYS' },
      // Run settings pass on; the executor choice and key values never do.
      env: { GRAPHDOCK_EXPORT_RETRY_DELAY_MS: '1000' },
    });
  });
});
