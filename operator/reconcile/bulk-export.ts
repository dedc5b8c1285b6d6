// Reconciles one BulkExport (key namespace/name) into its runs' Jobs and mirrors them into its
// status: level-triggered like the deployment controller, so a missed event or a restart of the
// operator changes nothing but timing.
import type { V1Job } from '@kubernetes/client-node';
import type { Logger } from '../../common/logging/index.js';
import { BULK_EXPORT, GROUP, LABELS, VERSION } from '../../common/resources/index.js';
import type { KubeWriter, ObjectCache, ResourceRef } from '../kube/index.js';
import { sameStatus } from './conditions.js';
import { exportJob, planExport, type ExportJobSettings } from './export-jobs.js';
import type { BulkExport } from './types.js';

export interface ExportInformers {
  bulkExports: ObjectCache<BulkExport>;
  /** Jobs labelled with a bulk export id, in the exports' namespace. */
  jobs: ObjectCache<V1Job>;
}

export class BulkExportController {
  constructor(
    private readonly informers: ExportInformers,
    private readonly writer: KubeWriter,
    private readonly settings: ExportJobSettings,
    private readonly logger: Logger,
  ) {}

  async reconcile(key: string): Promise<void> {
    const be = this.informers.bulkExports.get(key);
    // Gone: its Jobs go with it (owner references).
    if (!be || be.metadata.deletionTimestamp) return;
    const jobs = new Map<string, V1Job>();
    for (const job of this.informers.jobs.list()) {
      const labels = job.metadata?.labels ?? {};
      if (job.metadata?.namespace !== be.metadata.namespace) continue;
      if (labels[LABELS.bulkExportId] !== be.spec.export_id) continue;
      const runId = labels[LABELS.exportRunId];
      if (runId && !job.metadata?.deletionTimestamp) jobs.set(runId, job);
    }
    const plan = planExport(be, jobs, this.settings.concurrency);
    const log = this.logger.child({ bulkExport: key });
    for (const name of plan.delete) {
      await this.writer.deleteIfExists({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name, namespace: be.metadata.namespace },
      });
      log.info({ job: name }, 'export Job deleted: the export was cancelled');
    }
    for (const runId of plan.start) {
      await this.writer.apply(exportJob(be, runId, this.settings));
      log.info({ exportRun: runId }, 'export Job created');
    }
    if (sameStatus(be.status, plan.status)) return;
    const ref: ResourceRef = {
      group: GROUP,
      version: VERSION,
      plural: BULK_EXPORT.plural,
      kind: BULK_EXPORT.kind,
      name: be.metadata.name,
      namespace: be.metadata.namespace,
      uid: be.metadata.uid,
    };
    await this.writer.applyStatus(ref, plan.status);
    if (plan.status.phase !== be.status?.phase)
      await this.writer
        .event(
          ref,
          plan.status.phase === 'Failed' ? 'Warning' : 'Normal',
          `Export${plan.status.phase}`,
          `${plan.status.progress} runs completed`,
        )
        .catch((err: unknown) => log.debug({ err }, 'event not recorded'));
  }
}
