// Identity of the graphdock.dev custom resources and the labels that index them.
export const GROUP = 'graphdock.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Labels the control-plane API sets so it can find a resource by id or by tenant. */
export const LABELS = {
  workspaceId: 'graphdock.dev/workspace-id',
  listenerId: 'graphdock.dev/listener-id',
  deploymentId: 'graphdock.dev/deployment-id',
  revisionId: 'graphdock.dev/revision-id',
  bulkExportId: 'graphdock.dev/bulk-export-id',
  exportRunId: 'graphdock.dev/export-run-id',
} as const;

/**
 * Set (to the ISO time the write began) on an AgentDeployment or AgentRevision the API has
 * created but not yet committed: a deployment until its revision and Secret exist, a revision
 * until the deployment points at it. Readers ignore such objects; the operator removes those
 * older than its orphan grace period (the API that wrote them died before finishing).
 */
export const PENDING_ANNOTATION = 'graphdock.dev/pending';

export interface ResourceKind {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  scope: 'Namespaced' | 'Cluster';
}

export const LISTENER: ResourceKind = {
  kind: 'Listener',
  plural: 'listeners',
  singular: 'listener',
  shortNames: ['gdl'],
  scope: 'Cluster',
};

export const AGENT_DEPLOYMENT: ResourceKind = {
  kind: 'AgentDeployment',
  plural: 'agentdeployments',
  singular: 'agentdeployment',
  shortNames: ['agd', 'agdeploy'],
  scope: 'Namespaced',
};

export const AGENT_REVISION: ResourceKind = {
  kind: 'AgentRevision',
  plural: 'agentrevisions',
  singular: 'agentrevision',
  shortNames: ['agr', 'agrev'],
  scope: 'Namespaced',
};

export const BULK_EXPORT: ResourceKind = {
  kind: 'BulkExport',
  plural: 'bulkexports',
  singular: 'bulkexport',
  shortNames: ['gdbe'],
  scope: 'Namespaced',
};
