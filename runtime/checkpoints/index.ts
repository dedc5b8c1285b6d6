export {
  GraphdockCheckpointer,
  CHECKPOINT_METADATA_KEY,
  nextChannelVersion,
} from './checkpointer.js';
export { CheckpointStore } from './store.js';
