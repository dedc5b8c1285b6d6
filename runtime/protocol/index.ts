export { ProtocolService, type ProtocolServiceDeps } from './service.js';
export { protocolRoutes } from './routes.js';
export { ProtocolError, PROTOCOL_ERROR_CODES, type ProtocolErrorCode } from './errors.js';
export { CHANNELS as PROTOCOL_CHANNELS } from './schemas.js';
