// Pure rules of the deployments API: what a create needs, what a patch may change, and whether
// a patch makes a new revision. No I/O, so they are unit-tested directly.
import type { ValidationIssue } from '../../common/errors/index.js';
import type { AgentDeploymentSpec, ResourceSpec } from '../../common/resources/index.js';
import { RESERVED_SECRET_NAMES } from './reserved-secrets.js';
import {
  MASKED_SECRET_VALUE,
  type DeploymentCreateRequest,
  type DeploymentPatchRequest,
  type Secret,
} from './schemas.js';

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

/** Pairs whose first value may not exceed the second: replica ranges, requests and limits. */
const ORDERED_PAIRS = [
  ['min_scale', 'max_scale'],
  ['queue_min_scale', 'queue_max_scale'],
  ['cpu', 'cpu_limit'],
  ['memory_mb', 'memory_limit_mb'],
  ['queue_cpu', 'queue_cpu_limit'],
  ['queue_memory_mb', 'queue_memory_limit_mb'],
  ['db_cpu', 'db_cpu_limit'],
  ['db_memory_mb', 'db_memory_limit_mb'],
] as const;

/**
 * Values that cannot run together, e.g. `min_scale` above `max_scale`. `spec` is what the
 * revision will hold; `sent` what this request gave, so `loc` names a field the caller sent.
 */
export function resourceSpecIssues(
  spec: ResourceSpec | null | undefined,
  sent: ResourceSpec | null | undefined,
  loc: (string | number)[],
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const [low, high] of ORDERED_PAIRS) {
    const a = spec?.[low];
    const b = spec?.[high];
    if (a == null || b == null || a <= b) continue;
    issues.push({
      loc: [...loc, sent?.[low] != null || sent?.[high] == null ? low : high],
      msg: `'${low}' (${a}) must not be greater than '${high}' (${b})`,
      type: 'value_error',
    });
  }
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
  const spec = body.source_config.resource_spec;
  issues.push(...resourceSpecIssues(spec, spec, ['body', 'source_config', 'resource_spec']));
  issues.push(...secretIssues(body.secrets, ['body', 'secrets']));
  issues.push(
    ...body.secrets.flatMap((secret, i) =>
      secret.value === MASKED_SECRET_VALUE ? [maskedIssue(['body', 'secrets', i, 'value'])] : [],
    ),
  );
  return issues;
}

const maskedIssue = (loc: (string | number)[]): ValidationIssue => ({
  loc,
  msg: `'${MASKED_SECRET_VALUE}' stands for a stored value, and there is none under this name: send the value itself`,
  type: 'value_error',
});

/**
 * A PATCH may send back the masked value GET shows: that secret keeps its stored value. `stored`
 * is the current revision's secrets; a masked value for a name it lacks is refused.
 */
export function unmaskSecrets(
  secrets: Secret[],
  stored: Secret[],
): { secrets: Secret[]; issues: ValidationIssue[] } {
  const values = new Map(stored.map((s) => [s.name, s.value]));
  const issues: ValidationIssue[] = [];
  const resolved = secrets.map((secret, i) => {
    if (secret.value !== MASKED_SECRET_VALUE) return secret;
    const value = values.get(secret.name);
    if (value === undefined) issues.push(maskedIssue(['body', 'secrets', i, 'value']));
    return { name: secret.name, value: value ?? '' };
  });
  return { secrets: resolved, issues };
}

/** The resource_spec after a PATCH: fields sent replace stored ones (null clears), others stay. */
export function mergeResourceSpec(
  current: ResourceSpec | null | undefined,
  sent: ResourceSpec | null | undefined,
): ResourceSpec | null {
  if (sent == null) return current ?? null;
  const merged = Object.entries({ ...current, ...sent }).filter(([, v]) => v != null);
  return Object.fromEntries(merged);
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
  const resourceSpec = mergeResourceSpec(current.source_config.resource_spec, config.resource_spec);
  issues.push(
    ...resourceSpecIssues(resourceSpec, config.resource_spec, [
      'body',
      'source_config',
      'resource_spec',
    ]),
  );

  const image = patch.source_revision_config?.image_uri;
  const newRevision = image != null || config.resource_spec != null || patch.secrets != null;
  return {
    issues,
    newRevision,
    imageUri: image ?? current.source_revision_config.image_uri,
    resourceSpec,
    customUrl:
      config.custom_url !== undefined ? config.custom_url : current.source_config.custom_url,
    secrets: patch.secrets ?? undefined,
  };
}
