// Shared steps of the operator's cluster tests: a listener, deployments through the REST API,
// and polling until the cluster reports what a test waits for.
import { expect } from 'vitest';
import type { ControlPlaneFixture } from '../support/control-plane.js';

export interface DeploymentBody {
  id: string;
  status: string;
  latest_revision_id: string;
  active_revision_id: string | null;
}
export interface RevisionBody {
  id: string;
  status: string;
  status_message: string | null;
  revision_number: number;
}

export async function json<T>(
  cp: ControlPlaneFixture,
  path: string,
  init?: Parameters<ControlPlaneFixture['http']>[1],
): Promise<T> {
  const res = await cp.http(path, init);
  const text = await res.text();
  expect(res.status, `${path}: ${text}`).toBeLessThan(300);
  return (text ? JSON.parse(text) : undefined) as T;
}

export async function createListener(
  cp: ControlPlaneFixture,
  computeId: string,
  namespaces: string[],
): Promise<string> {
  const body = await json<{ id: string }>(cp, '/v2/listeners', {
    method: 'POST',
    json: {
      compute_type: 'k8s',
      compute_id: computeId,
      compute_config: { k8s_namespaces: namespaces },
    },
  });
  return body.id;
}

export function deploymentRequest(
  name: string,
  listenerId: string,
  namespace: string,
  over: {
    resource_spec?: Record<string, unknown>;
    secrets?: { name: string; value: string }[];
    image?: string;
  } = {},
) {
  return {
    name,
    source: 'external_docker',
    source_config: {
      listener_id: listenerId,
      listener_config: { k8s_namespace: namespace },
      resource_spec: over.resource_spec ?? { min_scale: 1, max_scale: 1, cpu: 0.5, memory_mb: 256 },
    },
    source_revision_config: { image_uri: over.image ?? 'registry.local/agent:1' },
    secrets: over.secrets ?? [{ name: 'OPENAI_API_KEY', value: 'sk-test' }],
  };
}

export async function createDeployment(
  cp: ControlPlaneFixture,
  body: ReturnType<typeof deploymentRequest>,
): Promise<DeploymentBody> {
  const res = await cp.http('/v2/deployments', { method: 'POST', json: body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as DeploymentBody;
}

/** Polls `read` until `done` holds; fails with the last value seen. */
export async function until<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 90_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await read();
      if (done(last)) return last;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `timed out waiting for ${what}; last value: ${JSON.stringify(last)}${lastError instanceof Error ? `; last error: ${lastError.message}` : ''}`,
  );
}

export const revisionPath = (d: { id: string }, revisionId: string) =>
  `/v2/deployments/${d.id}/revisions/${revisionId}`;

export function waitForRevision(
  cp: ControlPlaneFixture,
  deployment: { id: string },
  revisionId: string,
  status: string,
  timeoutMs?: number,
): Promise<RevisionBody> {
  return until(
    `revision ${revisionId} ${status}`,
    () => json<RevisionBody>(cp, revisionPath(deployment, revisionId)),
    (r) => r.status === status,
    timeoutMs,
  );
}
