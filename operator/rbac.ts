// The Kubernetes permissions `graphdock operator` needs, and no more. The Helm chart and the
// cluster tests grant exactly these rules, so a missing one fails the tests.
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/**
 * Cluster-wide by default; with watch namespaces the chart grants the Listener rules cluster-wide
 * and the rest as a Role in each watched namespace (scripts/helm/rbac.ts).
 */
export const OPERATOR_RULES: readonly PolicyRule[] = [
  {
    apiGroups: ['graphdock.dev'],
    resources: ['listeners', 'agentdeployments', 'agentrevisions'],
    verbs: ['get', 'list', 'watch'],
  },
  // Finalizers are added and removed by server-side apply of the operator's own entry; delete
  // removes what an api killed mid-write left (a deployment never committed, a revision never
  // pointed at).
  { apiGroups: ['graphdock.dev'], resources: ['agentdeployments'], verbs: ['patch', 'delete'] },
  { apiGroups: ['graphdock.dev'], resources: ['agentrevisions'], verbs: ['delete'] },
  {
    apiGroups: ['graphdock.dev'],
    resources: ['listeners/status', 'agentdeployments/status', 'agentrevisions/status'],
    verbs: ['get', 'patch'],
  },
  // Owner references with blockOwnerDeletion need update on the owner's finalizers.
  { apiGroups: ['graphdock.dev'], resources: ['agentdeployments/finalizers'], verbs: ['update'] },
  // Revision Secrets are read by name; the operator's own Secret is applied (create + patch).
  // list (by the revision-id label): Secrets older versions left without an owner are found.
  {
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
  },
  { apiGroups: [''], resources: ['services'], verbs: ['get', 'create', 'patch', 'delete'] },
  {
    apiGroups: ['apps'],
    resources: ['deployments'],
    verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'],
  },
  {
    apiGroups: ['autoscaling'],
    resources: ['horizontalpodautoscalers'],
    verbs: ['get', 'create', 'patch', 'delete'],
  },
  {
    apiGroups: ['policy'],
    resources: ['poddisruptionbudgets'],
    verbs: ['get', 'create', 'patch', 'delete'],
  },
  // Pods of agent workloads: why a new revision cannot become Ready (image pull, crash loop).
  { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] },
  // Kubernetes Events on the custom resources for status transitions.
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
];

/** Namespaced (the operator's own namespace): the leader-election Lease. */
export const OPERATOR_LEADER_ELECTION_RULES: readonly PolicyRule[] = [
  // Renewals are merge patches made conditional by the resourceVersion they carry.
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'create', 'update', 'patch'],
  },
];

/**
 * Namespaced (the exports' namespace, the api's): BulkExports are read and their status written;
 * each run is a Job, deleted when its export is cancelled.
 */
export const OPERATOR_EXPORT_RULES: readonly PolicyRule[] = [
  { apiGroups: ['graphdock.dev'], resources: ['bulkexports'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['graphdock.dev'], resources: ['bulkexports/status'], verbs: ['get', 'patch'] },
  {
    apiGroups: ['batch'],
    resources: ['jobs'],
    verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'],
  },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
];
