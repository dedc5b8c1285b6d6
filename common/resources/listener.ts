// Listener: binds a workspace to a compute environment (a cluster and its namespaces).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { immutable } from './cel.js';
import { Conditions } from './conditions.js';
import type { CustomResourceSource } from './crd.js';
import { LISTENER } from './meta.js';

export const ListenerComputeConfig = z.object({
  k8s_namespaces: z.array(z.string().min(1).max(63)).max(256).nullish(),
});

export const ListenerSpec = z.object({
  workspace_id: z.uuid().meta(immutable('workspace_id is immutable')),
  compute_type: z.literal('k8s').meta(immutable('compute_type is immutable')),
  compute_id: z.string().min(1).max(253).meta(immutable('compute_id is immutable')),
  compute_config: ListenerComputeConfig,
  version: z.string().max(128).nullish(),
});
export type ListenerSpec = z.infer<typeof ListenerSpec>;

export const ListenerStatus = z.object({
  observedGeneration: z.number().int().min(0).optional(),
  conditions: Conditions.optional(),
  /** Version of the operator serving this listener, reported by the operator. */
  operatorVersion: z.string().max(128).optional(),
  lastHeartbeatTime: z.iso.datetime().optional(),
});
export type ListenerStatus = z.infer<typeof ListenerStatus>;

export const listenerResource: CustomResourceSource = {
  kind: LISTENER,
  spec: ListenerSpec,
  status: ListenerStatus,
  printerColumns: [
    { name: 'Compute-ID', type: 'string', jsonPath: '.spec.compute_id' },
    { name: 'Namespaces', type: 'string', jsonPath: '.spec.compute_config.k8s_namespaces' },
    { name: 'Version', type: 'string', jsonPath: '.status.operatorVersion' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};

/**
 * One name per (workspace, compute_id): the API server's create conflict is then the
 * uniqueness check, with no window between a read and a write.
 */
export function listenerResourceName(workspaceId: string, computeId: string): string {
  const digest = createHash('sha256').update(`${workspaceId}\n${computeId}`).digest('hex');
  return `listener-${digest.slice(0, 40)}`;
}
