export { ThreadStore } from './store.js';
export { ThreadService, threadBody } from './service.js';
export { threadRoutes } from './routes.js';
export { threadRowLoader } from './row-loader.js';
export { threadInsertBatcher } from './insert-batcher.js';
