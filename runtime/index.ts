export {
  createRuntime,
  migrateRuntimeDatabase,
  warmUpRuntime,
  type Runtime,
  type RuntimeOptions,
} from './server.js';
export { ConfigFileError } from './config/index.js';
export { GraphLoadError } from './graphs/index.js';
export { buildOpenApiDocument } from './http/index.js';
export { GRAPHDOCK_VERSION } from './server.js';
