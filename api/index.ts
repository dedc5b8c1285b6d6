// The control-plane API (`graphdock api`): deployments, revisions and listeners over the
// graphdock.dev custom resources, with tenancy in PostgreSQL.
export {
  createControlPlane,
  migrateControlPlaneDatabase,
  type ControlPlane,
  type ControlPlaneOptions,
} from './server.js';
export { TenancyService, TenancyStore, SELF_HOSTED_ENTERPRISE_PLAN } from './tenancy/index.js';
export { buildControlPlaneOpenApi } from './http/index.js';
export {
  CONTROL_PLANE_API_RULES,
  CONTROL_PLANE_API_EXPORT_RULES,
  KubeResources,
  type PolicyRule,
} from './kube/index.js';
export {
  createIssues,
  MASKED_SECRET_VALUE,
  mergeResourceSpec,
  planPatch,
  resourceSpecIssues,
  secretIssues,
  unmaskSecrets,
  RESERVED_SECRET_NAMES,
} from './deployments/index.js';
