export { buildControlPlaneApp, type ControlPlaneAppDeps } from './app.js';
