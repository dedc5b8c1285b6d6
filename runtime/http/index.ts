export { buildApp, type AppDeps } from './app.js';
export type { MetaInfo } from './meta-routes.js';
export { buildOpenApiDocument } from './openapi.js';
export type { RouteGroup } from './route-groups.js';
export { ControlPlaneKeyVerifier, type ControlPlaneAuthSettings } from './key-verifier.js';
export { HttpConnections } from './connections.js';
