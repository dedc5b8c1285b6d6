// The graphdock.dev custom resources: zod schemas shared by the control-plane API and the
// operator, and the CRDs generated from them.
export {
  GROUP,
  VERSION,
  API_VERSION,
  LABELS,
  PENDING_ANNOTATION,
  LISTENER,
  AGENT_DEPLOYMENT,
  AGENT_REVISION,
  BULK_EXPORT,
  type ResourceKind,
} from './meta.js';
export {
  REVISION_STATUSES,
  DEPLOYMENT_STATUSES,
  RevisionStatus,
  DeploymentStatus,
  INITIAL_REVISION_STATUS,
  INITIAL_DEPLOYMENT_STATUS,
} from './statuses.js';
export { CONDITION_TYPES, Condition, Conditions, findCondition } from './conditions.js';
export { ResourceSpec } from './resource-spec.js';
export {
  ListenerSpec,
  ListenerStatus,
  ListenerComputeConfig,
  listenerResource,
  listenerResourceName,
} from './listener.js';
export {
  AgentDeploymentSpec,
  AgentDeploymentStatus,
  DeploymentSourceConfig,
  ListenerPlacement,
  SourceRevisionConfig,
  DEPLOYMENT_SOURCES,
  agentDeploymentResource,
} from './agent-deployment.js';
export { AgentRevisionSpec, AgentRevisionStatus, agentRevisionResource } from './agent-revision.js';
export {
  BulkExportSpec,
  BulkExportStatus,
  BulkExportRunRef,
  ExportJobStatus,
  BULK_EXPORT_PHASES,
  EXPORT_JOB_PHASES,
  bulkExportResource,
  bulkExportResourceName,
} from './bulk-export.js';
export {
  buildCrd,
  openApiSchema,
  toStructural,
  type CustomResourceSource,
  type PrinterColumn,
} from './crd.js';
export { immutable, type CelRule } from './cel.js';

import { agentDeploymentResource } from './agent-deployment.js';
import { agentRevisionResource } from './agent-revision.js';
import { bulkExportResource } from './bulk-export.js';
import { listenerResource } from './listener.js';

/** Every custom resource, in the order the CRD files are written. */
export const CUSTOM_RESOURCES = [
  listenerResource,
  agentDeploymentResource,
  agentRevisionResource,
  bulkExportResource,
];
export { TRACE_KEY_FIELDS, newTraceKey, parseTraceKey, traceKeySecretName } from './trace-keys.js';
