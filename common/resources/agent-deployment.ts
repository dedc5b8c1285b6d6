// AgentDeployment: one agent server, placed once on a listener's namespace, rolled to its
// latest AgentRevision by the operator.
import { z } from 'zod';
import { immutable } from './cel.js';
import { Conditions } from './conditions.js';
import type { CustomResourceSource } from './crd.js';
import { AGENT_DEPLOYMENT } from './meta.js';
import { ResourceSpec } from './resource-spec.js';
import { DeploymentStatus } from './statuses.js';

export const DEPLOYMENT_SOURCES = ['external_docker'] as const;

export const ListenerPlacement = z.object({ k8s_namespace: z.string().min(1).max(63) });

export const DeploymentSourceConfig = z.object({
  listener_id: z.uuid().meta(immutable('source_config.listener_id is immutable')),
  listener_config: ListenerPlacement.meta(immutable('source_config.listener_config is immutable')),
  custom_url: z.string().max(2048).nullish(),
  resource_spec: ResourceSpec.nullish(),
});

export const SourceRevisionConfig = z.object({ image_uri: z.string().min(1).max(1024) });

/** Points at the revision the operator should roll out. */
export const RevisionPointer = z.object({
  id: z.uuid(),
  number: z.number().int().min(1),
});

export const AgentDeploymentSpec = z.object({
  workspace_id: z.uuid().meta(immutable('workspace_id is immutable')),
  name: z.string().min(1).max(253).meta(immutable('name is immutable')),
  source: z.enum(DEPLOYMENT_SOURCES).meta(immutable('source is immutable')),
  source_config: DeploymentSourceConfig,
  source_revision_config: SourceRevisionConfig,
  /** Names of the secrets of the latest revision; their values live in that revision's Secret. */
  secret_names: z.array(z.string().max(253)).max(256),
  latest_revision: RevisionPointer,
});
export type AgentDeploymentSpec = z.infer<typeof AgentDeploymentSpec>;

export const AgentDeploymentStatus = z.object({
  observedGeneration: z.number().int().min(0).optional(),
  conditions: Conditions.optional(),
  status: DeploymentStatus.optional(),
  activeRevisionId: z.uuid().optional(),
  endpoint: z.string().max(2048).optional(),
});
export type AgentDeploymentStatus = z.infer<typeof AgentDeploymentStatus>;

export const agentDeploymentResource: CustomResourceSource = {
  kind: AGENT_DEPLOYMENT,
  spec: AgentDeploymentSpec,
  status: AgentDeploymentStatus,
  printerColumns: [
    { name: 'Agent', type: 'string', jsonPath: '.spec.name' },
    { name: 'Status', type: 'string', jsonPath: '.status.status' },
    { name: 'Revision', type: 'integer', jsonPath: '.spec.latest_revision.number' },
    { name: 'Image', type: 'string', jsonPath: '.spec.source_revision_config.image_uri' },
    { name: 'Endpoint', type: 'string', jsonPath: '.status.endpoint' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};
