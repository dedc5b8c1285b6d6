// Reads a Deployment's status the way `kubectl rollout status` does, for one revision.
import type { V1Deployment } from '@kubernetes/client-node';
import { REVISION_ANNOTATION } from './names.js';

export type RolloutState =
  /** No Deployment, or it still runs another revision's template. */
  | { phase: 'pending' }
  | { phase: 'progressing'; message: string }
  | { phase: 'complete'; message: string }
  | { phase: 'failed'; message: string };

export function rolloutState(
  deployment: V1Deployment | undefined,
  revisionId: string,
): RolloutState {
  if (!deployment) return { phase: 'pending' };
  if (deployment.spec?.template.metadata?.annotations?.[REVISION_ANNOTATION] !== revisionId)
    return { phase: 'pending' };
  const generation = deployment.metadata?.generation ?? 0;
  const status = deployment.status ?? {};
  if ((status.observedGeneration ?? 0) < generation)
    return { phase: 'progressing', message: 'Waiting for the Deployment to be observed' };
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    const deadline = deployment.spec?.progressDeadlineSeconds;
    return {
      phase: 'failed',
      message: `Rollout exceeded its progress deadline (${deadline} s): ${progressing.message ?? ''}`,
    };
  }
  const desired = deployment.spec?.replicas ?? 1;
  const updated = status.updatedReplicas ?? 0;
  const total = status.replicas ?? 0;
  const available = status.availableReplicas ?? 0;
  if (updated < desired)
    return { phase: 'progressing', message: `${updated} of ${desired} replicas updated` };
  if (total > updated)
    return { phase: 'progressing', message: `${total - updated} old replicas pending termination` };
  if (available < updated)
    return {
      phase: 'progressing',
      message: `${available} of ${updated} updated replicas available`,
    };
  return { phase: 'complete', message: `${available} of ${desired} replicas available` };
}
