// The api's half of the Job executor of bulk exports: it publishes each export it holds in its
// database as a BulkExport resource (runs, attempts, cancellation) for the operator to turn into
// Jobs, and takes back from the resource's status what only Kubernetes knows: a run whose Job
// gave up without its pods recording the failure (killed, out of memory) is failed here.
import type { Logger } from '../../common/logging/index.js';
import {
  API_VERSION,
  BULK_EXPORT,
  LABELS,
  bulkExportResourceName,
  type BulkExportSpec,
  type BulkExportStatus,
} from '../../common/resources/index.js';
import type { ExportRecord, ExportStore } from '../../exports/index.js';
import { KubeApiError, type CustomResource, type KubeResources } from '../kube/index.js';

export interface PublisherSettings {
  namespace: string;
  /** Attempts per run (GRAPHDOCK_EXPORT_MAX_ATTEMPTS): the pods a run's Job may start. */
  maxAttempts: number;
  /** How often an unchanged export's resource is read again for its Jobs' outcome. */
  recheckMs: number;
  /** How long after a cancel the resource is still told (it may have been missed). */
  cancelledWithinMs: number;
}

type BulkExportResource = CustomResource<BulkExportSpec, BulkExportStatus>;

export class BulkExportPublisher {
  /** Export id → what was last published and when, so a steady export costs no API call. */
  private readonly seen = new Map<string, { cancelled: boolean; at: number }>();

  constructor(
    private readonly kube: KubeResources,
    private readonly store: ExportStore,
    private readonly settings: PublisherSettings,
    private readonly logger: Logger,
  ) {}

  /** One pass over the exports to publish; an export whose write fails is tried next pass. */
  async sync(now = Date.now()): Promise<void> {
    const exports = await this.store.exportsForJobs(this.settings.cancelledWithinMs);
    const live = new Set(exports.map((e) => e.id));
    for (const id of this.seen.keys()) if (!live.has(id)) this.seen.delete(id);
    for (const exp of exports) {
      const cancelled = exp.status === 'Cancelled';
      const last = this.seen.get(exp.id);
      if (
        last &&
        last.cancelled === cancelled &&
        (cancelled || now - last.at < this.settings.recheckMs)
      )
        continue;
      try {
        await this.publish(exp, cancelled);
        this.seen.set(exp.id, { cancelled, at: now });
      } catch (err) {
        this.logger.warn({ err, export: exp.id }, 'publishing a BulkExport resource failed');
      }
    }
  }

  private async publish(exp: ExportRecord, cancelled: boolean): Promise<void> {
    const name = bulkExportResourceName(exp.id);
    const { namespace } = this.settings;
    const current = await this.kube.get<BulkExportSpec, BulkExportStatus>(
      BULK_EXPORT,
      name,
      namespace,
    );
    if (!current) {
      if (cancelled) return; // never started as Jobs: nothing to stop
      await this.create(exp, name);
      return;
    }
    if (cancelled && !current.spec.cancelled) {
      await this.kube.replace(BULK_EXPORT, {
        ...current,
        spec: { ...current.spec, cancelled: true },
      });
      this.logger.info({ export: exp.id }, 'BulkExport cancelled: its Jobs will be deleted');
      return;
    }
    await this.failGivenUpRuns(current);
  }

  private async create(exp: ExportRecord, name: string): Promise<void> {
    const runs = await this.store.listRuns(exp.id);
    const resource: BulkExportResource = {
      apiVersion: API_VERSION,
      kind: BULK_EXPORT.kind,
      metadata: {
        name,
        namespace: this.settings.namespace,
        labels: { [LABELS.workspaceId]: exp.tenant_id, [LABELS.bulkExportId]: exp.id },
      },
      spec: {
        export_id: exp.id,
        tenant_id: exp.tenant_id,
        session_id: exp.session_id,
        destination_id: exp.bulk_export_destination_id,
        runs: runs.map((r) => ({ id: r.id, start_time: r.start_time, end_time: r.end_time })),
        max_attempts: this.settings.maxAttempts,
      },
    };
    try {
      await this.kube.create(BULK_EXPORT, resource);
      this.logger.info({ export: exp.id, runs: runs.length }, 'BulkExport resource created');
    } catch (err) {
      // Another api replica published it first.
      if (!(err instanceof KubeApiError && err.status === 409)) throw err;
    }
  }

  /** Runs whose Job failed for good, while the database still expects another attempt. */
  private async failGivenUpRuns(resource: BulkExportResource): Promise<void> {
    for (const run of resource.status?.runs ?? []) {
      if (run.phase !== 'Failed') continue;
      const message = `Job ${run.job} failed after ${run.attempts} attempt(s)${run.message ? `: ${run.message}` : ''}`;
      if (await this.store.failRunOfJob(run.id, message))
        this.logger.warn({ exportRun: run.id, job: run.job }, 'export run failed by its Job');
    }
  }
}
