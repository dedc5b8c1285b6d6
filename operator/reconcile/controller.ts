// Reconciles one AgentDeployment (key namespace/name) from the informers' view of the cluster:
// level-triggered, idempotent, and safe to interrupt at any point.
import { createHash } from 'node:crypto';
import type { KubernetesObject, V1Deployment, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../common/logging/index.js';
import {
  AGENT_DEPLOYMENT,
  AGENT_REVISION,
  GROUP,
  LABELS,
  PENDING_ANNOTATION,
  VERSION,
  type AgentDeploymentStatus,
  type AgentRevisionStatus,
  type ResourceKind,
  type RevisionStatus,
} from '../../common/resources/index.js';
import {
  describeError,
  type KubeWriter,
  type ObjectCache,
  type ResourceRef,
} from '../kube/index.js';
import {
  autoscaled,
  autoscaler,
  childRefs,
  disruptionBudget,
  envSecret,
  service,
  workload,
  type WorkloadSettings,
} from './children.js';
import { mergeConditions, sameStatus } from './conditions.js';
import type { DatabaseStep } from './database.js';
import { DATABASE_RETAIN_ANNOTATION, FINALIZER, SERVER_PORT, workloadName } from './names.js';
import { OrphanCollector } from './orphans.js';
import { rolloutState } from './rollout.js';
import { TraceKeyStep } from './trace-key.js';
import {
  deploymentConditions,
  reasonOf,
  revisionConditions,
  revisionOutcome,
  UNFINISHED,
} from './statuses.js';
import type { AgentDeployment, AgentRevision, Listener } from './types.js';

export interface ControllerSettings extends WorkloadSettings {
  computeId: string;
  retainDatabases: boolean;
  /** How long a write the api has not finished may stay before it is taken as abandoned. */
  orphanGraceMs: number;
}

export interface Informers {
  deployments: ObjectCache<AgentDeployment>;
  revisions: ObjectCache<AgentRevision>;
  listeners: ObjectCache<Listener>;
  workloads: ObjectCache<V1Deployment>;
  /** Pods of agent workloads, for failures a rollout's counts do not tell. */
  pods: ObjectCache<V1Pod>;
}

export interface ReconcileResult {
  requeueAfterMs?: number;
}

const APPLIED_HASH = 'graphdock.dev/applied-hash';
/** Even with nothing changed, children are re-applied this often (repairs manual edits). */
const FULL_APPLY_EVERY_MS = 5 * 60_000;
const WAIT_MS = 1_000;
const DATABASE_RETRY_MS = 5_000;

const ref = (kind: ResourceKind, m: AgentDeployment['metadata']): ResourceRef => ({
  group: GROUP,
  version: VERSION,
  plural: kind.plural,
  kind: kind.kind,
  name: m.name,
  namespace: m.namespace,
  uid: m.uid,
});

export class DeploymentController {
  private readonly secretCache = new Map<string, Record<string, string>>();
  private readonly lastFullApply = new Map<string, number>();
  readonly orphans: OrphanCollector;
  private readonly traceKey: TraceKeyStep;

  constructor(
    private readonly informers: Informers,
    private readonly writer: KubeWriter,
    private readonly database: DatabaseStep,
    private readonly settings: ControllerSettings,
    private readonly logger: Logger,
  ) {
    this.traceKey = new TraceKeyStep(writer);
    this.orphans = new OrphanCollector(informers.revisions, writer, settings.orphanGraceMs, logger);
  }

  /** The listener a deployment is placed on, when this operator serves it there. */
  servingListener(deployment: AgentDeployment): Listener | undefined {
    const listenerId = deployment.spec.source_config.listener_id;
    const listener = this.informers.listeners
      .list()
      .find((l) => l.metadata.labels?.[LABELS.listenerId] === listenerId);
    if (!listener || listener.spec.compute_id !== this.settings.computeId) return undefined;
    const namespaces = listener.spec.compute_config.k8s_namespaces;
    if (namespaces?.length && !namespaces.includes(deployment.metadata.namespace ?? ''))
      return undefined;
    return listener;
  }

  /** Drops what was cached for a revision that no longer exists. */
  forgetRevision(revision: AgentRevision): void {
    this.secretCache.delete(revision.metadata.uid);
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const deployment = this.informers.deployments.get(key);
    if (!deployment) {
      this.lastFullApply.delete(key);
      return {};
    }
    const meta = deployment.metadata;
    if (meta.deletionTimestamp) {
      if (meta.finalizers?.includes(FINALIZER)) await this.cleanUp(deployment);
      return {};
    }
    if (!this.servingListener(deployment)) return {};
    // Not committed by the api yet (or never will be): no finalizer, no children.
    const pending = await this.orphans.pendingDeployment(deployment);
    if (pending) return pending;
    if (!meta.finalizers?.includes(FINALIZER))
      await this.writer.applyMetadata(ref(AGENT_DEPLOYMENT, meta), { finalizers: [FINALIZER] });

    const latest = this.informers.revisions.get(
      `${meta.namespace}/${deployment.spec.latest_revision.id}`,
    );
    // The api writes the revision before pointing at it: missing is a cache a moment behind,
    // or (past the grace period) what an older api left when it died mid-create.
    if (!latest) return this.orphans.missingRevision(deployment);
    const abandoned = await this.orphans.abandonedRevisions(deployment);
    await this.skipSuperseded(deployment, latest);
    if (!latest.status?.status || latest.status.status === 'CREATING')
      await this.setRevision(deployment, latest, 'QUEUED', 'Accepted by the operator');

    const secrets = await this.revisionSecrets(latest);
    if (!secrets) return { requeueAfterMs: WAIT_MS };
    const db = await this.database.ensure(deployment, secrets);
    if (!db.ready) {
      await this.setRevision(deployment, latest, 'AWAITING_DEPLOY', db.message);
      await this.setDeployment(deployment, false, 'AWAITING_DEPLOY', db.message);
      return { requeueAfterMs: DATABASE_RETRY_MS };
    }
    if (db.created)
      void this.event(deployment, 'Normal', 'DatabaseCreated', 'Database and role created');
    if (latest.status?.status === 'QUEUED' || latest.status?.status === 'CREATING')
      await this.setRevision(deployment, latest, 'AWAITING_DEPLOY', 'Applying the workload');

    // Pods of the new template read their trace key when they start.
    if (this.settings.controlPlaneUrl) await this.traceKey.ensure(deployment, latest);
    const applied = await this.applyChildren(deployment, latest, {
      ...secrets,
      DATABASE_URL: db.url,
    });
    const pods = this.informers.pods
      .list()
      .filter(
        (p) =>
          p.metadata?.namespace === meta.namespace &&
          p.metadata?.labels?.[LABELS.deploymentId] === meta.name,
      );
    const { status, message, reason } = revisionOutcome(
      rolloutState(applied, latest.metadata.name, pods),
      latest.status?.status,
      latest.status,
    );
    // The deployment first: a client that sees its revision DEPLOYED (what the API's users poll)
    // then finds the deployment naming it active, never the status before.
    await this.setDeployment(deployment, true, status, message, latest, reason);
    await this.setRevision(deployment, latest, status, message, reason);
    return abandoned === undefined ? {} : { requeueAfterMs: abandoned };
  }

  private async applyChildren(
    deployment: AgentDeployment,
    revision: AgentRevision,
    env: Record<string, string>,
  ): Promise<V1Deployment | undefined> {
    const key = `${deployment.metadata.namespace}/${deployment.metadata.name}`;
    const spec = revision.spec.resource_spec;
    const desired = workload(deployment, revision, this.settings, env);
    const secret = envSecret(deployment, env);
    const others: KubernetesObject[] = [service(deployment), disruptionBudget(deployment)];
    if (autoscaled(spec)) others.push(autoscaler(deployment, revision));
    const hash = createHash('sha256')
      .update(JSON.stringify([desired, secret, others, deployment.metadata.uid]))
      .digest('hex')
      .slice(0, 32);
    desired.metadata!.annotations![APPLIED_HASH] = hash;

    const current = this.informers.workloads.get(
      `${deployment.metadata.namespace}/${workloadName(deployment.metadata.name)}`,
    );
    const fresh = Date.now() - (this.lastFullApply.get(key) ?? 0) < FULL_APPLY_EVERY_MS;
    if (current?.metadata?.annotations?.[APPLIED_HASH] === hash && fresh) return current;

    // The Secret first: pods of the new template read it when they start.
    await this.writer.apply(secret);
    await Promise.all(others.map((o) => this.writer.apply(o)));
    if (!autoscaled(spec)) await this.writer.deleteIfExists(childRefs(deployment)[0]!); // a former HPA
    const applied = await this.writer.apply(desired);
    this.lastFullApply.set(key, Date.now());
    return applied;
  }

  private async revisionSecrets(revision: AgentRevision) {
    const cached = this.secretCache.get(revision.metadata.uid);
    if (cached) return cached;
    const ref = revision.spec.secrets_ref;
    const data = await this.writer.readSecret(revision.metadata.namespace ?? '', ref.name);
    if (!data) return undefined;
    // A revision's secrets never change (its spec is immutable): read them once.
    this.secretCache.set(revision.metadata.uid, data);
    return data;
  }

  private async skipSuperseded(deployment: AgentDeployment, latest: AgentRevision) {
    const older = this.informers.revisions.list().filter(
      (r) =>
        r.metadata.namespace === deployment.metadata.namespace &&
        r.spec.deployment_id === deployment.metadata.name &&
        r.spec.revision_number < latest.spec.revision_number &&
        // A pending one was never part of the deployment's history (OrphanCollector's).
        r.metadata.annotations?.[PENDING_ANNOTATION] === undefined &&
        UNFINISHED.has(r.status?.status),
    );
    for (const r of older)
      await this.setRevision(
        deployment,
        r,
        'SKIPPED',
        `Superseded by revision ${latest.spec.revision_number}`,
      );
  }

  private async setRevision(
    deployment: AgentDeployment,
    revision: AgentRevision,
    status: RevisionStatus,
    message: string,
    failureReason?: string,
  ): Promise<void> {
    const next: AgentRevisionStatus = {
      observedGeneration: revision.metadata.generation,
      status,
      message,
      endpoint: this.endpoint(deployment),
      conditions: mergeConditions(
        revision.status?.conditions,
        revisionConditions(status, message, failureReason),
        revision.metadata.generation,
      ),
    };
    if (sameStatus(revision.status, next)) return;
    await this.writer.applyStatus(ref(AGENT_REVISION, revision.metadata), next);
    const previous = revision.status?.status;
    // Later reads within this reconcile see what we wrote.
    revision.status = next;
    if (
      previous !== status &&
      ['DEPLOYING', 'DEPLOYED', 'DEPLOY_FAILED', 'SKIPPED'].includes(status)
    )
      void this.event(
        deployment,
        status === 'DEPLOY_FAILED' ? 'Warning' : 'Normal',
        reasonOf(status),
        `Revision ${revision.spec.revision_number} (${revision.metadata.name}): ${message}`,
      );
  }

  private async setDeployment(
    deployment: AgentDeployment,
    databaseReady: boolean,
    latestStatus: RevisionStatus,
    message: string,
    latest?: AgentRevision,
    failureReason?: string,
  ): Promise<void> {
    const previous = deployment.status;
    const next: AgentDeploymentStatus = {
      observedGeneration: deployment.metadata.generation,
      status: databaseReady ? 'READY' : 'AWAITING_DATABASE',
      endpoint: this.endpoint(deployment),
      ...(latestStatus === 'DEPLOYED' && latest
        ? { activeRevisionId: latest.metadata.name }
        : previous?.activeRevisionId
          ? { activeRevisionId: previous.activeRevisionId }
          : {}),
      conditions: mergeConditions(
        previous?.conditions,
        deploymentConditions(databaseReady, latestStatus, message, failureReason),
        deployment.metadata.generation,
      ),
    };
    if (sameStatus(previous, next)) return;
    await this.writer.applyStatus(ref(AGENT_DEPLOYMENT, deployment.metadata), next);
    deployment.status = next;
  }

  private endpoint(deployment: AgentDeployment): string {
    const custom = deployment.spec.source_config.custom_url;
    if (custom) return custom;
    const { name, namespace } = deployment.metadata;
    return `http://${workloadName(name)}.${namespace}.svc.cluster.local:${SERVER_PORT}`;
  }

  private async cleanUp(deployment: AgentDeployment): Promise<void> {
    const meta = deployment.metadata;
    const policy = meta.annotations?.[DATABASE_RETAIN_ANNOTATION];
    const retain = policy ? policy === 'Retain' : this.settings.retainDatabases;
    const dropped = await this.database.release(deployment, retain);
    // Owner references would remove these too, but only once the garbage collector gets to them.
    for (const child of childRefs(deployment)) await this.writer.deleteIfExists(child);
    this.traceKey.forget(deployment);
    void this.event(
      deployment,
      'Normal',
      'CleanedUp',
      dropped ? 'Workload removed and database dropped' : 'Workload removed; database retained',
    );
    // Applying our metadata without the finalizer releases it; other finalizers stay.
    await this.writer.applyMetadata(ref(AGENT_DEPLOYMENT, meta), {});
    this.lastFullApply.delete(`${meta.namespace}/${meta.name}`);
  }

  /** Not awaited by callers: recording an Event must not slow or fail a reconcile. */
  private async event(
    deployment: AgentDeployment,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void> {
    try {
      await this.writer.event(ref(AGENT_DEPLOYMENT, deployment.metadata), type, reason, message);
    } catch (err) {
      // Events are for people; failing to record one must not fail the reconcile.
      this.logger.warn({ err: describeError(err), reason }, 'could not record event');
    }
  }
}
