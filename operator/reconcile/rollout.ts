// Reads a Deployment's status the way `kubectl rollout status` does, for one revision, and its
// pods for failures that no deadline needs to wait for (an image that cannot be pulled, a crash
// loop).
import type { V1ContainerStatus, V1Deployment, V1Pod } from '@kubernetes/client-node';
import { REVISION_ANNOTATION } from './names.js';

/** Waiting reasons that mean the image will not run without a new revision. */
const IMAGE_FAILURES = new Set([
  'ImagePullBackOff',
  'ErrImageNeverPull',
  'InvalidImageName',
  'CreateContainerConfigError',
]);
/**
 * kubelet backs a container off (CrashLoopBackOff) once it exited again after a restart. One
 * restart is enough to call it failing: a later completed rollout still turns it DEPLOYED, and
 * each further restart waits longer (10 s, 20 s, ...), which would only delay the answer.
 */
export const CRASH_LOOP_RESTARTS = 1;

export type RolloutState =
  /** No Deployment, or it still runs another revision's template. */
  | { phase: 'pending' }
  | { phase: 'progressing'; message: string }
  | { phase: 'complete'; message: string }
  | { phase: 'failed'; reason: string; message: string };

/** Why one of the revision's pods cannot become Ready, if it is for good. */
export function podFailure(
  pods: readonly V1Pod[],
  revisionId: string,
): { reason: string; message: string } | undefined {
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp) continue;
    if (pod.metadata?.annotations?.[REVISION_ANNOTATION] !== revisionId) continue;
    const statuses: V1ContainerStatus[] = [
      ...(pod.status?.initContainerStatuses ?? []),
      ...(pod.status?.containerStatuses ?? []),
    ];
    for (const c of statuses) {
      const waiting = c.state?.waiting;
      const where = `pod ${pod.metadata?.name}, container ${c.name}`;
      if (waiting?.reason && IMAGE_FAILURES.has(waiting.reason))
        return {
          reason: waiting.reason,
          message:
            `${waiting.reason} (${where}, image ${c.image}): ${waiting.message ?? ''}`.trim(),
        };
      if (waiting?.reason === 'CrashLoopBackOff' && c.restartCount >= CRASH_LOOP_RESTARTS) {
        const last = c.lastState?.terminated;
        const said = last?.message ? lastWords(last.message) : undefined;
        const exit = last
          ? `; last exit code ${last.exitCode}${last.reason ? ` (${last.reason})` : ''}` +
            (said ? `: ${said}` : '')
          : '';
        return {
          reason: 'CrashLoopBackOff',
          message: `CrashLoopBackOff (${where}): restarted ${c.restartCount} times${exit}`,
        };
      }
    }
  }
  return undefined;
}

/** The most a revision's message quotes of a container's last words. */
const LAST_WORDS_CHARS = 500;

/**
 * What a container said as it ended (its termination message: the tail of its log, as the
 * runtime's `FallbackToLogsOnError` keeps it): the last `graphdock: ...` line with the indented
 * lines under it, which is how every command states why it could not start; else the last line.
 */
export function lastWords(message: string): string | undefined {
  const lines = message.split('\n');
  const start = lines.findLastIndex((l) => l.startsWith('graphdock: '));
  let words: string[];
  if (start >= 0) {
    words = [lines[start]!];
    for (const l of lines.slice(start + 1)) {
      if (!/^\s/.test(l) || !l.trim()) break;
      words.push(l);
    }
  } else {
    words = lines.filter((l) => l.trim()).slice(-1);
  }
  const text = words.join(' ').replace(/\s+/g, ' ').trim();
  if (!text) return undefined;
  return text.length > LAST_WORDS_CHARS ? `${text.slice(0, LAST_WORDS_CHARS - 3)}...` : text;
}

export function rolloutState(
  deployment: V1Deployment | undefined,
  revisionId: string,
  pods: readonly V1Pod[] = [],
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
      reason: 'ProgressDeadlineExceeded',
      message: `Rollout exceeded its progress deadline (${deadline} s): ${progressing.message ?? ''}`,
    };
  }
  const desired = deployment.spec?.replicas ?? 1;
  const updated = status.updatedReplicas ?? 0;
  const total = status.replicas ?? 0;
  const available = status.availableReplicas ?? 0;
  // Short of complete, a new pod that fails for good ends the rollout now: waiting for the
  // deadline would only hide why.
  const unlessFailing = (message: string): RolloutState => {
    const failure = podFailure(pods, revisionId);
    return failure ? { phase: 'failed', ...failure } : { phase: 'progressing', message };
  };
  if (updated < desired) return unlessFailing(`${updated} of ${desired} replicas updated`);
  if (total > updated) return unlessFailing(`${total - updated} old replicas pending termination`);
  if (available < updated)
    return unlessFailing(`${available} of ${updated} updated replicas available`);
  return { phase: 'complete', message: `${available} of ${desired} replicas available` };
}
