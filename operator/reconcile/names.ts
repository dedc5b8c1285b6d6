// Names and labels of what the operator creates for an AgentDeployment.
import { LABELS } from '../../common/resources/index.js';

export const MANAGED_BY = 'graphdock-operator';
export const FINALIZER = 'graphdock.dev/cleanup';
/** On an AgentDeployment: `Retain` keeps its database after deletion; `Delete` drops it. */
export const DATABASE_RETAIN_ANNOTATION = 'graphdock.dev/database-retain-policy';
export const REVISION_ANNOTATION = 'graphdock.dev/revision-id';
export const CUSTOM_DATABASE_SECRET = 'POSTGRES_URI_CUSTOM';
export const SERVER_PORT = 8000;

/** DNS-1035 labels must start with a letter; deployment ids are UUIDs, which may not. */
export const workloadName = (deploymentId: string) => `gd-${deploymentId}`;
export const envSecretName = (deploymentId: string) => `gd-${deploymentId}-env`;
export const databaseSecretName = (deploymentId: string) => `gd-${deploymentId}-db`;

export function selectorLabels(deploymentId: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'graphdock-agent',
    'app.kubernetes.io/instance': workloadName(deploymentId),
  };
}

export function commonLabels(deploymentId: string, workspaceId: string): Record<string, string> {
  return {
    ...selectorLabels(deploymentId),
    'app.kubernetes.io/managed-by': MANAGED_BY,
    [LABELS.deploymentId]: deploymentId,
    [LABELS.workspaceId]: workspaceId,
  };
}
