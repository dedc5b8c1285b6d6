export { ListenerService, listenerBody, type ListenerResource } from './service.js';
export { listenerRoutes } from './routes.js';
export { Listener } from './schemas.js';
