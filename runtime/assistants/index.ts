export { AssistantStore } from './store.js';
export { AssistantService, type AssistantThreadCleanup } from './service.js';
export { assistantRoutes } from './routes.js';
export { systemAssistantDefaults, type SystemAssistantDefaults } from './system-defaults.js';
