// The trace store of the control-plane api: the official langsmith SDKs (JS and Python) trace
// into it and read back from it, updates may precede creates, and workspaces are isolated.
import { randomUUID } from 'node:crypto';
import { Client, RunTree } from 'langsmith';
import { describe, expect, it } from 'vitest';
import { CLIPPED_JSON } from '../../common/json/index.js';
import { createLogger } from '../../common/logging/index.js';
import { createTraceService, TraceStore } from '../../traces/index.js';
import { runTracesPython, TRACES_BOOTSTRAP_KEY, useTraceApi } from '../support/traces.js';
import { collect } from '../support/iterables.js';

const api = useTraceApi();

const client = (key = TRACES_BOOTSTRAP_KEY) =>
  new Client({ apiUrl: api.endpoint, apiKey: key, timeout_ms: 30_000 });

function http(path: string, init: RequestInit & { json?: unknown; key?: string } = {}) {
  const { json, key, ...rest } = init;
  const headers = new Headers(rest.headers);
  headers.set('x-api-key', key ?? TRACES_BOOTSTRAP_KEY);
  if (json !== undefined) headers.set('content-type', 'application/json');
  return fetch(`${api.endpoint}${path}`, {
    ...rest,
    headers,
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
}

/** A root chain with an LLM child (reporting usage) and a tool child, traced with RunTree. */
async function traceApp(ls: Client, project: string, threadId: string) {
  const root = new RunTree({
    name: 'app',
    run_type: 'chain',
    inputs: { question: 'hi' },
    project_name: project,
    client: ls,
    metadata: { thread_id: threadId },
  });
  await root.postRun();
  const llm = root.createChild({ name: 'model', run_type: 'llm', inputs: { messages: [] } });
  await llm.postRun();
  await llm.end({
    generations: [],
    usage_metadata: { input_tokens: 11, output_tokens: 4, total_tokens: 15 },
  });
  await llm.patchRun();
  const tool = root.createChild({ name: 'search', run_type: 'tool', inputs: { q: 'x' } });
  await tool.postRun();
  await tool.end(undefined, 'tool exploded');
  await tool.patchRun();
  await root.end({ answer: 42 });
  await root.patchRun();
  await ls.awaitPendingTraceBatches();
  return { root, llm, tool };
}

describe('trace ingest and reads with the official SDKs', () => {
  it('answers the info call the SDKs make first, and refuses requests without a key', async () => {
    const info = (await (await http('/info')).json()) as {
      batch_ingest_config: { use_multipart_endpoint: boolean; size_limit: number };
      instance_flags: { gzip_body_enabled: boolean };
    };
    // One JSON body per batch, in batches of up to 1,000 operations: the cheapest per run for
    // the SDKs, the api and PostgreSQL (bench/traces); gzip for an SDK that uses multipart.
    expect(info.batch_ingest_config.use_multipart_endpoint).toBe(false);
    expect(info.batch_ingest_config.size_limit).toBe(1000);
    expect(info.instance_flags.gzip_body_enabled).toBe(true);
    const anonymous = await fetch(`${api.endpoint}/runs/query`, { method: 'POST' });
    expect(anonymous.status).toBe(401);
  });

  it("stores the JS SDK's batched runs with every field, readable with readRun and listRuns", async () => {
    const ls = client();
    const project = `js-${randomUUID()}`;
    const threadId = randomUUID();
    const { root, llm, tool } = await traceApp(ls, project, threadId);

    const read = await ls.readRun(root.id);
    expect(read).toMatchObject({
      id: root.id,
      name: 'app',
      run_type: 'chain',
      trace_id: root.id,
      parent_run_id: null,
      parent_run_ids: [],
      is_root: true,
      status: 'success',
      inputs: { question: 'hi' },
      outputs: { answer: 42 },
      dotted_order: root.dotted_order,
    });
    expect((read.extra as { metadata: Record<string, unknown> }).metadata.thread_id).toBe(threadId);
    const session = await ls.readProject({ projectName: project });
    expect(read.session_id).toBe(session.id);

    const runs = await collect(ls.listRuns({ projectName: project, traceId: root.id }));
    expect(runs.map((r) => r.name)).toEqual(['app', 'model', 'search']);
    const model = runs.find((r) => r.id === llm.id)!;
    expect(model).toMatchObject({
      parent_run_id: root.id,
      parent_run_ids: [root.id],
      trace_id: root.id,
      prompt_tokens: 11,
      completion_tokens: 4,
      total_tokens: 15,
      dotted_order: llm.dotted_order,
    });
    expect(runs.find((r) => r.id === tool.id)).toMatchObject({
      status: 'error',
      error: 'tool exploded',
    });

    // The filters of the tracing rule: run type, errors, roots, parent, metadata thread_id.
    const ids = async (props: Parameters<Client['listRuns']>[0]) =>
      (await collect(ls.listRuns({ projectName: project, ...props }))).map((r) => r.id).sort();
    expect(await ids({ runType: 'llm' })).toEqual([llm.id]);
    expect(await ids({ error: true })).toEqual([tool.id]);
    expect(await ids({ isRoot: true })).toEqual([root.id]);
    expect(await ids({ parentRunId: root.id })).toEqual([llm.id, tool.id].sort());
    expect(
      await ids({
        filter: `and(eq(metadata_key, "thread_id"), eq(metadata_value, "${threadId}"))`,
      }),
    ).toEqual([root.id, llm.id, tool.id].sort());
    expect(await ids({ filter: 'and(eq(run_type, "tool"), has(tags, "none"))' })).toEqual([]);
    expect(await ids({ filter: `has(metadata, '{"thread_id": "${threadId}"}')` })).toEqual(
      [root.id, llm.id, tool.id].sort(),
    );
    expect(await ids({ filter: `has(metadata, '{"thread_id": "other"}')` })).toEqual([]);
    expect(await ids({ startTime: new Date(Date.now() + 3_600_000) })).toEqual([]);

    // The thread view: its runs in order, with the LLM runs' token totals.
    const thread = (await (await http(`/threads/${threadId}`)).json()) as {
      runs: { id: string }[];
      total_tokens: number;
      prompt_tokens: number;
    };
    expect(thread.runs.map((r) => r.id)).toEqual(runs.map((r) => r.id));
    expect(thread).toMatchObject({ total_tokens: 15, prompt_tokens: 11 });
  });

  /** A client recording the ingest requests it makes; `info` is merged into what /info says. */
  function recordingClient(info?: { batch_ingest_config: Record<string, unknown> }) {
    const requests: { path: string; encoding: string | null }[] = [];
    const recording: typeof fetch = async (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const path = new URL(url).pathname;
      if (/\/runs\/(batch|multipart)$/.test(path))
        requests.push({ path, encoding: new Headers(init?.headers).get('content-encoding') });
      const response = await fetch(input, init);
      if (!path.endsWith('/info') || !info) return response;
      const served = (await response.json()) as { batch_ingest_config: Record<string, unknown> };
      return Response.json({
        ...served,
        batch_ingest_config: { ...served.batch_ingest_config, ...info.batch_ingest_config },
      });
    };
    const ls = new Client({
      apiUrl: api.endpoint,
      apiKey: TRACES_BOOTSTRAP_KEY,
      timeout_ms: 30_000,
      fetchImplementation: recording,
    });
    return { ls, requests };
  }

  async function expectTraceIntact(ls: Client, project: string) {
    const { root, llm, tool } = await traceApp(ls, project, randomUUID());
    const runs = await collect(ls.listRuns({ projectName: project, traceId: root.id }));
    expect(runs.map((r) => r.id)).toEqual([root.id, llm.id, tool.id]);
    expect(runs[0]).toMatchObject({ inputs: { question: 'hi' }, outputs: { answer: 42 } });
    expect(runs[1]).toMatchObject({ total_tokens: 15, parent_run_id: root.id });
    expect(runs[2]).toMatchObject({ status: 'error', error: 'tool exploded' });
  }

  it("takes the JS SDK's JSON batches on /runs/batch, which /info advertises, with every run intact", async () => {
    const { ls, requests } = recordingClient();
    await expectTraceIntact(ls, `batch-${randomUUID()}`);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((r) => r.path.endsWith('/runs/batch'))).toBe(true);
  });

  it('takes gzipped multipart batches from an SDK that uses multipart, with every run intact', async () => {
    const { ls, requests } = recordingClient({
      batch_ingest_config: { use_multipart_endpoint: true },
    });
    await expectTraceIntact(ls, `gzip-${randomUUID()}`);
    // The SDK compresses runs as they are queued only when the server offers gzip.
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((r) => r.path.endsWith('/runs/multipart'))).toBe(true);
    expect(requests.every((r) => r.encoding === 'gzip')).toBe(true);
  });

  it('merges updates that arrive before their create, and derives what a client leaves out', async () => {
    const project = `raw-${randomUUID()}`;
    const rootId = randomUUID();
    const childId = randomUUID();
    const start = new Date(Date.now() - 1000).toISOString();
    // The update first (the SDKs' batching allows it), then the creates without trace_id or
    // dotted_order, through the single-run endpoints.
    expect(
      (
        await http(`/runs/${childId}`, {
          method: 'PATCH',
          json: {
            end_time: new Date().toISOString(),
            outputs: { llm_output: { token_usage: { prompt_tokens: 3, completion_tokens: 2 } } },
          },
        })
      ).status,
    ).toBe(202);
    const post = (json: unknown) => http('/runs', { method: 'POST', json });
    expect(
      (
        await post({
          id: rootId,
          name: 'root',
          run_type: 'chain',
          start_time: start,
          inputs: {},
          session_name: project,
        })
      ).status,
    ).toBe(202);
    expect(
      (
        await post({
          id: childId,
          name: 'child',
          run_type: 'llm',
          start_time: start,
          inputs: {},
          parent_run_id: rootId,
          session_name: project,
        })
      ).status,
    ).toBe(202);

    const child = await client().readRun(childId);
    expect(child).toMatchObject({
      trace_id: rootId,
      parent_run_id: rootId,
      parent_run_ids: [rootId],
      is_root: false,
      status: 'success',
      prompt_tokens: 3,
      completion_tokens: 2,
      total_tokens: 5,
    });
    expect(child.dotted_order).toMatch(
      new RegExp(`^\\d{8}T\\d{12}Z${rootId}\\.\\d{8}T\\d{12}Z${childId}$`),
    );
    expect(child.end_time).toBeTruthy();
  });

  it('merges an update that raced its create at the next sweep', async () => {
    const id = randomUUID();
    const posted = await http('/runs', {
      method: 'POST',
      json: { id, name: 'raced', run_type: 'chain', start_time: new Date().toISOString() },
    });
    expect(posted.status).toBe(202);
    // What a lost race leaves: the update waiting although its run is stored (the create's
    // statement did not see it, its own second look did not see the create).
    await new TraceStore(api.pool).addPendingUpdates(api.workspaceId, [
      { id, end_time: new Date().toISOString(), outputs: { answer: 42 } },
    ]);
    expect(await client().readRun(id)).toMatchObject({ status: 'pending', outputs: null });
    const sweeper = await createTraceService(api.pool, createLogger({ level: 'silent' }));
    await sweeper.sweepExpired();
    expect(await client().readRun(id)).toMatchObject({
      status: 'success',
      outputs: { answer: 42 },
    });
  });

  it('ingests the JSON batch endpoint and validates what it is sent', async () => {
    const id = randomUUID();
    const res = await http('/runs/batch', {
      method: 'POST',
      json: {
        post: [{ id, name: 'b', run_type: 'chain', start_time: Date.now(), inputs: { a: 1 } }],
        patch: [],
      },
    });
    expect(res.status).toBe(202);
    expect((await client().readRun(id)).inputs).toEqual({ a: 1 });
    const bad = await http('/runs/batch', { method: 'POST', json: { post: [{ id: 'nope' }] } });
    expect(bad.status).toBe(422);
  });

  it('cuts run data nested deeper than 512 levels and keeps the run; the other api routes refuse such bodies', async () => {
    // The body is level 1, `post` 2, the run 3, `inputs` 4: 508 arrays in it reach 512.
    const nested = (levels: number, bottom: unknown = 1): unknown =>
      Array.from({ length: levels }).reduce<unknown>((inner) => [inner], bottom);
    const run = (id: string, arrays: number) => ({
      id,
      name: 'deep',
      run_type: 'chain',
      start_time: Date.now(),
      inputs: { x: nested(arrays) },
    });
    const [kept, deep, deepPart, beside] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const atLimit = await http('/runs/batch', { method: 'POST', json: { post: [run(kept, 508)] } });
    expect(atLimit.status).toBe(202);
    expect((await client().readRun(kept)).inputs).toEqual({ x: nested(508) });
    // An SDK drops a batch that is refused: the run beside the deep one would go with it.
    const cut = await http('/runs/batch', {
      method: 'POST',
      json: { post: [run(deep, 3000), run(beside, 3)] },
    });
    expect(cut.status).toBe(202);
    expect((await client().readRun(deep)).inputs).toEqual({ x: nested(507, [CLIPPED_JSON]) });
    expect((await client().readRun(beside)).inputs).toEqual({ x: nested(3) });
    // In a multipart body each part is level 1 of its own.
    const boundary = 'graphdock-deep';
    const part = JSON.stringify(run(deepPart, 600));
    const multipart = await http('/runs/multipart', {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: `--${boundary}\r\nContent-Disposition: form-data; name="post.${deepPart}"\r\n\r\n${part}\r\n--${boundary}--\r\n`,
    });
    expect(multipart.status).toBe(202);
    expect((await client().readRun(deepPart)).inputs).toEqual({ x: nested(509, [CLIPPED_JSON]) });
    // The control-plane routes refuse it, before parsing.
    const deployment = await fetch(`${api.api.url}/v2/deployments`, {
      method: 'POST',
      headers: { 'x-api-key': TRACES_BOOTSTRAP_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'deep', secrets: nested(600) }),
    });
    expect(deployment.status).toBe(422);
    expect(await deployment.json()).toMatchObject({ detail: [{ type: 'json_too_deep' }] });
  });

  it('keeps NUL and lone surrogates in run data, and refuses them with 422 where the store matches on them', async () => {
    const odd = 'a\u0000b\ud800\ufdd0c';
    const id = randomUUID();
    const run = {
      id,
      name: odd,
      run_type: 'chain',
      start_time: Date.now(),
      inputs: { x: odd },
      outputs: { y: odd },
      error: odd,
      tags: [odd],
      extra: { metadata: { k: odd } },
    };
    expect((await http('/runs/batch', { method: 'POST', json: { post: [run] } })).status).toBe(202);
    const read = await client().readRun(id);
    expect(read).toMatchObject({
      name: odd,
      inputs: { x: odd },
      outputs: { y: odd },
      error: odd,
      tags: [odd],
      extra: { metadata: { k: odd } },
    });
    const listed = (await (
      await http('/runs/query', { method: 'POST', json: { id: [id] } })
    ).json()) as { runs: { name: string; error: string; tags: string[] }[] };
    expect(listed.runs[0]).toMatchObject({ name: odd, error: odd, tags: [odd] });
    // A project is found by its name, a query by its filter: those must be storable.
    const other = randomUUID();
    const named = await http('/runs/batch', {
      method: 'POST',
      json: { post: [{ ...run, id: other, session_name: 'p\u0000' }] },
    });
    expect(named.status).toBe(422);
    expect(await named.json()).toMatchObject({
      detail: [{ loc: ['body', 'post', 0, 'session_name'] }],
    });
    expect((await http(`/runs/${other}`)).status).toBe(404);
    const refused = [
      await http('/sessions', { method: 'POST', json: { name: 'p\u0000' } }),
      await http('/runs/query', { method: 'POST', json: { filter: 'eq(name, "\u0000")' } }),
      await http(`/sessions?name=${encodeURIComponent('\u0000')}`),
    ];
    expect(refused.map((r) => r.status)).toEqual([422, 422, 422]);
  });

  it('shows a workspace nothing of another workspace', async () => {
    const project = `iso-${randomUUID()}`;
    const { root } = await traceApp(client(), project, randomUUID());
    const other = await api.newWorkspace('other-team');
    const theirs = client(other.key);
    await expect(theirs.readRun(root.id)).rejects.toThrow(/404|not found/i);
    await expect(theirs.readProject({ projectName: project })).rejects.toThrow(/not found/i);
    const all = (await (
      await http('/runs/query', { method: 'POST', json: { trace: root.id }, key: other.key })
    ).json()) as { runs: unknown[] };
    expect(all.runs).toEqual([]);
    // The same project name in their workspace is their own project.
    const mine = await traceApp(theirs, project, randomUUID());
    const theirRuns = await collect(theirs.listRuns({ projectName: project }));
    expect(theirRuns.map((r) => r.trace_id)).toEqual(Array(3).fill(mine.root.id));
    // A key may not name another workspace in X-Tenant-Id.
    const forbidden = await http('/runs/query', {
      method: 'POST',
      json: {},
      key: other.key,
      headers: { 'x-tenant-id': api.workspaceId },
    });
    expect(forbidden.status).toBe(403);
  });

  it("sweeps runs past their workspace's retention, in its own workspace only", async () => {
    const team = await api.newWorkspace('short-retention');
    const put = await http('/trace-retention', {
      method: 'PUT',
      json: { ttl_days: 7 },
      key: team.key,
    });
    expect(await put.json()).toEqual({ ttl_days: 7, default: false });
    const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
    const post = (key: string, id: string, start: string) =>
      http('/runs', {
        method: 'POST',
        key,
        json: { id, name: 'r', run_type: 'chain', start_time: start, inputs: {} },
      });
    const [old, recent, otherOld] = [randomUUID(), randomUUID(), randomUUID()];
    await post(team.key, old, daysAgo(10));
    await post(team.key, recent, daysAgo(2));
    // The bootstrap workspace keeps the default 14 days.
    await post(TRACES_BOOTSTRAP_KEY, otherOld, daysAgo(10));

    const sweeper = await createTraceService(api.pool, createLogger({ level: 'silent' }));
    expect(await sweeper.sweepExpired()).toBeGreaterThanOrEqual(1);
    const status = async (key: string, id: string) => (await http(`/runs/${id}`, { key })).status;
    expect(await status(team.key, old)).toBe(404);
    expect(await status(team.key, recent)).toBe(200);
    expect(await status(TRACES_BOOTSTRAP_KEY, otherOld)).toBe(200);
  });

  it("takes the traces of PyPI's langsmith and reads them back with it", async () => {
    const project = `py-${randomUUID()}`;
    const threadId = randomUUID();
    const result = await runTracesPython('trace_langsmith.py', {
      LANGSMITH_ENDPOINT: api.endpoint,
      LANGSMITH_API_KEY: TRACES_BOOTSTRAP_KEY,
      LANGSMITH_TRACING: 'true',
      LANGSMITH_PROJECT: project,
      THREAD_ID: threadId,
    });
    expect(result.code, result.stderr).toBe(0);
    const rootId = result.stdout.trim().split('\n').at(-1)!;
    const read = await client().readRun(rootId);
    expect(read).toMatchObject({ name: 'py-app', is_root: true, status: 'success' });
    // Python's microsecond times survive.
    expect(read.dotted_order?.slice(0, 22)).toMatch(/^\d{8}T\d{12}Z$/);
  }, 600_000);
});
