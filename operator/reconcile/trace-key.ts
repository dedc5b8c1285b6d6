// The trace credential step of a reconcile: a key per deployment in a Secret the deployment owns
// (so it goes with it), replaced by a new one with each revision. The Secret keeps the key it
// replaced, which the pods of the previous revision still send while a rollout runs.
import { newTraceKey, TRACE_KEY_FIELDS, traceKeySecretName } from '../../common/resources/index.js';
import type { KubeWriter } from '../kube/index.js';
import { ownedSecret } from './children.js';
import type { AgentDeployment, AgentRevision } from './types.js';

/** Data key naming the revision the current key was minted for. */
const REVISION_FIELD = 'revision';

export class TraceKeyStep {
  /** Deployments (by uid) whose Secret holds a key of the revision named. */
  private readonly known = new Map<string, string>();

  constructor(private readonly writer: Pick<KubeWriter, 'readSecret' | 'apply'>) {}

  async ensure(deployment: AgentDeployment, revision: AgentRevision): Promise<void> {
    const { name, namespace, uid } = deployment.metadata;
    const revisionId = revision.metadata.name;
    if (this.known.get(uid) === revisionId) return;
    const secretName = traceKeySecretName(name);
    const current = await this.writer.readSecret(namespace ?? '', secretName);
    if (current?.[REVISION_FIELD] !== revisionId || !current[TRACE_KEY_FIELDS.key]) {
      const previous = current?.[TRACE_KEY_FIELDS.key];
      await this.writer.apply(
        ownedSecret(deployment, secretName, {
          [TRACE_KEY_FIELDS.key]: newTraceKey(namespace ?? '', name),
          ...(previous ? { [TRACE_KEY_FIELDS.previous]: previous } : {}),
          [TRACE_KEY_FIELDS.workspace]: deployment.spec.workspace_id,
          [REVISION_FIELD]: revisionId,
        }) as never,
      );
    }
    this.known.set(uid, revisionId);
  }

  forget(deployment: AgentDeployment): void {
    this.known.delete(deployment.metadata.uid);
  }
}
