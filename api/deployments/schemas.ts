// Wire shapes of /v2/deployments and its revisions, as the control-plane API v2 defines them.
import { z } from 'zod';
import { storableString } from '../../common/json/index.js';
import { DeploymentStatus, ResourceSpec, RevisionStatus } from '../../common/resources/index.js';
import { NamespaceName } from '../shared/index.js';

export const Secret = z.object({
  // Checked as an environment variable's name (rules.ts).
  name: z.string().min(1).max(253),
  value: storableString().max(1_048_576),
});
export type Secret = z.infer<typeof Secret>;

/**
 * What GET returns instead of a secret's value: values are write-only. A string (not an omitted
 * field) keeps clients that model `Secret {name, value}` with both required parsing responses,
 * and a PATCH that sends it back unchanged keeps the stored value.
 */
export const MASKED_SECRET_VALUE = '********';

export const ListenerConfigRequest = z.object({ k8s_namespace: NamespaceName.nullish() });

export const SourceConfigRequest = z.object({
  integration_id: z.uuid().nullish(),
  repo_url: storableString().nullish(),
  deployment_type: z.enum(['dev_free', 'dev', 'prod']).nullish(),
  build_on_push: z.boolean().nullish(),
  custom_url: storableString().max(2048).nullish(),
  resource_spec: ResourceSpec.nullish(),
  listener_id: z.uuid().nullish(),
  listener_config: ListenerConfigRequest.nullish(),
  install_command: storableString().nullish(),
  build_command: storableString().nullish(),
});
export type SourceConfigRequest = z.infer<typeof SourceConfigRequest>;

export const SourceRevisionConfigRequest = z.object({
  repo_ref: storableString().nullish(),
  langgraph_config_path: storableString().nullish(),
  image_uri: storableString().max(1024).nullish(),
});

export const DEPLOYMENT_SOURCE_VALUES = ['github', 'external_docker'] as const;

export const DeploymentCreateRequest = z.object({
  name: storableString().min(1).max(253),
  source: z.enum(DEPLOYMENT_SOURCE_VALUES),
  source_config: SourceConfigRequest,
  source_revision_config: SourceRevisionConfigRequest,
  // Required by the API description, but the official CLI omits it when there are none.
  secrets: z.array(Secret).max(256).default([]),
});
export type DeploymentCreateRequest = z.infer<typeof DeploymentCreateRequest>;

export const DeploymentPatchRequest = z.object({
  source_config: SourceConfigRequest.nullish(),
  source_revision_config: SourceRevisionConfigRequest.nullish(),
  secrets: z.array(Secret).max(256).nullish(),
  // Not patchable; listed so that an attempt is refused rather than silently dropped.
  name: z.string().optional(),
  source: z.string().optional(),
});
export type DeploymentPatchRequest = z.infer<typeof DeploymentPatchRequest>;

const SourceConfig = SourceConfigRequest.extend({
  listener_config: z.object({ k8s_namespace: z.string().nullable() }).nullable(),
});
const SourceRevisionConfig = SourceRevisionConfigRequest.extend({
  repo_commit_sha: z.string().nullable(),
});

export const Deployment = z.object({
  id: z.uuid(),
  name: z.string(),
  source: z.enum(DEPLOYMENT_SOURCE_VALUES),
  source_config: SourceConfig,
  source_revision_config: SourceRevisionConfig,
  secrets: z.array(Secret),
  created_at: z.string(),
  updated_at: z.string(),
  status: DeploymentStatus,
  latest_revision_id: z.uuid().nullable(),
  active_revision_id: z.uuid().nullable(),
  image_version: z.string().nullable(),
});
export type Deployment = z.infer<typeof Deployment>;

export const Revision = z.object({
  id: z.uuid(),
  deployment_id: z.uuid(),
  created_at: z.string(),
  updated_at: z.string(),
  status: RevisionStatus,
  status_message: z.string().nullable(),
  source: z.enum(DEPLOYMENT_SOURCE_VALUES),
  source_revision_config: SourceRevisionConfig,
  revision_number: z.number().int(),
});
export type Revision = z.infer<typeof Revision>;

const commaList = z
  .string()
  .optional()
  .transform((v) =>
    v
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : undefined,
  );
const queryBool = z
  .enum(['true', 'false', '1', '0'])
  .optional()
  .transform((v) => (v === undefined ? undefined : v === 'true' || v === '1'));

export const DeploymentListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
  name_contains: z.string().optional(),
  status: commaList.pipe(z.array(DeploymentStatus).optional()),
  remote_reconciled: queryBool,
  tag_value_ids: commaList,
  image_version: z.string().optional(),
  deployment_type: z.enum(['dev_free', 'dev', 'prod']).optional(),
  deployment_ids: commaList.pipe(z.array(z.uuid()).optional()),
});
export type DeploymentListQuery = z.infer<typeof DeploymentListQuery>;

export const RevisionListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
  status: commaList.pipe(z.array(RevisionStatus).optional()),
  remote_reconciled: queryBool,
});
export type RevisionListQuery = z.infer<typeof RevisionListQuery>;

export const DeploymentIdParams = z.object({ deployment_id: z.uuid() });
export const RevisionIdParams = z.object({ deployment_id: z.uuid(), revision_id: z.uuid() });
