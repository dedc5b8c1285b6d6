// /v2/listeners through a real `graphdock api` process against a real kube-apiserver.
import { describe, expect, it } from 'vitest';
import { BOOTSTRAP_KEY, otherTenant, useControlPlane } from '../support/control-plane.js';

const cp = useControlPlane();

interface ListenerBody {
  id: string;
  compute_type: string;
  compute_id: string;
  compute_config: { k8s_namespaces: string[] | null };
  version: string | null;
  created_at: string;
  updated_at: string;
}

const body = (compute_id: string, namespaces: string[] | null = ['agents']) => ({
  compute_type: 'k8s',
  compute_id,
  compute_config: { k8s_namespaces: namespaces },
  version: '0.1.0',
});

async function createListener(computeId: string, key?: string): Promise<ListenerBody> {
  const res = await cp.http('/v2/listeners', { method: 'POST', json: body(computeId), key });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as ListenerBody;
}

describe('authentication', () => {
  it('401 without a key and with an unknown key', async () => {
    const missing = await cp.http('/v2/listeners', { key: null });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ detail: 'Missing X-Api-Key header' });
    const unknown = await cp.http('/v2/listeners', { key: 'gdk_not_a_key_at_all_000000' });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toEqual({ detail: 'Invalid API key' });
  });

  it('Authorization: Bearer carries the same keys', async () => {
    const bearer = await cp.http('/v2/listeners', {
      key: null,
      headers: { authorization: `Bearer ${BOOTSTRAP_KEY}` },
    });
    expect(bearer.status).toBe(200);
    const wrong = await cp.http('/v2/listeners', {
      key: null,
      headers: { authorization: 'Bearer gdk_not_a_key_at_all_000000' },
    });
    expect(wrong.status).toBe(401);
  });

  it('X-Tenant-Id must name the key’s own workspace', async () => {
    const own = await cp.http('/v2/listeners', { headers: { 'x-tenant-id': cp.workspaceId } });
    expect(own.status, cp.api.output().slice(-3000)).toBe(200);
    const other = await otherTenant(cp.tenancy);
    const foreign = await cp.http('/v2/listeners', {
      headers: { 'x-tenant-id': other.workspaceId },
    });
    expect(foreign.status).toBe(403);
  });
});

describe('POST /v2/listeners', () => {
  it('201 with the listener, stored as a cluster-scoped Listener resource', async () => {
    const created = await createListener('cluster-a');
    expect(created).toMatchObject({
      compute_type: 'k8s',
      compute_id: 'cluster-a',
      compute_config: { k8s_namespaces: ['agents'] },
      version: '0.1.0',
    });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(created.created_at)).not.toBeNaN();
    const list = await cp.kubectlJson<{
      items: { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> }[];
    }>(['get', 'listeners.graphdock.dev', '-l', `graphdock.dev/listener-id=${created.id}`]);
    expect(list.items).toHaveLength(1);
    expect(list.items[0]!.spec).toMatchObject({
      workspace_id: cp.workspaceId,
      compute_id: 'cluster-a',
      compute_type: 'k8s',
    });
  });

  it('409 for the same workspace and compute_id, with the spec’s text', async () => {
    await createListener('cluster-dup');
    const res = await cp.http('/v2/listeners', { method: 'POST', json: body('cluster-dup') });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      detail: `Listener for workspace ID '${cp.workspaceId}' and compute ID 'cluster-dup' already exists.`,
    });
  });

  it('two concurrent creates of one compute_id: exactly one 201 and one 409', async () => {
    for (let round = 0; round < 3; round++) {
      const json = body(`race-${round}`);
      const statuses = await Promise.all(
        [1, 2].map(async () => (await cp.http('/v2/listeners', { method: 'POST', json })).status),
      );
      expect(statuses.sort()).toEqual([201, 409]);
    }
  });

  it('the same compute_id in another workspace is a different listener', async () => {
    await createListener('shared-name');
    const other = await otherTenant(cp.tenancy);
    const res = await cp.http('/v2/listeners', {
      method: 'POST',
      json: body('shared-name'),
      key: other.key,
    });
    expect(res.status).toBe(201);
  });

  it('403 when the organization is not on the self-hosted enterprise plan', async () => {
    const other = await otherTenant(cp.tenancy, 'plus');
    const res = await cp.http('/v2/listeners', { method: 'POST', json: body('x'), key: other.key });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      detail:
        `Listeners cannot be created for workspace ID '${other.workspaceId}'. ` +
        'Creating listeners is only allowed for organizations with self-hosted enterprise plans.',
    });
  });

  it('422 HTTPValidationError with loc, msg and type', async () => {
    const res = await cp.http('/v2/listeners', {
      method: 'POST',
      json: { compute_type: 'ecs', compute_config: {} },
    });
    expect(res.status).toBe(422);
    const { detail } = (await res.json()) as {
      detail: { loc: (string | number)[]; msg: string; type: string }[];
    };
    expect(detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'compute_type'] }),
        { loc: ['body', 'compute_id'], msg: 'Field required', type: 'missing' },
      ]),
    );
    const notJson = await cp.http('/v2/listeners', {
      method: 'POST',
      body: '{nope',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(422);
  });
});

describe('GET, PATCH and DELETE /v2/listeners/{id}', () => {
  it('lists with limit and offset, {resources, offset}', async () => {
    const other = await otherTenant(cp.tenancy);
    for (const id of ['p1', 'p2', 'p3']) await createListener(id, other.key);
    const first = await cp.http('/v2/listeners?limit=2', { key: other.key });
    const page1 = (await first.json()) as { resources: ListenerBody[]; offset: number };
    expect(page1.resources.map((l) => l.compute_id)).toEqual(['p1', 'p2']);
    expect(page1.offset).toBe(2);
    const page2 = (await (
      await cp.http(`/v2/listeners?limit=2&offset=${page1.offset}`, { key: other.key })
    ).json()) as { resources: ListenerBody[]; offset: number };
    expect(page2).toMatchObject({ resources: [{ compute_id: 'p3' }], offset: 3 });
    expect((await cp.http('/v2/listeners?limit=0', { key: other.key })).status).toBe(422);
  });

  it('GET one; 404 for unknown ids and for another workspace’s ids', async () => {
    const created = await createListener('get-me');
    const got = await cp.http(`/v2/listeners/${created.id}`);
    expect(await got.json()).toEqual(created);
    const unknown = await cp.http('/v2/listeners/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({
      detail: 'Listener ID 00000000-0000-4000-8000-000000000000 not found.',
    });
    const other = await otherTenant(cp.tenancy);
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await cp.http(`/v2/listeners/${created.id}`, {
        method,
        key: other.key,
        ...(method === 'PATCH' ? { json: { version: 'x' } } : {}),
      });
      expect(res.status, method).toBe(404);
    }
    expect((await cp.http('/v2/listeners/not-a-uuid')).status).toBe(422);
  });

  it('PATCH changes version and compute_config; compute_type and compute_id are refused', async () => {
    const created = await createListener('patch-me');
    const res = await cp.http(`/v2/listeners/${created.id}`, {
      method: 'PATCH',
      json: { version: '0.2.0', compute_config: { k8s_namespaces: ['agents', 'more'] } },
    });
    expect(res.status).toBe(200);
    const patched = (await res.json()) as ListenerBody;
    expect(patched).toMatchObject({
      id: created.id,
      version: '0.2.0',
      compute_config: { k8s_namespaces: ['agents', 'more'] },
      created_at: created.created_at,
    });
    expect(Date.parse(patched.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    for (const change of [{ compute_id: 'moved' }, { compute_type: 'ecs' }]) {
      const refused = await cp.http(`/v2/listeners/${created.id}`, {
        method: 'PATCH',
        json: change,
      });
      expect(refused.status).toBe(422);
      const { detail } = (await refused.json()) as { detail: { loc: string[]; msg: string }[] };
      expect(detail[0]?.msg).toMatch(/cannot be changed/);
    }
    const after = (await (await cp.http(`/v2/listeners/${created.id}`)).json()) as ListenerBody;
    expect(after.compute_id).toBe('patch-me');
  });

  it('PUT replaces the listener whole; compute_type/compute_id immutable; same 409 rule as PATCH', async () => {
    const created = await createListener('put-me');
    const put = (json: unknown) => cp.http(`/v2/listeners/${created.id}`, { method: 'PUT', json });
    const widened = await put({
      compute_type: 'k8s',
      compute_id: 'put-me',
      compute_config: { k8s_namespaces: ['agents', 'spare'] },
    });
    expect(widened.status, await widened.clone().text()).toBe(200);
    // Full replacement: the version not sent is null, not kept.
    expect(await widened.json()).toMatchObject({
      id: created.id,
      version: null,
      compute_config: { k8s_namespaces: ['agents', 'spare'] },
      created_at: created.created_at,
    });
    const moved = await put({ ...body('moved'), compute_config: { k8s_namespaces: null } });
    expect(moved.status).toBe(422);
    expect(await moved.json()).toEqual({
      detail: [
        {
          loc: ['body', 'compute_id'],
          msg: 'compute_id cannot be changed once the listener is created',
          type: 'immutable',
        },
      ],
    });
    const partial = await put({ compute_type: 'k8s', compute_id: 'put-me' });
    expect(partial.status).toBe(422);
    expect(await partial.json()).toEqual({
      detail: [{ loc: ['body', 'compute_config'], msg: 'Field required', type: 'missing' }],
    });
    // A deployment in 'agents' keeps that namespace from being dropped.
    const deployment = await cp.http('/v2/deployments', {
      method: 'POST',
      json: {
        name: 'on-put-listener',
        source: 'external_docker',
        source_config: { listener_id: created.id, listener_config: { k8s_namespace: 'agents' } },
        source_revision_config: { image_uri: 'registry.local/agent:1' },
        secrets: [],
      },
    });
    expect(deployment.status, await deployment.clone().text()).toBe(201);
    const narrowed = await put({ ...body('put-me', ['spare']), version: '0.3.0' });
    expect(narrowed.status).toBe(409);
    expect(((await narrowed.json()) as { detail: string }).detail).toContain("'agents'");
    const unknown = await cp.http('/v2/listeners/00000000-0000-4000-8000-000000000000', {
      method: 'PUT',
      json: body('put-me'),
    });
    expect(unknown.status).toBe(404);
    const id = ((await deployment.json()) as { id: string }).id;
    expect((await cp.http(`/v2/deployments/${id}`, { method: 'DELETE' })).status).toBe(204);
  });

  it('DELETE 204, then 404; the compute_id can be used again', async () => {
    const created = await createListener('delete-me');
    const res = await cp.http(`/v2/listeners/${created.id}`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect((await cp.http(`/v2/listeners/${created.id}`)).status).toBe(404);
    expect((await cp.http(`/v2/listeners/${created.id}`, { method: 'DELETE' })).status).toBe(404);
    const again = await createListener('delete-me');
    expect(again.id).not.toBe(created.id);
  });
});

describe('Kubernetes API restarts', () => {
  it('answers 503 while the API server is down and recovers by itself when it is back', async () => {
    const created = await createListener('survives-restart');
    const restarting = cp.cluster.restartApiserver({ crash: true, downMs: 4_000 });
    await new Promise((r) => setTimeout(r, 1_500));
    const during = await cp.http(`/v2/listeners/${created.id}`);
    expect(during.status).toBe(503);
    expect(await during.json()).toEqual({ detail: 'The Kubernetes API is unavailable' });
    await restarting;
    // The connection pool may hold sockets to the old process: the first call after the restart
    // must still succeed (retried or reconnected), not fail.
    const got = await cp.http(`/v2/listeners/${created.id}`);
    expect(got.status, await got.clone().text()).toBe(200);
    expect(await got.json()).toEqual(created);
  });
});
