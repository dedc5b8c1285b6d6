// `graphdock operator`: reconciles AgentDeployments into running agent servers, and BulkExports
// into the Jobs of their runs.
export { startOperator, type Operator, type OperatorOptions } from './operator.js';
export {
  OPERATOR_RULES,
  OPERATOR_LEADER_ELECTION_RULES,
  OPERATOR_EXPORT_RULES,
  type PolicyRule,
} from './rbac.js';
export {
  FINALIZER,
  DATABASE_RETAIN_ANNOTATION,
  workloadName,
  envSecretName,
  databaseSecretName,
  lastWords,
  rolloutState,
  revisionOutcome,
  exportJob,
  exportJobName,
  planExport,
  runPhase,
  type BulkExport,
  type ExportJobSettings,
} from './reconcile/index.js';
export { WorkQueue } from './kube/index.js';
export { databaseName } from './database/index.js';
