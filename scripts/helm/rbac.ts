// The chart's RBAC rules, derived from the rule constants the api and the operator are written
// against, so the chart never grants more or less than the code needs. Written to
// charts/graphdock/files/rbac.yaml; the templates only place them into (Cluster)Roles.
import {
  CONTROL_PLANE_API_EXPORT_RULES,
  CONTROL_PLANE_API_RULES,
  type PolicyRule,
} from '../../api/index.js';
import { CUSTOM_RESOURCES, GROUP } from '../../common/resources/index.js';
// operator/ has no index.ts on this branch yet; switch to it when the operator lands.
import {
  OPERATOR_EXPORT_RULES,
  OPERATOR_LEADER_ELECTION_RULES,
  OPERATOR_RULES,
} from '../../operator/rbac.js';

/** Rules for one component in each RBAC mode of the chart. */
export interface ComponentRbac {
  /** No watchNamespaces: one ClusterRole. */
  clusterWide: PolicyRule[];
  /** watchNamespaces given: a ClusterRole for what has no namespace (Listeners)... */
  namespacedModeCluster: PolicyRule[];
  /** ...and a Role in each watched namespace. */
  namespacedModeNamespace: PolicyRule[];
}

const CLUSTER_SCOPED = new Set(
  CUSTOM_RESOURCES.filter((r) => r.kind.scope === 'Cluster').map(
    (r) => `${GROUP}/${r.kind.plural}`,
  ),
);

function isClusterScoped(group: string, resource: string): boolean {
  const base = resource.split('/')[0] ?? resource;
  return CLUSTER_SCOPED.has(`${group}/${base}`);
}

/**
 * Splits rules for namespaced mode: rules on cluster-scoped resources (Listeners) go to the
 * ClusterRole, everything else to a Role in each watched namespace. Both processes are then
 * started with the watch namespaces, so they never list or watch across namespaces.
 */
export function splitRules(rules: readonly PolicyRule[]): ComponentRbac {
  const cluster: PolicyRule[] = [];
  const namespace: PolicyRule[] = [];
  for (const rule of rules) {
    for (const group of rule.apiGroups) {
      const clusterResources = rule.resources.filter((r) => isClusterScoped(group, r));
      const namespaced = rule.resources.filter((r) => !isClusterScoped(group, r));
      if (clusterResources.length > 0)
        cluster.push({ apiGroups: [group], resources: clusterResources, verbs: [...rule.verbs] });
      if (namespaced.length > 0)
        namespace.push({ apiGroups: [group], resources: namespaced, verbs: [...rule.verbs] });
    }
  }
  return {
    clusterWide: rules.map((r) => ({ ...r })),
    namespacedModeCluster: cluster,
    namespacedModeNamespace: namespace,
  };
}

export interface ChartRbac {
  api: ComponentRbac;
  operator: ComponentRbac;
  leaderElection: PolicyRule[];
  /** Roles in the release namespace, where BulkExports and their Jobs live. */
  exports: { api: PolicyRule[]; operator: PolicyRule[] };
}

export function chartRbac(): ChartRbac {
  return {
    api: splitRules(CONTROL_PLANE_API_RULES),
    operator: splitRules(OPERATOR_RULES),
    leaderElection: OPERATOR_LEADER_ELECTION_RULES.map((r) => ({ ...r })),
    exports: {
      api: CONTROL_PLANE_API_EXPORT_RULES.map((r) => ({ ...r })),
      operator: OPERATOR_EXPORT_RULES.map((r) => ({ ...r })),
    },
  };
}
