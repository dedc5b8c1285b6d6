export { TenancyStore, type Organization, type Principal, type Workspace } from './store.js';
export {
  TenancyService,
  SELF_HOSTED_ENTERPRISE_PLAN,
  ALL_PERMISSIONS,
  type BootstrapSettings,
} from './service.js';
export { digestApiKey, generateApiKey } from './keys.js';
