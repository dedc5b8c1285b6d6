export {
  GraphdockCheckpointer,
  CHECKPOINT_METADATA_KEY,
  FRESH_THREAD_KEY,
  nextChannelVersion,
} from './checkpointer.js';
export { CheckpointStore } from './store.js';
