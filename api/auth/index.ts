export { registerAuth, principalOf } from './auth.js';
