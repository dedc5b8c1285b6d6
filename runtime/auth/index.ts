// Custom authentication and authorization (`auth.path` of langgraph.json).
export { AuthLoadError, CustomAuth, loadCustomAuth } from './custom-auth.js';
export {
  isOpenToAll,
  isPlatformPath,
  PRE_AUTHENTICATED,
  registerCustomAuth,
  type PlatformRoutes,
} from './hooks.js';
export { compileFilter } from './filter.js';
export type {
  AuthContext,
  AuthFilter,
  AuthLookups,
  AuthUser,
  RunAuthExtras,
  Visible,
} from './types.js';
