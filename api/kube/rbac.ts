// The Kubernetes permissions `graphdock api` needs, and no more: its custom resources and the
// per-revision Secrets. It never reads or writes Deployments, Pods or anything the operator owns.
// The Helm chart and the tests grant exactly these rules.
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

export const CONTROL_PLANE_API_RULES: readonly PolicyRule[] = [
  {
    apiGroups: ['graphdock.dev'],
    resources: ['listeners', 'agentdeployments', 'agentrevisions'],
    // update: a deployment is replaced whole (PUT), conditional on the resourceVersion read.
    verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
  },
  // Secrets only by name (no list/watch): each revision's own Secret, created with its owner.
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'create', 'delete'] },
];

/**
 * Namespaced (GRAPHDOCK_EXPORT_JOBS_NAMESPACE), with the Job executor of bulk exports: the api
 * publishes each export as a BulkExport and marks it cancelled; it never touches the Jobs.
 */
export const CONTROL_PLANE_API_EXPORT_RULES: readonly PolicyRule[] = [
  {
    apiGroups: ['graphdock.dev'],
    resources: ['bulkexports'],
    verbs: ['get', 'create', 'update'],
  },
];
