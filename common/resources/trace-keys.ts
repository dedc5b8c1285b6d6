// A deployment's trace credential: the operator mints it into a Secret the deployment owns, its
// runtime sends it with every trace batch, and `graphdock api` checks it against that Secret.
// The key names where its Secret lives, so the api needs no table of its own for it.
import { randomBytes } from 'node:crypto';

export const TRACE_KEY_PREFIX = 'gdt';
/** Data keys of the Secret: the current key, the one it replaced, and the workspace. */
export const TRACE_KEY_FIELDS = { key: 'key', previous: 'previous', workspace: 'workspace_id' };

export const traceKeySecretName = (deploymentId: string) => `gd-${deploymentId}-traces`;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function newTraceKey(namespace: string, deploymentId: string): string {
  return `${TRACE_KEY_PREFIX}.${namespace}.${deploymentId}.${randomBytes(24).toString('base64url')}`;
}

/** Where a trace key's Secret is, or undefined when `key` is not a trace key. */
export function parseTraceKey(
  key: string,
): { namespace: string; deploymentId: string } | undefined {
  const [prefix, namespace, deploymentId, secret, ...rest] = key.split('.');
  if (prefix !== TRACE_KEY_PREFIX || rest.length || !secret) return undefined;
  if (!namespace || !DNS_LABEL.test(namespace) || !deploymentId || !UUID.test(deploymentId))
    return undefined;
  return { namespace, deploymentId };
}
