export { A2aService, type A2aServiceDeps } from './service.js';
export { a2aRoutes } from './routes.js';
export {
  DEFAULT_ASSISTANT_SETTING,
  resolveDefaultAssistant,
  type DefaultAssistant,
} from './default-assistant.js';
