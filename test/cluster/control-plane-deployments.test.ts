// /v2/deployments and revisions through a real `graphdock api` process against a real
// kube-apiserver. No operator runs here, so statuses are the initial ones unless a test writes
// status the way the operator would (through the status subresource).
import { beforeAll, describe, expect, it } from 'vitest';
import { MASKED_SECRET_VALUE as MASK } from '../../api/index.js';
import { otherTenant, useControlPlane } from '../support/control-plane.js';

const cp = useControlPlane({ namespaces: ['agents', 'elsewhere'] });

interface DeploymentBody {
  id: string;
  name: string;
  status: string;
  latest_revision_id: string;
  active_revision_id: string | null;
  source: string;
  source_config: Record<string, unknown> & { custom_url: string | null };
  source_revision_config: { image_uri: string | null };
  secrets: { name: string; value: string }[];
  created_at: string;
  updated_at: string;
}
interface RevisionBody {
  id: string;
  deployment_id: string;
  status: string;
  revision_number: number;
  source_revision_config: { image_uri: string };
}

let listenerId: string;

beforeAll(async () => {
  const res = await cp.http('/v2/listeners', {
    method: 'POST',
    json: {
      compute_type: 'k8s',
      compute_id: 'main',
      compute_config: { k8s_namespaces: ['agents'] },
    },
  });
  listenerId = ((await res.json()) as { id: string }).id;
});

const createBody = (name: string, over: Record<string, unknown> = {}) => ({
  name,
  source: 'external_docker',
  source_config: {
    listener_id: listenerId,
    listener_config: { k8s_namespace: 'agents' },
    resource_spec: { min_scale: 1, max_scale: 2, cpu: 0.5, memory_mb: 512 },
  },
  source_revision_config: { image_uri: 'registry.local/agent:1' },
  secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-test' }],
  ...over,
});

async function createDeployment(name: string, key?: string): Promise<DeploymentBody> {
  const res = await cp.http('/v2/deployments', { method: 'POST', json: createBody(name), key });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as DeploymentBody;
}

async function json<T>(path: string, init?: Parameters<typeof cp.http>[1]): Promise<T> {
  const res = await cp.http(path, init);
  expect(res.status, `${path}: ${await res.clone().text()}`).toBeLessThan(300);
  return (await res.json()) as T;
}

describe('create and read', () => {
  it('201 with id and latest_revision_id; stored as AgentDeployment and AgentRevision', async () => {
    const created = await createDeployment('quick-start');
    expect(created).toMatchObject({
      name: 'quick-start',
      source: 'external_docker',
      status: 'AWAITING_DATABASE',
      active_revision_id: null,
      source_revision_config: { image_uri: 'registry.local/agent:1' },
      secrets: [{ name: 'OPENAI_API_KEY', value: MASK }],
    });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.latest_revision_id).toMatch(/^[0-9a-f-]{36}$/);

    expect(await json(`/v2/deployments/${created.id}`)).toEqual(created);
    const revision = await json<RevisionBody>(
      `/v2/deployments/${created.id}/revisions/${created.latest_revision_id}`,
    );
    expect(revision).toMatchObject({
      id: created.latest_revision_id,
      deployment_id: created.id,
      status: 'CREATING',
      revision_number: 1,
    });

    const cr = await cp.kubectlJson<{ spec: Record<string, unknown> }>([
      'get',
      'agentdeployment',
      created.id,
      '-n',
      'agents',
    ]);
    expect(cr.spec).toMatchObject({ name: 'quick-start', latest_revision: { number: 1 } });
    const rev = await cp.kubectlJson<{
      metadata: { ownerReferences: { kind: string; name: string }[] };
    }>(['get', 'agentrevision', created.latest_revision_id, '-n', 'agents']);
    expect(rev.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'AgentDeployment', name: created.id }),
    ]);
    // Secret values live in a Secret, not in the custom resources.
    expect(JSON.stringify(cr)).not.toContain('sk-test');
  });

  it('reports the status the operator writes into the resources', async () => {
    const created = await createDeployment('status-readback');
    const patchStatus = (kind: string, name: string, status: unknown) =>
      cp.cluster.kubectl([
        'patch',
        kind,
        name,
        '-n',
        'agents',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status }),
      ]);
    await patchStatus('agentrevision', created.latest_revision_id, { status: 'DEPLOYED' });
    await patchStatus('agentdeployment', created.id, {
      status: 'READY',
      activeRevisionId: created.latest_revision_id,
    });
    const deployment = await json<DeploymentBody>(`/v2/deployments/${created.id}`);
    expect(deployment).toMatchObject({
      status: 'READY',
      active_revision_id: created.latest_revision_id,
    });
    const revision = await json<RevisionBody>(
      `/v2/deployments/${created.id}/revisions/${created.latest_revision_id}`,
    );
    expect(revision.status).toBe('DEPLOYED');
    const filtered = await json<{ resources: RevisionBody[] }>(
      `/v2/deployments/${created.id}/revisions?status=DEPLOYED,DEPLOY_FAILED`,
    );
    expect(filtered.resources.map((r) => r.id)).toEqual([created.latest_revision_id]);
  });

  it('lists with filters and pagination', async () => {
    const other = await otherTenant(cp.tenancy);
    const listener = await json<{ id: string }>('/v2/listeners', {
      method: 'POST',
      key: other.key,
      json: { compute_type: 'k8s', compute_id: 'mine', compute_config: { k8s_namespaces: null } },
    });
    const ids: string[] = [];
    for (const name of ['alpha-one', 'beta-two', 'alpha-three']) {
      const res = await cp.http('/v2/deployments', {
        method: 'POST',
        key: other.key,
        json: createBody(name, {
          source_config: {
            listener_id: listener.id,
            listener_config: { k8s_namespace: 'elsewhere' },
          },
        }),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      ids.push(((await res.json()) as DeploymentBody).id);
    }
    const names = async (query: string) =>
      (
        await json<{ resources: DeploymentBody[] }>(`/v2/deployments${query}`, { key: other.key })
      ).resources.map((d) => d.name);
    expect(await names('')).toEqual(['alpha-one', 'beta-two', 'alpha-three']);
    expect(await names('?name_contains=ALPHA')).toEqual(['alpha-one', 'alpha-three']);
    expect(await names(`?deployment_ids=${ids[1]},${ids[2]}`)).toEqual(['beta-two', 'alpha-three']);
    expect(await names('?status=AWAITING_DATABASE&limit=1&offset=1')).toEqual(['beta-two']);
    expect(await names('?status=READY')).toEqual([]);
    expect(await names('?remote_reconciled=true')).toEqual([]);
    expect((await cp.http('/v2/deployments?status=NOPE', { key: other.key })).status).toBe(422);
    // The bootstrap workspace sees none of them.
    const mine = await json<{ resources: DeploymentBody[] }>('/v2/deployments?limit=100');
    expect(mine.resources.some((d) => ids.includes(d.id))).toBe(false);
  });
});

describe('secrets are write-only', () => {
  it('no response carries a value; the Secret holds it; a masked value sent back keeps it', async () => {
    const value = 'sk-write-only-0123456789';
    const created = await json<DeploymentBody>('/v2/deployments', {
      method: 'POST',
      json: createBody('write-only', { secrets: [{ name: 'OPENAI_API_KEY', value }] }),
    });
    const id = created.id;
    const responses = [
      JSON.stringify(created),
      await (await cp.http(`/v2/deployments/${id}`)).text(),
      await (await cp.http('/v2/deployments?limit=100')).text(),
      await (await cp.http(`/v2/deployments/${id}/revisions`)).text(),
      await (await cp.http(`/v2/deployments/${id}/revisions/${created.latest_revision_id}`)).text(),
    ];
    const patched = await cp.http(`/v2/deployments/${id}`, {
      method: 'PATCH',
      json: {
        secrets: [
          { name: 'OPENAI_API_KEY', value: MASK },
          { name: 'OTHER', value: 'other-value-42' },
        ],
      },
    });
    responses.push(await patched.text());
    const patchedBody = JSON.parse(responses.at(-1)!) as DeploymentBody;
    const redeployed = await cp.http(
      `/v2/deployments/${id}/revisions/${created.latest_revision_id}/redeploy`,
      { method: 'POST' },
    );
    responses.push(await redeployed.text());
    for (const text of responses) {
      expect(text).not.toContain(value);
      expect(text).not.toContain('other-value-42');
    }
    expect(patchedBody.secrets).toEqual([
      { name: 'OPENAI_API_KEY', value: MASK },
      { name: 'OTHER', value: MASK },
    ]);
    // The values are in the revision's Secret, the masked one kept as it was.
    const secret = await cp.kubectlJson<{ data: Record<string, string> }>([
      'get',
      'secret',
      `${patchedBody.latest_revision_id}-secrets`,
      '-n',
      'agents',
    ]);
    const decoded = (k: string) => Buffer.from(secret.data[k] ?? '', 'base64').toString();
    expect([decoded('OPENAI_API_KEY'), decoded('OTHER')]).toEqual([value, 'other-value-42']);
    // Never in a custom resource, nor in the api's log.
    const crs = await cp.cluster.kubectl([
      'get',
      'agentdeployments,agentrevisions',
      '-n',
      'agents',
      '-o',
      'json',
    ]);
    expect(crs).not.toContain(value);
    expect(cp.api.output()).not.toContain(value);
    // A masked value for a name that has no stored value cannot be resolved.
    const unknown = await cp.http(`/v2/deployments/${id}`, {
      method: 'PATCH',
      json: { secrets: [{ name: 'NEVER_SET', value: MASK }] },
    });
    expect(unknown.status).toBe(422);
    expect(((await unknown.json()) as { detail: { loc: unknown[] }[] }).detail[0]!.loc).toEqual([
      'body',
      'secrets',
      0,
      'value',
    ]);
  });
});

describe('validation', () => {
  it('422 for reserved secret names, naming the offending secret', async () => {
    const res = await cp.http('/v2/deployments', {
      method: 'POST',
      json: createBody('bad-secrets', {
        secrets: [
          { name: 'FINE', value: '1' },
          { name: 'POSTGRES_URI', value: 'postgres://x' },
        ],
      }),
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [
        {
          loc: ['body', 'secrets', 1, 'name'],
          msg: "Secret name 'POSTGRES_URI' is reserved and cannot be set",
          type: 'value_error',
        },
      ],
    });
  });

  it('422 for missing fields, an image-less external_docker, a namespace outside the listener and unstorable strings', async () => {
    const missing = await cp.http('/v2/deployments', { method: 'POST', json: { name: 'x' } });
    expect(missing.status).toBe(422);
    const noImage = await cp.http('/v2/deployments', {
      method: 'POST',
      json: createBody('no-image', { source_revision_config: {} }),
    });
    expect(noImage.status).toBe(422);
    const outside = await cp.http('/v2/deployments', {
      method: 'POST',
      json: createBody('outside', {
        source_config: { listener_id: listenerId, listener_config: { k8s_namespace: 'elsewhere' } },
      }),
    });
    expect(outside.status).toBe(422);
    expect(JSON.stringify(await outside.json())).toContain('not one of the namespaces');
    // NUL or a lone surrogate cannot become a name, an image, a URL or an environment variable.
    const source_config = createBody('x').source_config;
    for (const [field, over] of [
      ['name', { name: 'n\u0000' }],
      ['image_uri', { source_revision_config: { image_uri: 'registry.local/agent:1\u0000' } }],
      ['custom_url', { source_config: { ...source_config, custom_url: 'http://x\ud800' } }],
      ['value', { secrets: [{ name: 'K', value: 'a\u0000b' }] }],
    ] as const) {
      const refused = await cp.http('/v2/deployments', {
        method: 'POST',
        json: createBody('unstorable', over),
      });
      expect(refused.status, field).toBe(422);
      expect(JSON.stringify(await refused.json()), field).toContain(`"${field}"`);
    }
    const listener = await cp.http('/v2/listeners', {
      method: 'POST',
      json: { compute_type: 'k8s', compute_id: 'm\u0000', compute_config: { k8s_namespaces: [] } },
    });
    expect(listener.status).toBe(422);
  });

  it('404 for a listener of another workspace', async () => {
    const other = await otherTenant(cp.tenancy);
    const res = await cp.http('/v2/deployments', {
      method: 'POST',
      key: other.key,
      json: createBody('foreign-listener'),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: `Listener ID ${listenerId} not found.` });
  });
});

describe('PATCH, revisions and redeploy', () => {
  it('a new image makes a new revision; custom_url alone does not; immutable fields are refused', async () => {
    const created = await createDeployment('patch-flow');
    const patched = await json<DeploymentBody>(`/v2/deployments/${created.id}`, {
      method: 'PATCH',
      json: { source_revision_config: { image_uri: 'registry.local/agent:2' } },
    });
    expect(patched.latest_revision_id).not.toBe(created.latest_revision_id);
    expect(patched.source_revision_config.image_uri).toBe('registry.local/agent:2');
    expect(patched.secrets).toEqual(created.secrets);

    const urlOnly = await json<DeploymentBody>(`/v2/deployments/${created.id}`, {
      method: 'PATCH',
      json: { source_config: { custom_url: 'https://agent.example' } },
    });
    expect(urlOnly.latest_revision_id).toBe(patched.latest_revision_id);
    expect(urlOnly.source_config.custom_url).toBe('https://agent.example');

    const secrets = await json<DeploymentBody>(`/v2/deployments/${created.id}`, {
      method: 'PATCH',
      json: { secrets: [{ name: 'NEW_SECRET', value: 'v2' }] },
    });
    expect(secrets.latest_revision_id).not.toBe(patched.latest_revision_id);
    expect(secrets.secrets).toEqual([{ name: 'NEW_SECRET', value: MASK }]);

    for (const change of [
      { name: 'renamed' },
      { source_config: { listener_config: { k8s_namespace: 'elsewhere' } } },
      { source_config: { listener_id: '00000000-0000-4000-8000-000000000000' } },
    ]) {
      const refused = await cp.http(`/v2/deployments/${created.id}`, {
        method: 'PATCH',
        json: change,
      });
      expect(refused.status, JSON.stringify(change)).toBe(422);
    }
    const reserved = await cp.http(`/v2/deployments/${created.id}`, {
      method: 'PATCH',
      json: { secrets: [{ name: 'REDIS_URI', value: 'x' }] },
    });
    expect(reserved.status).toBe(422);

    const revisions = await json<{ resources: RevisionBody[]; offset: number }>(
      `/v2/deployments/${created.id}/revisions`,
    );
    expect(revisions.resources.map((r) => r.revision_number)).toEqual([3, 2, 1]);
    expect(revisions.resources[0]!.id).toBe(secrets.latest_revision_id);
    expect(revisions.offset).toBe(3);
    const firstPage = await json<{ resources: RevisionBody[]; offset: number }>(
      `/v2/deployments/${created.id}/revisions?limit=1&offset=1`,
    );
    expect(firstPage).toMatchObject({ resources: [{ revision_number: 2 }], offset: 2 });
  });

  it('10 concurrent PATCHes: 10 successes, 10 distinct revision numbers, no conflict surfaced', async () => {
    const created = await createDeployment('concurrent-patch');
    const tags = Array.from({ length: 10 }, (_, i) => `t${i}`);
    const results = await Promise.all(
      tags.map((tag) =>
        cp.http(`/v2/deployments/${created.id}`, {
          method: 'PATCH',
          json: { source_revision_config: { image_uri: `registry.local/agent:${tag}` } },
        }),
      ),
    );
    const bodies = await Promise.all(results.map((r) => r.text()));
    expect(
      results.map((r) => r.status),
      bodies.join('\n'),
    ).toEqual(tags.map(() => 200));
    const ids = bodies.map((b) => (JSON.parse(b) as DeploymentBody).latest_revision_id);
    expect(new Set(ids).size).toBe(10);
    const revisions = await json<{ resources: RevisionBody[] }>(
      `/v2/deployments/${created.id}/revisions?limit=100`,
    );
    expect(revisions.resources.map((r) => r.revision_number)).toEqual(
      Array.from({ length: 11 }, (_, i) => 11 - i),
    );
    // Each PATCH's answer names a revision that exists with its own image.
    const images = revisions.resources.slice(0, 10).map((r) => r.source_revision_config.image_uri);
    expect(new Set(images)).toEqual(new Set(tags.map((t) => `registry.local/agent:${t}`)));
    // Losers removed their revisions and Secrets: exactly one Secret per revision is left.
    const secrets = await cp.kubectlJson<{ items: unknown[] }>([
      'get',
      'secrets',
      '-n',
      'agents',
      '-l',
      `graphdock.dev/deployment-id=${created.id}`,
    ]);
    expect(secrets.items).toHaveLength(11);
  });

  it('a partial resource_spec keeps the other fields in the revision and in GET', async () => {
    const created = await createDeployment('partial-spec');
    const patched = await json<DeploymentBody>(`/v2/deployments/${created.id}`, {
      method: 'PATCH',
      json: { source_config: { resource_spec: { min_scale: 2, max_scale: 3 } } },
    });
    const merged = { min_scale: 2, max_scale: 3, cpu: 0.5, memory_mb: 512 };
    expect(patched.source_config.resource_spec).toEqual(merged);
    const read = await json<DeploymentBody>(`/v2/deployments/${created.id}`);
    expect(read.source_config.resource_spec).toEqual(merged);
    const revision = await cp.kubectlJson<{ spec: { resource_spec: unknown } }>([
      'get',
      'agentrevision',
      patched.latest_revision_id,
      '-n',
      'agents',
    ]);
    expect(revision.spec.resource_spec).toEqual(merged);
    const cr = await cp.kubectlJson<{ spec: { source_config: { resource_spec: unknown } } }>([
      'get',
      'agentdeployment',
      created.id,
      '-n',
      'agents',
    ]);
    expect(cr.spec.source_config.resource_spec).toEqual(merged);
    // A secrets-only PATCH changes nothing else either.
    const secretsOnly = await json<DeploymentBody>(`/v2/deployments/${created.id}`, {
      method: 'PATCH',
      json: { secrets: [{ name: 'OPENAI_API_KEY', value: 'sk-rotated' }] },
    });
    expect(secretsOnly.source_config.resource_spec).toEqual(merged);
    // Clearing a field with null; an impossible range is 422 at the field sent.
    const cleared = await json<DeploymentBody>(`/v2/deployments/${created.id}`, {
      method: 'PATCH',
      json: { source_config: { resource_spec: { cpu: null } } },
    });
    expect(cleared.source_config.resource_spec).toEqual({
      min_scale: 2,
      max_scale: 3,
      memory_mb: 512,
    });
    const refused = await cp.http(`/v2/deployments/${created.id}`, {
      method: 'PATCH',
      json: { source_config: { resource_spec: { min_scale: 4 } } },
    });
    expect(refused.status).toBe(422);
    expect(await refused.json()).toEqual({
      detail: [
        {
          loc: ['body', 'source_config', 'resource_spec', 'min_scale'],
          msg: "'min_scale' (4) must not be greater than 'max_scale' (3)",
          type: 'value_error',
        },
      ],
    });
  });

  it('redeploy makes a new revision from an earlier one', async () => {
    const created = await createDeployment('redeploy-me');
    await json(`/v2/deployments/${created.id}`, {
      method: 'PATCH',
      json: { source_revision_config: { image_uri: 'registry.local/agent:broken' } },
    });
    const redeployed = await json<DeploymentBody>(
      `/v2/deployments/${created.id}/revisions/${created.latest_revision_id}/redeploy`,
      { method: 'POST' },
    );
    expect(redeployed.source_revision_config.image_uri).toBe('registry.local/agent:1');
    expect(redeployed.secrets).toEqual(created.secrets);
    const latest = await json<RevisionBody>(
      `/v2/deployments/${created.id}/revisions/${redeployed.latest_revision_id}`,
    );
    expect(latest).toMatchObject({ revision_number: 3, status: 'CREATING' });
  });

  it('another workspace gets 404 for the deployment and its revisions', async () => {
    const created = await createDeployment('private');
    const other = await otherTenant(cp.tenancy);
    const paths = [
      `/v2/deployments/${created.id}`,
      `/v2/deployments/${created.id}/revisions`,
      `/v2/deployments/${created.id}/revisions/${created.latest_revision_id}`,
    ];
    for (const path of paths)
      expect((await cp.http(path, { key: other.key })).status, path).toBe(404);
    const patch = await cp.http(paths[0]!, { method: 'PATCH', key: other.key, json: {} });
    expect(patch.status).toBe(404);
    const del = await cp.http(paths[0]!, { method: 'DELETE', key: other.key });
    expect(del.status).toBe(404);
    expect((await cp.http(paths[0]!)).status).toBe(200);
    const unknownRevision = await cp.http(
      `/v2/deployments/${created.id}/revisions/00000000-0000-4000-8000-000000000000`,
    );
    expect(unknownRevision.status).toBe(404);
  });
});

describe('DELETE /v2/deployments/{id}', () => {
  it('204, then 404; the revisions and their Secrets go with the deployment', async () => {
    const created = await createDeployment('delete-me');
    await json(`/v2/deployments/${created.id}`, {
      method: 'PATCH',
      json: { source_revision_config: { image_uri: 'registry.local/agent:2' } },
    });
    const res = await cp.http(`/v2/deployments/${created.id}`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect((await cp.http(`/v2/deployments/${created.id}`)).status).toBe(404);
    expect((await cp.http(`/v2/deployments/${created.id}`, { method: 'DELETE' })).status).toBe(404);
    const selector = `graphdock.dev/deployment-id=${created.id}`;
    const left = await cp.kubectlJson<{ items: unknown[] }>([
      'get',
      'agentdeployments',
      '-n',
      'agents',
      '-l',
      selector,
    ]);
    expect(left.items).toEqual([]);
    // The garbage collector follows the owner references: revisions, then their Secrets.
    const deadline = Date.now() + 90_000;
    let remaining = -1;
    while (Date.now() < deadline) {
      const revisions = await cp.kubectlJson<{ items: unknown[] }>([
        'get',
        'agentrevisions',
        '-n',
        'agents',
        '-l',
        selector,
      ]);
      const secrets = await cp.kubectlJson<{ items: unknown[] }>([
        'get',
        'secrets',
        '-n',
        'agents',
        '-l',
        selector,
      ]);
      remaining = revisions.items.length + secrets.items.length;
      if (remaining === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(remaining).toBe(0);
  });
});
