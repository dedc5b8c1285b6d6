export { toJson, serializeMessage } from './serialize.js';
export {
  toThreadState,
  emptyThreadState,
  checkpointRef,
  needsParentForWrites,
  type ThreadStateBody,
  type CheckpointRef,
} from './snapshot.js';
export { isoDates, type Dated } from './dates.js';
