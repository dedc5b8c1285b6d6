export { GraphdockCheckpointer, CHECKPOINT_METADATA_KEY } from './checkpointer.js';
export { CheckpointStore } from './store.js';
