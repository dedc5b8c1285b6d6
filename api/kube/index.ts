export {
  KubeResources,
  KubeApiError,
  type CustomResource,
  type KubeAction,
  type ObjectMeta,
} from './client.js';
export {
  CONTROL_PLANE_API_RULES,
  CONTROL_PLANE_API_EXPORT_RULES,
  type PolicyRule,
} from './rbac.js';
