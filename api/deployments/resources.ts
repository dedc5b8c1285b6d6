// Translation between the API's deployments/revisions and the AgentDeployment/AgentRevision
// custom resources that store them.
import {
  API_VERSION,
  AGENT_DEPLOYMENT,
  AGENT_REVISION,
  INITIAL_DEPLOYMENT_STATUS,
  INITIAL_REVISION_STATUS,
  LABELS,
  type AgentDeploymentSpec,
  type AgentDeploymentStatus,
  type AgentRevisionSpec,
  type AgentRevisionStatus,
  type DeploymentStatus,
  type ResourceSpec,
} from '../../common/resources/index.js';
import type { CustomResource } from '../kube/index.js';
import { CREATED_AT, createdAt, UPDATED_AT } from '../shared/index.js';
import { MASKED_SECRET_VALUE, type Deployment, type Revision } from './schemas.js';

export type DeploymentResource = CustomResource<AgentDeploymentSpec, AgentDeploymentStatus>;
export type RevisionResource = CustomResource<AgentRevisionSpec, AgentRevisionStatus>;

/** The Secret holding one revision's secrets. */
export const revisionSecretName = (revisionId: string) => `${revisionId}-secrets`;

const created = (r: CustomResource<unknown, unknown>) => createdAt(r.metadata);

/** The API status of a deployment: what the operator reported, or where it starts. */
export function deploymentStatus(resource: DeploymentResource): DeploymentStatus {
  if (resource.metadata.deletionTimestamp) return 'AWAITING_DELETE';
  return resource.status?.status ?? INITIAL_DEPLOYMENT_STATUS;
}

/** The API body of a deployment. Secret values are write-only: only their names come back. */
export function deploymentBody(resource: DeploymentResource): Deployment {
  const { spec, status, metadata } = resource;
  return {
    id: metadata.name,
    name: spec.name,
    source: spec.source,
    source_config: {
      integration_id: null,
      repo_url: null,
      deployment_type: null,
      build_on_push: null,
      custom_url: spec.source_config.custom_url ?? null,
      resource_spec: spec.source_config.resource_spec ?? null,
      listener_id: spec.source_config.listener_id,
      listener_config: { k8s_namespace: spec.source_config.listener_config.k8s_namespace },
      install_command: null,
      build_command: null,
    },
    source_revision_config: {
      repo_ref: null,
      langgraph_config_path: null,
      image_uri: spec.source_revision_config.image_uri,
      repo_commit_sha: null,
    },
    secrets: spec.secret_names.map((name) => ({ name, value: MASKED_SECRET_VALUE })),
    created_at: created(resource),
    updated_at: metadata.annotations?.[UPDATED_AT] ?? created(resource),
    status: deploymentStatus(resource),
    latest_revision_id: spec.latest_revision.id,
    active_revision_id: status?.activeRevisionId ?? null,
    image_version: null,
  };
}

export function revisionBody(resource: RevisionResource): Revision {
  const { spec, status } = resource;
  const transitions = (status?.conditions ?? []).map((c) => c.lastTransitionTime).sort();
  return {
    id: resource.metadata.name,
    deployment_id: spec.deployment_id,
    created_at: created(resource),
    updated_at: transitions.at(-1) ?? created(resource),
    status: status?.status ?? INITIAL_REVISION_STATUS,
    status_message: status?.message ?? null,
    source: spec.source,
    source_revision_config: {
      repo_ref: null,
      langgraph_config_path: null,
      image_uri: spec.source_revision_config.image_uri,
      repo_commit_sha: null,
    },
    revision_number: spec.revision_number,
  };
}

/** Has the operator seen the current spec? */
export const isReconciled = (r: CustomResource<unknown, { observedGeneration?: number }>) =>
  r.metadata.generation !== undefined && r.status?.observedGeneration === r.metadata.generation;

export interface NewRevision {
  id: string;
  number: number;
  imageUri: string;
  resourceSpec: ResourceSpec | null | undefined;
  secretNames: string[];
  redeployOf?: string;
}

export function revisionResource(
  deployment: DeploymentResource,
  revision: NewRevision,
): RevisionResource {
  const { spec, metadata } = deployment;
  return {
    apiVersion: API_VERSION,
    kind: AGENT_REVISION.kind,
    metadata: {
      name: revision.id,
      namespace: metadata.namespace,
      annotations: { [CREATED_AT]: new Date().toISOString() },
      labels: {
        [LABELS.workspaceId]: spec.workspace_id,
        [LABELS.deploymentId]: metadata.name,
        [LABELS.revisionId]: revision.id,
      },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: AGENT_DEPLOYMENT.kind,
          name: metadata.name,
          uid: metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: {
      workspace_id: spec.workspace_id,
      deployment_id: metadata.name,
      deployment_name: spec.name,
      revision_number: revision.number,
      source: spec.source,
      source_revision_config: { image_uri: revision.imageUri },
      resource_spec: revision.resourceSpec ?? null,
      secrets_ref: { name: revisionSecretName(revision.id), keys: revision.secretNames },
      redeploy_of: revision.redeployOf ?? null,
    },
  };
}
