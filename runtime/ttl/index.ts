export { startSweepers, type Sweep } from './sweepers.js';
export { checkpointerTtlSettings, type CheckpointerTtlSettings } from './checkpointer.js';
