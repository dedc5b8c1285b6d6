export {
  IdleTrimPolicy,
  lastResortCollector,
  startIdleTrim,
  type IdleTrim,
  type IdleTrimOptions,
  type IdleTrimPolicyOptions,
} from './idle-trim.js';
