export { DeploymentService } from './service.js';
export { deploymentRoutes } from './routes.js';
export {
  createIssues,
  mergeResourceSpec,
  planPatch,
  resourceSpecIssues,
  secretIssues,
  unmaskSecrets,
  type PatchPlan,
} from './rules.js';
export { RESERVED_SECRET_NAMES } from './reserved-secrets.js';
export { Deployment, MASKED_SECRET_VALUE, Revision } from './schemas.js';
