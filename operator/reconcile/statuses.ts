// Revision and deployment status as the cluster reports it, with matching conditions.
import type { RevisionStatus } from '../../common/resources/index.js';
import type { ConditionInput } from './conditions.js';
import type { RolloutState } from './rollout.js';

/** Statuses a newer revision may still supersede (it never got as far as a result). */
export const UNFINISHED: ReadonlySet<RevisionStatus | undefined> = new Set([
  undefined,
  'CREATING',
  'QUEUED',
  'AWAITING_DEPLOY',
  'DEPLOYING',
]);

const c = (
  type: ConditionInput['type'],
  status: ConditionInput['status'],
  reason: string,
  message: string,
): ConditionInput => ({ type, status, reason, message });

export function revisionConditions(
  status: RevisionStatus,
  message: string,
  failureReason = 'ProgressDeadlineExceeded',
): ConditionInput[] {
  if (status === 'DEPLOYED')
    return [
      c('Ready', 'True', 'RolloutComplete', message),
      c('Progressing', 'False', 'RolloutComplete', message),
      c('Degraded', 'False', 'RolloutComplete', message),
    ];
  if (status === 'DEPLOY_FAILED')
    return [
      c('Ready', 'False', failureReason, message),
      c('Progressing', 'False', failureReason, message),
      c('Degraded', 'True', failureReason, message),
    ];
  if (status === 'SKIPPED')
    return [
      c('Ready', 'False', 'Superseded', message),
      c('Progressing', 'False', 'Superseded', message),
      c('Degraded', 'False', 'Superseded', message),
    ];
  const reason = status === 'DEPLOYING' ? 'RolloutInProgress' : reasonOf(status);
  return [
    c('Ready', 'False', reason, message),
    c('Progressing', 'True', reason, message),
    c('Degraded', 'False', reason, message),
  ];
}

/** QUEUED -> Queued, AWAITING_DEPLOY -> AwaitingDeploy. */
export const reasonOf = (status: string) =>
  status
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

/** Deployment conditions follow its latest revision, or the database while that is missing. */
export function deploymentConditions(
  databaseReady: boolean,
  latest: RevisionStatus,
  message: string,
  failureReason?: string,
): ConditionInput[] {
  if (!databaseReady)
    return [
      c('Ready', 'False', 'AwaitingDatabase', message),
      c('Progressing', 'True', 'AwaitingDatabase', message),
      c('Degraded', 'False', 'AwaitingDatabase', message),
    ];
  return revisionConditions(latest, message, failureReason);
}

export interface RevisionOutcome {
  status: RevisionStatus;
  message: string;
  /** The conditions' reason of a DEPLOY_FAILED revision. */
  reason?: string;
}

/**
 * The revision status a rollout state means. DEPLOYED is kept once reached: a later pod
 * failure makes the workload less available, it does not undeploy the revision. DEPLOY_FAILED
 * is kept too (a crash-looping pod is briefly Running between its crashes) unless the rollout
 * completes after all.
 */
export function revisionOutcome(
  rollout: RolloutState,
  current: RevisionStatus | undefined,
  previous?: { message?: string; conditions?: { type: string; reason: string }[] },
): RevisionOutcome {
  switch (rollout.phase) {
    case 'complete':
      return { status: 'DEPLOYED', message: rollout.message };
    case 'failed':
      return { status: 'DEPLOY_FAILED', message: rollout.message, reason: rollout.reason };
    case 'progressing':
      if (current === 'DEPLOYED') return { status: 'DEPLOYED', message: rollout.message };
      if (current === 'DEPLOY_FAILED')
        return {
          status: 'DEPLOY_FAILED',
          message: previous?.message ?? rollout.message,
          reason: previous?.conditions?.find((c) => c.type === 'Ready')?.reason,
        };
      return { status: 'DEPLOYING', message: rollout.message };
    case 'pending':
      return { status: 'DEPLOYING', message: 'Rollout starting' };
  }
}
