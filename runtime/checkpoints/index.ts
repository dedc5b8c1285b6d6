export {
  GraphdockCheckpointer,
  CHECKPOINT_METADATA_KEY,
  FRESH_THREAD_KEY,
  DEFERRED_WRITES_KEY,
  RUN_FENCE_KEY,
  nextChannelVersion,
} from './checkpointer.js';
export { CheckpointStore } from './store.js';
export {
  PREFETCHED_CHECKPOINT_KEY,
  latestCheckpointRead,
  latestCheckpointReadOf,
} from './prefetch.js';
export type { CheckpointDeferral } from './deferred.js';
