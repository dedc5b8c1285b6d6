// Reconciling AgentDeployments into databases, Secrets, Deployments, Services, HPAs and PDBs.
export {
  DeploymentController,
  type ControllerSettings,
  type Informers,
  type ReconcileResult,
} from './controller.js';
export { DatabaseStep } from './database.js';
export { BulkExportController, type ExportInformers } from './bulk-export.js';
export {
  exportJob,
  exportJobName,
  exportJobLabels,
  planExport,
  runPhase,
  type ExportJobSettings,
  type ExportPlan,
  type SecretKeyRef,
} from './export-jobs.js';
export { TraceKeyStep } from './trace-key.js';
export { ListenerHeartbeat, degradedCondition, unwatchedNamespaces } from './heartbeat.js';
export { lastWords, rolloutState, type RolloutState } from './rollout.js';
export { revisionOutcome } from './statuses.js';
export { mergeConditions, sameStatus } from './conditions.js';
export * as children from './children.js';
export {
  FINALIZER,
  DATABASE_RETAIN_ANNOTATION,
  MANAGED_BY,
  workloadName,
  envSecretName,
  databaseSecretName,
} from './names.js';
export type { AgentDeployment, AgentRevision, BulkExport, Listener } from './types.js';
