// What a BulkExport becomes: one Kubernetes Job per day run, running `graphdock export-run
// <run id>` in the Graphdock image, and the status mirrored back from those Jobs. Pure functions
// of the resource, its Jobs and the operator's settings.
import type { V1EnvVar, V1Job, V1JobCondition } from '@kubernetes/client-node';
import {
  API_VERSION,
  BULK_EXPORT,
  LABELS,
  type BulkExportStatus,
  type ExportJobStatus,
} from '../../common/resources/index.js';
import { mergeConditions, type ConditionInput } from './conditions.js';
import { MANAGED_BY } from './names.js';
import type { BulkExport } from './types.js';

/** `graphdock export-run` exits 3 when the run failed for good (cli/export-commands.ts). */
export const EXIT_FAILED = 3;

export interface SecretKeyRef {
  name: string;
  key: string;
}

export interface ExportJobSettings {
  /** The Graphdock image (the operator's own). */
  image: string;
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** DATABASE_URL of the api's database. */
  databaseSecret: SecretKeyRef;
  /** GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS, which open the destinations' credentials. */
  keysSecret: SecretKeyRef;
  /** Jobs of one export running at once. */
  concurrency: number;
  /** Further environment of the pods (GRAPHDOCK_EXPORT_*, GRAPHDOCK_BULK_EXPORT_*). */
  env?: Record<string, string>;
  serviceAccountName?: string;
  /** A run's Job is stopped after this long (LangSmith's export runtime limit is 72 h). */
  activeDeadlineSeconds: number;
}

/** DNS-1123 labels may not start with a digit; run ids are UUIDs. */
export const exportJobName = (runId: string) => `gdx-${runId}`;

export function exportJobLabels(exportId: string, runId: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'graphdock-export-run',
    'app.kubernetes.io/managed-by': MANAGED_BY,
    [LABELS.bulkExportId]: exportId,
    [LABELS.exportRunId]: runId,
  };
}

/** The Job of one run: as many pods as the run has attempts, ended early by a final failure. */
export function exportJob(be: BulkExport, runId: string, settings: ExportJobSettings): V1Job {
  const labels = exportJobLabels(be.spec.export_id, runId);
  const env: V1EnvVar[] = [
    { name: 'DATABASE_URL', valueFrom: { secretKeyRef: settings.databaseSecret } },
    {
      name: 'GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS',
      valueFrom: { secretKeyRef: settings.keysSecret },
    },
    ...Object.entries(settings.env ?? {})
      .filter(([name]) => name !== 'GRAPHDOCK_EXPORT_MAX_ATTEMPTS')
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, value]) => ({ name, value })),
    // The run's own attempt count must run out with the Job's pods, not before or after.
    { name: 'GRAPHDOCK_EXPORT_MAX_ATTEMPTS', value: String(be.spec.max_attempts) },
  ];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: exportJobName(runId),
      namespace: be.metadata.namespace,
      labels,
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: BULK_EXPORT.kind,
          name: be.metadata.name,
          uid: be.metadata.uid,
          controller: true,
        },
      ],
    },
    spec: {
      backoffLimit: be.spec.max_attempts - 1,
      activeDeadlineSeconds: settings.activeDeadlineSeconds,
      // A final failure (bad credentials, a bucket that does not exist) ends the Job at once.
      podFailurePolicy: {
        rules: [
          {
            action: 'FailJob',
            onExitCodes: { containerName: 'export-run', operator: 'In', values: [EXIT_FAILED] },
          },
        ],
      },
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          ...(settings.serviceAccountName
            ? { serviceAccountName: settings.serviceAccountName }
            : {}),
          // The run talks to PostgreSQL and S3 only, never to the Kubernetes API.
          automountServiceAccountToken: false,
          containers: [
            {
              name: 'export-run',
              image: settings.image,
              ...(settings.imagePullPolicy ? { imagePullPolicy: settings.imagePullPolicy } : {}),
              args: ['export-run', runId],
              env,
              securityContext: { allowPrivilegeEscalation: false },
            },
          ],
        },
      },
    },
  };
}

const condition = (job: V1Job, type: string): V1JobCondition | undefined =>
  job.status?.conditions?.find((c) => c.type === type && c.status === 'True');

/** One run as its Job shows it; a run whose Job is gone keeps the outcome last recorded. */
export function runPhase(
  runId: string,
  job: V1Job | undefined,
  previous: ExportJobStatus | undefined,
): ExportJobStatus {
  const name = exportJobName(runId);
  if (!job) return previous ?? { id: runId, job: name, phase: 'Pending', attempts: 0 };
  const s = job.status ?? {};
  const attempts = (s.failed ?? 0) + (s.succeeded ?? 0) + (s.active ?? 0);
  const failed = condition(job, 'Failed');
  if (failed)
    return {
      id: runId,
      job: name,
      phase: 'Failed',
      attempts,
      message: `${failed.reason ?? 'Failed'}: ${failed.message ?? ''}`.slice(0, 1024),
    };
  if (condition(job, 'Complete')) return { id: runId, job: name, phase: 'Succeeded', attempts };
  return { id: runId, job: name, phase: (s.active ?? 0) > 0 ? 'Running' : 'Pending', attempts };
}

const finished = (r: ExportJobStatus) => r.phase === 'Succeeded' || r.phase === 'Failed';

export interface ExportPlan {
  status: BulkExportStatus;
  /** Runs to start Jobs for now (within the export's concurrency). */
  start: string[];
  /** Jobs to delete: those still running once the export is cancelled. */
  delete: string[];
}

/** What to do with a BulkExport given its Jobs (by run id), and the status that results. */
export function planExport(
  be: BulkExport,
  jobs: ReadonlyMap<string, V1Job>,
  concurrency: number,
  now = new Date().toISOString(),
): ExportPlan {
  const previous = new Map((be.status?.runs ?? []).map((r) => [r.id, r]));
  const runs = be.spec.runs.map((r) => runPhase(r.id, jobs.get(r.id), previous.get(r.id)));
  const cancelled = be.spec.cancelled === true;
  const start: string[] = [];
  const del: string[] = [];
  if (cancelled) {
    for (const r of runs) if (!finished(r) && jobs.has(r.id)) del.push(r.job);
  } else {
    let active = runs.filter((r) => !finished(r) && jobs.has(r.id)).length;
    for (const r of runs) {
      if (active >= concurrency) break;
      if (jobs.has(r.id) || finished(r)) continue;
      start.push(r.id);
      active++;
    }
  }
  const count = (phase: ExportJobStatus['phase']) => runs.filter((r) => r.phase === phase).length;
  const succeeded = count('Succeeded');
  const failed = count('Failed');
  const active = count('Running');
  const phase = cancelled
    ? 'Cancelled'
    : failed > 0
      ? 'Failed'
      : succeeded === runs.length
        ? 'Completed'
        : active > 0 || succeeded > 0
          ? 'Running'
          : 'Pending';
  return {
    status: {
      observedGeneration: be.metadata.generation,
      conditions: mergeConditions(
        be.status?.conditions,
        exportConditions(phase, succeeded, runs.length),
        be.metadata.generation,
        now,
      ),
      phase,
      progress: `${succeeded}/${runs.length}`,
      succeeded,
      failed,
      active,
      runs,
    },
    start,
    delete: del,
  };
}

function exportConditions(
  phase: NonNullable<BulkExportStatus['phase']>,
  succeeded: number,
  total: number,
): ConditionInput[] {
  const done = `${succeeded} of ${total} runs completed`;
  return [
    {
      type: 'Ready',
      status: phase === 'Completed' ? 'True' : 'False',
      reason: phase,
      message: done,
    },
    {
      type: 'Progressing',
      status: phase === 'Pending' || phase === 'Running' ? 'True' : 'False',
      reason: phase,
      message: done,
    },
    {
      type: 'Degraded',
      status: phase === 'Failed' ? 'True' : 'False',
      reason: phase === 'Failed' ? 'JobFailed' : 'AsExpected',
      message: phase === 'Failed' ? 'a run failed after its attempts' : 'no run failed',
    },
  ];
}
