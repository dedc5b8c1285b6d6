export { buildControlPlaneApp, type ControlPlaneAppDeps } from './app.js';
export { buildControlPlaneOpenApi } from './openapi.js';
