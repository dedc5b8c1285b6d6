// The Kubernetes permissions `graphdock operator` needs: the contract between the operator and
// the Helm chart, which grants exactly these (ClusterRoles, or Roles per watched namespace).
import { GROUP } from './meta.js';

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const MANAGE = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const READ = ['get', 'list', 'watch'];

export const OPERATOR_RULES: readonly PolicyRule[] = [
  // Listeners are cluster-scoped: the operator reads its own and reports version and heartbeat.
  { apiGroups: [GROUP], resources: ['listeners'], verbs: READ },
  { apiGroups: [GROUP], resources: ['listeners/status'], verbs: ['get', 'update', 'patch'] },
  {
    apiGroups: [GROUP],
    resources: ['agentdeployments', 'agentrevisions'],
    verbs: ['get', 'list', 'watch', 'update', 'patch'],
  },
  {
    apiGroups: [GROUP],
    resources: ['agentdeployments/status', 'agentrevisions/status'],
    verbs: ['get', 'update', 'patch'],
  },
  {
    apiGroups: [GROUP],
    resources: ['agentdeployments/finalizers', 'agentrevisions/finalizers'],
    verbs: ['update'],
  },
  // What a deployment becomes.
  { apiGroups: [''], resources: ['secrets', 'services'], verbs: MANAGE },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: MANAGE },
  { apiGroups: ['apps'], resources: ['replicasets'], verbs: READ },
  { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: MANAGE },
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: MANAGE },
  // Kubernetes Events on status transitions.
  { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
];

/** Leader election on a coordination.k8s.io Lease in the operator's own namespace. */
export const LEADER_ELECTION_RULES: readonly PolicyRule[] = [
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'],
  },
  { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
];
