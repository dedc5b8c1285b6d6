export { registerAuth, principalOf } from './auth.js';
export { verifyKeyRoute, VERIFY_KEY_PATH } from './verify-route.js';
