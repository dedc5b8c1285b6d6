export { DeploymentService } from './service.js';
export { deploymentRoutes } from './routes.js';
export { createIssues, planPatch, secretIssues, type PatchPlan } from './rules.js';
export { RESERVED_SECRET_NAMES } from './reserved-secrets.js';
export { Deployment, Revision } from './schemas.js';
