// Deployments' trace keys: the operator's Secret (minted, rotated per revision, the previous key
// kept) and the api's check of a key against it (both keys, the workspace, the cache).
import { describe, expect, it } from 'vitest';
import { TraceKeyVerifier } from '../../api/auth/index.js';
import { parseTraceKey } from '../../common/resources/index.js';
import { TraceKeyStep, type AgentDeployment } from '../../operator/reconcile/index.js';
import type { AgentRevision } from '../../operator/reconcile/index.js';

const WORKSPACE = '11111111-1111-4111-8111-111111111111';
const ID = '0a1b2c3d-0000-4000-8000-000000000000';
const deployment = {
  metadata: { name: ID, namespace: 'agents', uid: 'u1' },
  spec: { workspace_id: WORKSPACE },
} as unknown as AgentDeployment;
const revision = (name: string) => ({ metadata: { name } }) as AgentRevision;

/** Secrets in memory, as the operator writes them (base64 `data`) and both sides read them. */
function secretStore() {
  const secrets = new Map<string, Record<string, string>>();
  let reads = 0;
  return {
    secrets,
    reads: () => reads,
    async readSecret(namespace: string, name: string) {
      reads++;
      return secrets.get(`${namespace}/${name}`);
    },
    async apply<T>(obj: T): Promise<T> {
      const o = obj as {
        metadata: { namespace: string; name: string };
        data: Record<string, string>;
      };
      secrets.set(
        `${o.metadata.namespace}/${o.metadata.name}`,
        Object.fromEntries(
          Object.entries(o.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
        ),
      );
      return obj;
    },
  };
}

const tenancy = {
  async workspacePrincipal(workspaceId: string, keyId: string, permissions: string[]) {
    return {
      keyId,
      permissions,
      workspace: { id: workspaceId, organization_id: 'o', name: 'w' },
      organization: { id: 'o', name: 'o', plan: 'p' },
    };
  },
};

describe('deployment trace keys', () => {
  it('the operator mints a key naming its Secret, rotates it per revision and keeps the previous', async () => {
    const store = secretStore();
    const step = new TraceKeyStep(store);
    await step.ensure(deployment, revision('r1'));
    const first = store.secrets.get(`agents/gd-${ID}-traces`)!;
    expect(parseTraceKey(first.key!)).toEqual({ namespace: 'agents', deploymentId: ID });
    expect(first.workspace_id).toBe(WORKSPACE);
    expect(first.previous).toBeUndefined();
    // Same revision: nothing read or written again.
    const reads = store.reads();
    await step.ensure(deployment, revision('r1'));
    expect(store.reads()).toBe(reads);
    // A restarted operator finds the key of the revision it serves and keeps it.
    await new TraceKeyStep(store).ensure(deployment, revision('r1'));
    expect(store.secrets.get(`agents/gd-${ID}-traces`)!.key).toBe(first.key);
    await step.ensure(deployment, revision('r2'));
    const second = store.secrets.get(`agents/gd-${ID}-traces`)!;
    expect(second.key).not.toBe(first.key);
    expect(second.previous).toBe(first.key);
  });

  it('the api accepts the current and previous keys as the workspace, nothing else', async () => {
    const store = secretStore();
    const step = new TraceKeyStep(store);
    await step.ensure(deployment, revision('r1'));
    const old = store.secrets.get(`agents/gd-${ID}-traces`)!.key!;
    await step.ensure(deployment, revision('r2'));
    const current = store.secrets.get(`agents/gd-${ID}-traces`)!.key!;
    let now = 0;
    const verifier = new TraceKeyVerifier(store, tenancy, () => now);
    for (const key of [current, old]) {
      const principal = await verifier.authenticate(key, undefined);
      expect(principal.workspace.id).toBe(WORKSPACE);
      expect(principal.permissions).toEqual(['TRACES_WRITE']);
    }
    const forged = `${current.slice(0, -4)}AAAA`;
    await expect(verifier.authenticate(forged, undefined)).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
    expect(TraceKeyVerifier.isTraceKey('gdk_ordinary')).toBe(false);
    expect(TraceKeyVerifier.isTraceKey(current)).toBe(true);
    // Once its Secret is gone (deployment deleted), the key stops working after the cache TTL.
    store.secrets.clear();
    await verifier.authenticate(current, undefined);
    now += 61_000;
    await expect(verifier.authenticate(current, undefined)).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
  });
});
