// Status vocabularies of the control-plane API v2, in the order its OpenAPI document lists them.
import { z } from 'zod';

export const REVISION_STATUSES = [
  'CREATING',
  'QUEUED',
  'AWAITING_BUILD',
  'BUILDING',
  'AWAITING_DEPLOY',
  'DEPLOYING',
  'CREATE_FAILED',
  'BUILD_FAILED',
  'DEPLOY_FAILED',
  'DEPLOYED',
  'SKIPPED',
  'INTERRUPTED',
  'UNKNOWN',
] as const;
export const RevisionStatus = z.enum(REVISION_STATUSES);
export type RevisionStatus = z.infer<typeof RevisionStatus>;

export const DEPLOYMENT_STATUSES = [
  'AWAITING_DATABASE',
  'READY',
  'UNUSED',
  'AWAITING_DELETE',
  'UNKNOWN',
] as const;
export const DeploymentStatus = z.enum(DEPLOYMENT_STATUSES);
export type DeploymentStatus = z.infer<typeof DeploymentStatus>;

/** What a revision reports before any operator has looked at it. */
export const INITIAL_REVISION_STATUS: RevisionStatus = 'CREATING';
/** A new deployment waits for its database until the operator has created one. */
export const INITIAL_DEPLOYMENT_STATUS: DeploymentStatus = 'AWAITING_DATABASE';
