export { RunStore, type RunRow, type RunsFinishedHook } from './store.js';
export { RunService } from './service.js';
export { RunExecutor } from './executor.js';
export { RunWorker, type WorkerOptions } from './worker.js';
export { RunEventLog } from './event-log.js';
export { Notifier, CHANNELS, notifyOnCommit, type Channel } from './notifier.js';
export { runRoutes } from './routes.js';
