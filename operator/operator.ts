// The operator's composition root: informers feed a keyed work queue, whose workers reconcile
// only while this replica holds the leader-election lease.
import { KubeConfig, type V1Deployment, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { loadDefaultKubeConfig } from '../common/config/index.js';
import type { Logger } from '../common/logging/index.js';
import { createMetricsRegistry } from '../common/metrics/index.js';
import { API_VERSION, BULK_EXPORT, LABELS } from '../common/resources/index.js';
import { DatabaseProvisioner, type DatabaseServerSettings } from './database/index.js';
import { OperatorMetrics, startProbeServer } from './http/index.js';
import {
  describeError,
  Informer,
  KubeWriter,
  LeaderElector,
  namespacedKindCache,
  objectKey,
  type ObjectCache,
  reuseConnections,
  WorkQueue,
} from './kube/index.js';
import {
  BulkExportController,
  DatabaseStep,
  DeploymentController,
  ListenerHeartbeat,
  MANAGED_BY,
  type AgentDeployment,
  type AgentRevision,
  type BulkExport,
  type ExportJobSettings,
  type Listener,
} from './reconcile/index.js';

export interface OperatorOptions {
  computeId: string;
  /** Empty: watch every namespace. Otherwise one informer per namespace and kind. */
  watchNamespaces: readonly string[];
  version: string;
  logger: Logger;
  kubeConfig?: KubeConfig;
  port: number;
  host: string;
  workers: number;
  fieldManager: string;
  leaderElection: {
    namespace: string;
    name: string;
    identity: string;
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
  };
  progressDeadlineSeconds: number;
  /** Base URL of `graphdock api` as agent pods reach it; their runtimes check API keys there. */
  controlPlaneUrl?: string;
  heartbeatMs: number;
  retainDatabases: boolean;
  /** How long an unfinished api write may stay before its objects count as orphans. */
  orphanGraceMs: number;
  database?: DatabaseServerSettings;
  /** Bulk exports run as Jobs: BulkExports in `namespace` become Jobs there. Absent: off. */
  exportJobs?: ExportJobSettings & { namespace: string };
}

export interface Operator {
  url: string;
  isLeader(): boolean;
  stop(): Promise<void>;
}

const CONTROLLER = 'agentdeployment';
const EXPORT_CONTROLLER = 'bulkexport';
const RESYNC_MS = 5 * 60_000;
/** How often (at most) revision Secrets without an owner (left by older versions) are looked for. */
const SECRET_SWEEP_MS = 60_000;
const INFORMER_STALL_MS = 60_000;

export async function startOperator(options: OperatorOptions): Promise<Operator> {
  const { logger } = options;
  let kubeConfig = options.kubeConfig;
  if (!kubeConfig) {
    kubeConfig = loadDefaultKubeConfig(new KubeConfig());
  }
  reuseConnections(kubeConfig);
  const registry = createMetricsRegistry();
  const metrics = new OperatorMetrics(registry);
  const informerLogger = logger.child({ context: 'informer' });
  const namespaced = <T extends object>(
    apiVersion: string,
    kind: string,
    plural: string,
    labelSelector?: string,
  ) =>
    namespacedKindCache<T>(
      kubeConfig,
      {
        apiVersion,
        kind,
        apiPath: apiVersion === 'v1' ? '/api/v1' : `/apis/${apiVersion}`,
        plural,
        labelSelector,
        logger: informerLogger,
      },
      options.watchNamespaces,
    );
  const informers = {
    deployments: namespaced<AgentDeployment>(API_VERSION, 'AgentDeployment', 'agentdeployments'),
    revisions: namespaced<AgentRevision>(API_VERSION, 'AgentRevision', 'agentrevisions'),
    // Listeners are cluster-scoped: always one cluster-wide informer.
    listeners: new Informer<Listener>(kubeConfig, {
      apiVersion: API_VERSION,
      kind: 'Listener',
      path: `/apis/${API_VERSION}/listeners`,
      logger: informerLogger,
    }),
    workloads: namespaced<V1Deployment>(
      'apps/v1',
      'Deployment',
      'deployments',
      `app.kubernetes.io/managed-by=${MANAGED_BY}`,
    ),
    pods: namespaced<V1Pod>('v1', 'Pod', 'pods', `app.kubernetes.io/managed-by=${MANAGED_BY}`),
  };
  // BulkExports and their Jobs live in one namespace (the api's), watched whatever the others.
  const exportsNs = options.exportJobs?.namespace;
  const exportInformers = exportsNs
    ? {
        bulkExports: new Informer<BulkExport>(kubeConfig, {
          apiVersion: API_VERSION,
          kind: BULK_EXPORT.kind,
          path: `/apis/${API_VERSION}/namespaces/${exportsNs}/${BULK_EXPORT.plural}`,
          namespace: exportsNs,
          logger: informerLogger,
        }),
        jobs: new Informer<V1Job>(kubeConfig, {
          apiVersion: 'batch/v1',
          kind: 'Job',
          path: `/apis/batch/v1/namespaces/${exportsNs}/jobs`,
          namespace: exportsNs,
          labelSelector: `app.kubernetes.io/managed-by=${MANAGED_BY},${LABELS.bulkExportId}`,
          logger: informerLogger,
        }),
      }
    : undefined;
  const all = [
    ...Object.values(informers),
    ...Object.values(exportInformers ?? {}),
  ] as ObjectCache<object>[];
  const synced = () => all.every((i) => i.synced);

  const queue = new WorkQueue({
    onDepth: (d) => metrics.queueDepth.set({ name: CONTROLLER }, d),
    onAdd: () => metrics.queueAdds.inc({ name: CONTROLLER }),
    onRetry: () => metrics.queueRetries.inc({ name: CONTROLLER }),
  });
  const writer = new KubeWriter(kubeConfig, options.fieldManager);
  const provisioner = options.database ? new DatabaseProvisioner(options.database) : undefined;
  const controller = new DeploymentController(
    informers,
    writer,
    new DatabaseStep(writer, provisioner),
    {
      computeId: options.computeId,
      progressDeadlineSeconds: options.progressDeadlineSeconds,
      controlPlaneUrl: options.controlPlaneUrl,
      retainDatabases: options.retainDatabases,
      orphanGraceMs: options.orphanGraceMs,
    },
    logger.child({ context: 'reconcile' }),
  );
  const exportQueue = new WorkQueue({
    onDepth: (d) => metrics.queueDepth.set({ name: EXPORT_CONTROLLER }, d),
    onAdd: () => metrics.queueAdds.inc({ name: EXPORT_CONTROLLER }),
    onRetry: () => metrics.queueRetries.inc({ name: EXPORT_CONTROLLER }),
  });
  const exportController =
    exportInformers && options.exportJobs
      ? new BulkExportController(
          exportInformers,
          writer,
          options.exportJobs,
          logger.child({ context: 'bulk-export' }),
        )
      : undefined;
  const enqueueExports = () =>
    exportInformers?.bulkExports.list().forEach((b) => exportQueue.add(objectKey(b)));
  exportInformers?.bulkExports.on((_e, b) => exportQueue.add(objectKey(b)));
  exportInformers?.jobs.on((_e, job) => {
    const id = job.metadata?.labels?.[LABELS.bulkExportId];
    const be = exportInformers.bulkExports.list().find((b) => b.spec.export_id === id);
    if (be) exportQueue.add(objectKey(be));
  });

  const heartbeat = new ListenerHeartbeat(
    informers.listeners,
    writer,
    options.computeId,
    options.version,
    options.watchNamespaces,
    logger.child({ context: 'heartbeat' }),
  );

  // Events are only triggers: each maps to the key of the AgentDeployment it concerns.
  const enqueueAll = () => informers.deployments.list().forEach((d) => queue.add(objectKey(d)));
  informers.deployments.on((_e, d) => queue.add(objectKey(d)));
  const byDeploymentLabel = (o: {
    metadata?: { namespace?: string; labels?: Record<string, string> };
  }) => {
    const id = o.metadata?.labels?.[LABELS.deploymentId];
    if (id) queue.add(`${o.metadata?.namespace}/${id}`);
  };
  informers.revisions.on((_e, r) => byDeploymentLabel(r));
  informers.workloads.on((_e, w) => byDeploymentLabel(w));
  informers.pods.on((_e, p) => byDeploymentLabel(p));
  // A listener's own status (our heartbeat) changes often; only spec changes matter here.
  const listenerGenerations = new Map<string, number | undefined>();
  informers.listeners.on((event, l) => {
    const before = listenerGenerations.get(l.metadata.name);
    if (event === 'delete') listenerGenerations.delete(l.metadata.name);
    else listenerGenerations.set(l.metadata.name, l.metadata.generation);
    if (event === 'update' && before === l.metadata.generation) return;
    const id = l.metadata.labels?.[LABELS.listenerId];
    for (const d of informers.deployments.list())
      if (d.metadata.labels?.[LABELS.listenerId] === id) queue.add(objectKey(d));
  });
  informers.revisions.on((event, r) => {
    if (event === 'delete') controller.forgetRevision(r);
  });

  let leading = false;
  let heartbeatTimer: NodeJS.Timeout | undefined;
  const sweepSecrets = async () => {
    if (!leading || !synced()) return;
    try {
      const secrets = await writer.listSecrets(LABELS.revisionId, options.watchNamespaces);
      await controller.orphans.sweepSecrets(secrets);
    } catch (err) {
      logger.warn({ err: describeError(err) }, 'looking for orphaned Secrets failed; will retry');
    }
  };
  const elector = new LeaderElector(kubeConfig, {
    ...options.leaderElection,
    logger: logger.child({ context: 'leader-election' }),
    onStartedLeading: () => {
      leading = true;
      metrics.leader.set({ name: options.leaderElection.name }, 1);
      enqueueAll();
      enqueueExports();
      void sweepSecrets();
      const beat = () => {
        if (!leading) return;
        void heartbeat.beat().finally(() => {
          if (leading) heartbeatTimer = setTimeout(beat, options.heartbeatMs);
        });
      };
      beat();
    },
    onStoppedLeading: () => {
      leading = false;
      clearTimeout(heartbeatTimer);
      metrics.leader.set({ name: options.leaderElection.name }, 0);
      metrics.queueDepth.set({ name: CONTROLLER }, 0);
      metrics.queueDepth.set({ name: EXPORT_CONTROLLER }, 0);
    },
  });
  metrics.leader.set({ name: options.leaderElection.name }, 0);
  metrics.queueDepth.set({ name: CONTROLLER }, 0);

  const worker = async (
    queue: WorkQueue,
    name: string,
    reconcile: (key: string) => Promise<{ requeueAfterMs?: number } | void>,
  ) => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      if (!leading || !synced()) {
        // Standbys drop work; on becoming leader everything is enqueued again.
        queue.done(key);
        if (leading) queue.addAfter(key, 200);
        continue;
      }
      const end = metrics.reconcileTime.startTimer({ controller: name });
      try {
        const result = await reconcile(key);
        queue.forget(key);
        if (result?.requeueAfterMs) {
          queue.addAfter(key, result.requeueAfterMs);
          metrics.reconcileTotal.inc({ controller: name, result: 'requeue_after' });
        } else metrics.reconcileTotal.inc({ controller: name, result: 'success' });
      } catch (err) {
        metrics.reconcileTotal.inc({ controller: name, result: 'error' });
        metrics.reconcileErrors.inc({ controller: name });
        logger.warn({ key, err: describeError(err) }, 'reconcile failed; will retry');
        queue.addRateLimited(key);
      } finally {
        end();
        queue.done(key);
      }
    }
  };

  const probe = await startProbeServer(
    registry,
    {
      health: () => {
        const stalled = all.find(
          (i) => i.failingSince !== undefined && Date.now() - i.failingSince > INFORMER_STALL_MS,
        );
        return stalled ? 'an informer has been failing for over a minute' : null;
      },
      ready: () => (synced() ? null : 'caches not synced'),
    },
    options.port,
    options.host,
  );
  all.forEach((i) => i.start());
  const workers = Array.from({ length: options.workers }, () =>
    worker(queue, CONTROLLER, (key) => controller.reconcile(key)),
  );
  if (exportController)
    workers.push(
      ...Array.from({ length: 2 }, () =>
        worker(exportQueue, EXPORT_CONTROLLER, (key) => exportController.reconcile(key)),
      ),
    );
  elector.start();
  const resync = setInterval(() => {
    if (!leading) return;
    enqueueAll();
    enqueueExports();
  }, RESYNC_MS);
  const secretSweep = setInterval(
    () => void sweepSecrets(),
    Math.min(SECRET_SWEEP_MS, options.orphanGraceMs),
  );
  logger.info(
    {
      computeId: options.computeId,
      watchNamespaces: options.watchNamespaces.length ? options.watchNamespaces : 'all',
      exportJobsNamespace: exportsNs ?? 'off',
      probe: probe.url,
      identity: options.leaderElection.identity,
    },
    'operator started',
  );

  return {
    url: probe.url,
    isLeader: () => leading,
    stop: async () => {
      clearInterval(resync);
      clearInterval(secretSweep);
      clearTimeout(heartbeatTimer);
      await elector.stop();
      queue.shutDown();
      exportQueue.shutDown();
      await Promise.all(workers);
      all.forEach((i) => i.stop());
      await probe.close();
      await provisioner?.close();
    },
  };
}
