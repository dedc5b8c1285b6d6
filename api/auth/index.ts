export { registerAuth, principalOf } from './auth.js';
export { verifyKeyRoute, VERIFY_KEY_PATH } from './verify-route.js';
export { TraceKeyVerifier, TRACE_KEY_PERMISSIONS, type SecretReader } from './trace-keys.js';
