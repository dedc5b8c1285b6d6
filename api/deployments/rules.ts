// Pure rules of the deployments API: what a create needs, what a patch may change, and whether
// a patch makes a new revision. No I/O, so they are unit-tested directly.
import type { ValidationIssue } from '../../common/errors/index.js';
import type { AgentDeploymentSpec, ResourceSpec } from '../../common/resources/index.js';
import { RESERVED_SECRET_NAMES } from './reserved-secrets.js';
import type { DeploymentCreateRequest, DeploymentPatchRequest, Secret } from './schemas.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const GITHUB_ONLY = ['integration_id', 'repo_url', 'deployment_type', 'build_on_push'] as const;

export function secretIssues(secrets: Secret[], loc: (string | number)[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  secrets.forEach((secret, i) => {
    const at = [...loc, i, 'name'];
    if (!ENV_NAME.test(secret.name))
      issues.push({
        loc: at,
        msg: `Secret name '${secret.name}' is not a valid environment variable name`,
        type: 'value_error',
      });
    else if (RESERVED_SECRET_NAMES.has(secret.name))
      issues.push({
        loc: at,
        msg: `Secret name '${secret.name}' is reserved and cannot be set`,
        type: 'value_error',
      });
    else if (seen.has(secret.name))
      issues.push({
        loc: at,
        msg: `Secret name '${secret.name}' is duplicated`,
        type: 'value_error',
      });
    seen.add(secret.name);
  });
  return issues;
}

/** Validation of a create body beyond its shape: what an `external_docker` deployment needs. */
export function createIssues(body: DeploymentCreateRequest): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (body.source !== 'external_docker') {
    issues.push({
      loc: ['body', 'source'],
      msg: "Only 'external_docker' deployments are supported on self-hosted installations",
      type: 'value_error',
    });
    return issues;
  }
  if (!body.source_revision_config.image_uri)
    issues.push({
      loc: ['body', 'source_revision_config', 'image_uri'],
      msg: "'image_uri' is required for source 'external_docker'",
      type: 'missing',
    });
  if (!body.source_config.listener_id)
    issues.push({
      loc: ['body', 'source_config', 'listener_id'],
      msg: "'listener_id' is required for source 'external_docker'",
      type: 'missing',
    });
  if (!body.source_config.listener_config?.k8s_namespace)
    issues.push({
      loc: ['body', 'source_config', 'listener_config', 'k8s_namespace'],
      msg: "'listener_config.k8s_namespace' is required for source 'external_docker'",
      type: 'missing',
    });
  for (const field of GITHUB_ONLY) {
    if (body.source_config[field] != null)
      issues.push({
        loc: ['body', 'source_config', field],
        msg: `'${field}' applies only to source 'github'`,
        type: 'value_error',
      });
  }
  issues.push(...secretIssues(body.secrets, ['body', 'secrets']));
  return issues;
}

export interface PatchPlan {
  issues: ValidationIssue[];
  /** True when the image, resource_spec or secrets were given: they need a new revision. */
  newRevision: boolean;
  imageUri: string;
  resourceSpec: ResourceSpec | null | undefined;
  customUrl: string | null | undefined;
  /** The secrets of the new revision, or undefined to keep the current ones. */
  secrets: Secret[] | undefined;
}

const immutableIssue = (loc: string[], field: string): ValidationIssue => ({
  loc,
  msg: `'${field}' cannot be changed once the deployment is created`,
  type: 'immutable',
});

export function planPatch(current: AgentDeploymentSpec, patch: DeploymentPatchRequest): PatchPlan {
  const issues: ValidationIssue[] = [];
  if (patch.name !== undefined && patch.name !== current.name)
    issues.push(immutableIssue(['body', 'name'], 'name'));
  if (patch.source !== undefined && patch.source !== current.source)
    issues.push(immutableIssue(['body', 'source'], 'source'));
  const config = patch.source_config ?? {};
  if (
    config.listener_id != null &&
    config.listener_id.toLowerCase() !== current.source_config.listener_id
  )
    issues.push(immutableIssue(['body', 'source_config', 'listener_id'], 'listener_id'));
  const namespace = config.listener_config?.k8s_namespace;
  if (namespace != null && namespace !== current.source_config.listener_config.k8s_namespace)
    issues.push(immutableIssue(['body', 'source_config', 'listener_config'], 'listener_config'));
  for (const field of GITHUB_ONLY) {
    if (config[field] != null) issues.push(immutableIssue(['body', 'source_config', field], field));
  }
  if (patch.secrets) issues.push(...secretIssues(patch.secrets, ['body', 'secrets']));

  const image = patch.source_revision_config?.image_uri;
  const newRevision = image != null || config.resource_spec != null || patch.secrets != null;
  return {
    issues,
    newRevision,
    imageUri: image ?? current.source_revision_config.image_uri,
    resourceSpec:
      config.resource_spec != null ? config.resource_spec : current.source_config.resource_spec,
    customUrl:
      config.custom_url !== undefined ? config.custom_url : current.source_config.custom_url,
    secrets: patch.secrets ?? undefined,
  };
}
