export { toJson, serializeMessage, type MessageMemo } from './serialize.js';
export {
  STATE_BODY_VERSION,
  toThreadState,
  emptyThreadState,
  checkpointRef,
  taskCheckpointRef,
  needsParentForWrites,
  type ThreadStateBody,
  type CheckpointRef,
  type TaskCheckpointRef,
} from './snapshot.js';
export { isoDates, type Dated } from './dates.js';
