export { CronStore } from './store.js';
export { CronService } from './service.js';
export { CronScheduler, type CronSchedulerOptions } from './scheduler.js';
export { cronRoutes } from './routes.js';
