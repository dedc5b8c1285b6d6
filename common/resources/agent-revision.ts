// AgentRevision: one immutable snapshot of what a deployment runs. A change makes a new one.
import { z } from 'zod';
import { Conditions } from './conditions.js';
import type { CustomResourceSource } from './crd.js';
import { DEPLOYMENT_SOURCES, SourceRevisionConfig } from './agent-deployment.js';
import { AGENT_REVISION } from './meta.js';
import { ResourceSpec } from './resource-spec.js';
import { RevisionStatus } from './statuses.js';

export const AgentRevisionSpec = z
  .object({
    workspace_id: z.uuid(),
    deployment_id: z.uuid(),
    deployment_name: z.string().min(1).max(253),
    revision_number: z.number().int().min(1),
    source: z.enum(DEPLOYMENT_SOURCES),
    source_revision_config: SourceRevisionConfig,
    resource_spec: ResourceSpec.nullish(),
    /** The Secret (same namespace) holding this revision's secrets, one key per name. */
    secrets_ref: z.object({
      name: z.string().min(1).max(253),
      keys: z.array(z.string().max(253)).max(256),
    }),
    /** Set when the revision was made by redeploying an earlier one. */
    redeploy_of: z.uuid().nullish(),
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: 'self == oldSelf',
        message: 'AgentRevision spec is immutable: create a new revision instead',
        reason: 'FieldValueForbidden',
      },
    ],
  });
export type AgentRevisionSpec = z.infer<typeof AgentRevisionSpec>;

export const AgentRevisionStatus = z.object({
  observedGeneration: z.number().int().min(0).optional(),
  conditions: Conditions.optional(),
  status: RevisionStatus.optional(),
  message: z.string().max(32768).optional(),
  endpoint: z.string().max(2048).optional(),
});
export type AgentRevisionStatus = z.infer<typeof AgentRevisionStatus>;

export const agentRevisionResource: CustomResourceSource = {
  kind: AGENT_REVISION,
  spec: AgentRevisionSpec,
  status: AgentRevisionStatus,
  printerColumns: [
    { name: 'Deployment', type: 'string', jsonPath: '.spec.deployment_name' },
    { name: 'Revision', type: 'integer', jsonPath: '.spec.revision_number' },
    { name: 'Status', type: 'string', jsonPath: '.status.status' },
    { name: 'Image', type: 'string', jsonPath: '.spec.source_revision_config.image_uri' },
    { name: 'Endpoint', type: 'string', jsonPath: '.status.endpoint' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};
