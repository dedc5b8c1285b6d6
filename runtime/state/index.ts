export { toJson, serializeMessage, type MessageMemo } from './serialize.js';
export {
  toThreadState,
  emptyThreadState,
  checkpointRef,
  needsParentForWrites,
  type ThreadStateBody,
  type CheckpointRef,
} from './snapshot.js';
export { isoDates, type Dated } from './dates.js';
