// `graphdock operator`: reconciles AgentDeployments into running agent servers.
export { startOperator, type Operator, type OperatorOptions } from './operator.js';
export { OPERATOR_RULES, OPERATOR_LEADER_ELECTION_RULES, type PolicyRule } from './rbac.js';
export {
  FINALIZER,
  DATABASE_RETAIN_ANNOTATION,
  workloadName,
  envSecretName,
  databaseSecretName,
  rolloutState,
  revisionOutcome,
} from './reconcile/index.js';
export { WorkQueue } from './kube/index.js';
export { databaseName } from './database/index.js';
