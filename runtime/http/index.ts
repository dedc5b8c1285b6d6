export { buildApp, type AppDeps } from './app.js';
export type { MetaInfo } from './meta-routes.js';
