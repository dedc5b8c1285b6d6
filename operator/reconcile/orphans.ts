// Removes or repairs what an api process killed mid-write left behind, and what older versions
// could leave: each case is logged once, not at every pass.
//
// The api's write order (api/deployments/service.ts) makes every leftover one of these:
// - a deployment still marked pending: its create never finished; it is deleted (owner
//   references take its revision and Secret along);
// - a revision marked pending that its deployment does not point at: its PATCH never finished;
//   it is deleted with its Secret;
// - (older versions) a deployment whose revisions were never written: deleted;
// - (older versions) a revision Secret with no owner: given its revision as owner when that
//   exists, deleted otherwise.
// Pending objects are only touched after the grace period, so a write in progress is never hit.
import type { V1Secret } from '@kubernetes/client-node';
import type { Logger } from '../../common/logging/index.js';
import {
  AGENT_DEPLOYMENT,
  AGENT_REVISION,
  API_VERSION,
  LABELS,
  PENDING_ANNOTATION,
} from '../../common/resources/index.js';
import type { KubeWriter, ObjectCache } from '../kube/index.js';
import type { AgentDeployment, AgentRevision } from './types.js';

/** What the api names a revision's Secret (api/deployments/resources.ts). */
const revisionSecretName = (revisionId: string) => `${revisionId}-secrets`;
/** A deployment whose latest revision is missing past the grace period, but that has others. */
const STUCK_RETRY_MS = 60_000;
const WAIT_MS = 1_000;

type Meta = {
  uid?: string;
  name?: string;
  namespace?: string;
  creationTimestamp?: string | Date;
  annotations?: Record<string, string>;
};

/** When the api last wrote a resource (api/shared/schemas.ts). */
const UPDATED_AT = 'graphdock.dev/updated-at';

/** Milliseconds since the object's last write: its pending mark, last api update or creation. */
function age(meta: Meta, now: number): number {
  const times = [
    meta.annotations?.[PENDING_ANNOTATION],
    meta.annotations?.[UPDATED_AT],
    meta.creationTimestamp ? new Date(meta.creationTimestamp).toISOString() : undefined,
  ]
    .map((t) => (t ? Date.parse(t) : NaN))
    .filter(Number.isFinite);
  return times.length ? now - Math.max(...times) : Infinity;
}

/** What a delete needs to name an object. */
const ref = (kind: string, o: AgentDeployment | AgentRevision) => ({
  apiVersion: API_VERSION,
  kind,
  metadata: { name: o.metadata.name, namespace: o.metadata.namespace },
});

const isPending = (meta: Meta) => meta.annotations?.[PENDING_ANNOTATION] !== undefined;

export class OrphanCollector {
  private readonly reported = new Set<string>();

  constructor(
    private readonly revisions: ObjectCache<AgentRevision>,
    private readonly writer: KubeWriter,
    private readonly graceMs: number,
    private readonly logger: Logger,
  ) {}

  /**
   * A deployment the api has not finished creating: left alone during the grace period, deleted
   * after it. Undefined when the deployment is committed.
   */
  async pendingDeployment(
    deployment: AgentDeployment,
  ): Promise<{ requeueAfterMs?: number } | undefined> {
    if (!isPending(deployment.metadata)) return undefined;
    const left = this.graceMs - age(deployment.metadata, Date.now());
    if (left > 0) return { requeueAfterMs: left + WAIT_MS };
    await this.writer.deleteIfExists(ref(AGENT_DEPLOYMENT.kind, deployment));
    this.once(
      deployment.metadata,
      'deleted a deployment whose create never finished (api stopped mid-write)',
    );
    return {};
  }

  /** The deployment's latest revision does not exist. */
  async missingRevision(deployment: AgentDeployment): Promise<{ requeueAfterMs?: number }> {
    const left = this.graceMs - age(deployment.metadata, Date.now());
    // Normally the revision is only a moment behind in the cache; its event requeues us.
    if (left > 0) return { requeueAfterMs: Math.min(left + WAIT_MS, 5 * WAIT_MS) };
    const others = this.ofDeployment(deployment);
    if (others.length) {
      this.once(
        deployment.metadata,
        `latest revision ${deployment.spec.latest_revision.id} does not exist; waiting for a new revision`,
        'warn',
      );
      return { requeueAfterMs: STUCK_RETRY_MS };
    }
    await this.writer.deleteIfExists(ref(AGENT_DEPLOYMENT.kind, deployment));
    await this.deleteSecret(deployment.metadata.namespace, deployment.spec.latest_revision.id);
    this.once(
      deployment.metadata,
      'deleted a deployment that has no revision (its create never finished)',
    );
    return {};
  }

  /**
   * Revisions of a PATCH that never finished: pending, not pointed at, past the grace period.
   * Returns when to look again for those still within it.
   */
  async abandonedRevisions(deployment: AgentDeployment): Promise<number | undefined> {
    const now = Date.now();
    let next: number | undefined;
    for (const revision of this.ofDeployment(deployment)) {
      if (!isPending(revision.metadata)) continue;
      if (revision.metadata.name === deployment.spec.latest_revision.id) continue;
      const left = this.graceMs - age(revision.metadata, now);
      if (left > 0) {
        next = Math.min(next ?? Infinity, left + WAIT_MS);
        continue;
      }
      await this.writer.deleteIfExists(ref(AGENT_REVISION.kind, revision));
      await this.deleteSecret(revision.metadata.namespace, revision.metadata.name);
      this.once(
        revision.metadata,
        `deleted revision ${revision.spec.revision_number} of deployment ${deployment.metadata.name}: its change never finished (api stopped mid-write)`,
      );
    }
    return next;
  }

  /** Revision Secrets without an owner (written by older versions). */
  async sweepSecrets(secrets: V1Secret[]): Promise<void> {
    const now = Date.now();
    for (const secret of secrets) {
      const meta = secret.metadata ?? {};
      if (meta.ownerReferences?.length) continue;
      const revisionId = meta.labels?.[LABELS.revisionId];
      if (!revisionId || meta.name !== revisionSecretName(revisionId)) continue;
      const revision = this.revisions.get(`${meta.namespace}/${revisionId}`);
      if (revision) {
        await this.writer.setOwner(secret, {
          apiVersion: API_VERSION,
          kind: AGENT_REVISION.kind,
          name: revision.metadata.name,
          uid: revision.metadata.uid,
        });
        this.once(meta, `gave the Secret of revision ${revisionId} its owner (the revision)`);
        continue;
      }
      if (age(meta, now) < this.graceMs) continue;
      await this.writer.deleteIfExists({ apiVersion: 'v1', kind: 'Secret', metadata: meta });
      this.once(meta, `deleted Secret ${meta.name}: its revision does not exist`);
    }
  }

  private ofDeployment(deployment: AgentDeployment): AgentRevision[] {
    return this.revisions
      .list()
      .filter(
        (r) =>
          r.metadata.namespace === deployment.metadata.namespace &&
          r.spec.deployment_id === deployment.metadata.name,
      );
  }

  private async deleteSecret(namespace: string | undefined, revisionId: string) {
    await this.writer.deleteIfExists({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: revisionSecretName(revisionId), namespace },
    });
  }

  private once(meta: Meta, message: string, level: 'info' | 'warn' = 'info') {
    const key = `${meta.uid ?? `${meta.namespace}/${meta.name}`}:${message}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.logger[level]({ namespace: meta.namespace, name: meta.name }, `orphan: ${message}`);
  }
}
