export {
  RunStore,
  type ProtocolRunRef,
  type RunEvent,
  type RunRow,
  type RunStatus,
  type RunsFinishedHook,
} from './store.js';
export { RUN_SEQ_STRIDE } from './protocol-mapper.js';
export { RunService } from './service.js';
export { RunExecutor } from './executor.js';
export { RunWorker, type WorkerOptions } from './worker.js';
export { RunEventLog } from './event-log.js';
export {
  Notifier,
  CHANNELS,
  notifyOnCommit,
  threadOfRunsPayload,
  mayNameThread,
  waitFor,
  type Channel,
} from './notifier.js';
export { runRoutes } from './routes.js';
export { hookHeaders, writeSse, type SseFrame } from './sse.js';
export { RunCreate, STREAM_MODES, type RunCreateBody } from './schemas.js';
export type { CreatedRun, ProtocolRunCreated } from './service.js';
export {
  headerSelector,
  type HeaderSelector,
  type HeaderPatterns,
} from './configurable-headers.js';
