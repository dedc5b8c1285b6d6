// Feedback in the trace store of the control-plane api, driven with the official langsmith JS SDK:
// createFeedback (retries included), listFeedback, feedback parts of multipart batches,
// presigned tokens used without a key, feedback_stats on run reads and in bulk export rows,
// workspace isolation and retention.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, RunTree } from 'langsmith';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../common/logging/index.js';
import { createTraceService, TraceStore, type StoredFeedback } from '../../traces/index.js';
import { runTracesPython, TRACES_BOOTSTRAP_KEY, useTraceApi } from '../support/traces.js';
import { collect } from '../support/iterables.js';

const api = useTraceApi();
const tmp = mkdtempSync(join(tmpdir(), 'graphdock-feedback-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const client = (key = TRACES_BOOTSTRAP_KEY) =>
  new Client({ apiUrl: api.endpoint, apiKey: key, timeout_ms: 30_000 });

/** A request to /api/v1; `key: null` sends none. */
function http(path: string, init: RequestInit & { json?: unknown; key?: string | null } = {}) {
  const { json, key, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (key !== null) headers.set('x-api-key', key ?? TRACES_BOOTSTRAP_KEY);
  if (json !== undefined) headers.set('content-type', 'application/json');
  return fetch(`${api.endpoint}${path}`, {
    ...rest,
    headers,
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
}

/** A finished root run in `project`, stored. */
async function tracedRun(ls: Client, project: string): Promise<RunTree> {
  const root = new RunTree({
    name: 'app',
    run_type: 'chain',
    inputs: { q: 'hi' },
    project_name: project,
    client: ls,
  });
  await root.postRun();
  await root.end({ a: 1 });
  await root.patchRun();
  await ls.awaitPendingTraceBatches();
  return root;
}

describe('feedback in the trace store, with the official SDK', () => {
  it('stores createFeedback once per id (retries included), readable with listFeedback and readFeedback', async () => {
    const ls = client();
    const project = `fb-${randomUUID()}`;
    const run = await tracedRun(ls, project);
    const session = await ls.readProject({ projectName: project });

    const feedbackId = randomUUID();
    const create = () =>
      ls.createFeedback(run.id, 'correctness', {
        score: 0.75,
        value: 'mostly',
        comment: 'close enough',
        correction: { answer: 2 },
        feedbackId,
        sourceInfo: { who: 'test' },
      });
    await create();
    // The SDK's retry of the same feedback.
    await create();
    await ls.createFeedback(run.id, 'helpful', { score: true });
    await ls.createFeedback(run.id, 'helpful', { score: false });

    const mine = await collect(ls.listFeedback({ runIds: [run.id] }));
    expect(mine).toHaveLength(3);
    const correctness = await collect(
      ls.listFeedback({ runIds: [run.id], feedbackKeys: ['correctness'] }),
    );
    expect(correctness).toHaveLength(1);
    expect(correctness[0]).toMatchObject({
      id: feedbackId,
      run_id: run.id,
      // Taken from the stored run when the SDK does not send them.
      trace_id: run.id,
      session_id: session.id,
      key: 'correctness',
      score: 0.75,
      value: 'mostly',
      comment: 'close enough',
      correction: { answer: 2 },
      feedback_source: { type: 'api', metadata: { who: 'test' } },
    });
    const read = (await ls.readFeedback(feedbackId)) as unknown as StoredFeedback;
    expect(read).toEqual(correctness[0]);
    expect(Date.parse(read.created_at)).toBeLessThanOrEqual(Date.parse(read.modified_at));
    // Booleans are stored as 1 and 0.
    const helpful = await collect(ls.listFeedback({ runIds: [run.id], feedbackKeys: ['helpful'] }));
    expect(helpful.map((f) => f.score).sort()).toEqual([0, 1]);

    // The run reads carry feedback_stats: count, mean score and string values by key.
    const stats = {
      correctness: { n: 1, avg: 0.75, values: { mostly: 1 } },
      helpful: { n: 2, avg: 0.5, values: {} },
    };
    expect((await ls.readRun(run.id)).feedback_stats).toEqual(stats);
    const queried = (await (
      await http('/runs/query', { method: 'POST', json: { id: [run.id] } })
    ).json()) as { runs: { feedback_stats: unknown }[] };
    expect(queried.runs[0]!.feedback_stats).toEqual(stats);
    // A run without feedback reads null.
    const bare = await tracedRun(ls, project);
    expect((await ls.readRun(bare.id)).feedback_stats).toBeNull();
  });

  it('answers POST /feedback with the stored feedback, and refuses what it cannot keep with 422', async () => {
    const runId = randomUUID();
    const res = await http('/feedback', {
      method: 'POST',
      json: { run_id: runId, key: 'k', score: 1, comment: 'c', created_at: '2026-01-02T03:04:05Z' },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as StoredFeedback;
    expect(body).toMatchObject({
      run_id: runId,
      key: 'k',
      score: 1,
      value: null,
      comment: 'c',
      correction: null,
      feedback_source: null,
      created_at: '2026-01-02T03:04:05.000000Z',
      // Not stored yet: its trace and project are not known.
      trace_id: null,
      session_id: null,
    });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    const statusOf = async (json: unknown) =>
      (await http('/feedback', { method: 'POST', json })).status;
    // Feedback on a project alone is not kept here.
    expect(await statusOf({ session_id: randomUUID(), key: 'k', score: 1 })).toBe(422);
    expect(await statusOf({ run_id: runId, key: 'k', score: 'high' })).toBe(422);
    expect(await statusOf({ run_id: runId, score: 1 })).toBe(422);
    expect(await statusOf({ run_id: 'not-a-uuid', key: 'k' })).toBe(422);
    // A feedback config is not kept: refused, not ignored (null, as Python's SDK sends, passes).
    const config = { type: 'continuous', min: 0, max: 1 };
    expect(await statusOf({ run_id: runId, key: 'k', feedback_config: config })).toBe(422);
    expect(await statusOf({ run_id: runId, key: 'k', feedback_config: null })).toBe(200);
    expect((await http(`/feedback/${randomUUID()}`)).status).toBe(404);
    // The feedback routes other than a token's use still need a key.
    expect((await http('/feedback', { key: null })).status).toBe(401);
    expect((await http(`/feedback/${body.id}`, { key: null })).status).toBe(401);
    expect(
      (await http('/feedback', { method: 'POST', key: null, json: { run_id: runId, key: 'k' } }))
        .status,
    ).toBe(401);
  });

  it('stores the feedback parts of an SDK multipart batch, and validates them', async () => {
    // An SDK told to use multipart batches feedback with the runs of its trace.
    const multipartFetch: typeof fetch = async (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const response = await fetch(input, init);
      if (!new URL(url).pathname.endsWith('/info')) return response;
      const served = (await response.json()) as { batch_ingest_config: Record<string, unknown> };
      return Response.json({
        ...served,
        batch_ingest_config: { ...served.batch_ingest_config, use_multipart_endpoint: true },
      });
    };
    const posted: string[] = [];
    const ls = new Client({
      apiUrl: api.endpoint,
      apiKey: TRACES_BOOTSTRAP_KEY,
      timeout_ms: 30_000,
      fetchImplementation: async (input, init) => {
        const url =
          typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
        posted.push(new URL(url).pathname);
        return multipartFetch(input, init);
      },
    });
    const project = `fb-multipart-${randomUUID()}`;
    const run = await tracedRun(ls, project);
    const session = await client().readProject({ projectName: project });
    const feedbackId = randomUUID();
    await ls.createFeedback({
      runId: run.id,
      traceId: run.trace_id,
      sessionId: session.id,
      key: 'quality',
      score: 0.5,
      feedbackId,
    });
    await ls.awaitPendingTraceBatches();
    expect(posted.some((p) => p.endsWith('/feedback'))).toBe(false);
    expect(posted.some((p) => p.endsWith('/runs/multipart'))).toBe(true);
    expect(await collect(client().listFeedback({ runIds: [run.id] }))).toMatchObject([
      { id: feedbackId, key: 'quality', score: 0.5, trace_id: run.id, session_id: session.id },
    ]);

    // Hand-built: a feedback part beside a run, and one with a bad score, refused without the
    // run beside it (the SDKs drop a refused batch for good).
    const boundary = 'graphdock-feedback';
    const multipart = (parts: [string, unknown][]) =>
      http('/runs/multipart', {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body:
          parts
            .map(
              ([name, value]) =>
                `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n` +
                `Content-Type: application/json\r\n\r\n${JSON.stringify(value)}\r\n`,
            )
            .join('') + `--${boundary}--\r\n`,
      });
    const [runId, partId] = [randomUUID(), randomUUID()];
    const ok = await multipart([
      [
        `post.${runId}`,
        { name: 'r', run_type: 'chain', start_time: Date.now(), session_name: project },
      ],
      [`feedback.${partId}`, { run_id: runId, trace_id: runId, key: 'thumbs', score: true }],
    ]);
    expect(ok.status).toBe(202);
    expect(await client().readFeedback(partId)).toMatchObject({
      id: partId,
      run_id: runId,
      score: 1,
    });
    const keptRun = randomUUID();
    const bad = await multipart([
      [
        `post.${keptRun}`,
        { name: 'kept', run_type: 'chain', start_time: Date.now(), session_name: project },
      ],
      [`feedback.${randomUUID()}`, { run_id: runId, key: 'thumbs', score: 'yes' }],
    ]);
    expect(bad.status).toBe(422);
    expect(await bad.json()).toMatchObject({ detail: [{ loc: ['body', 'feedback', 0, 'score'] }] });
    expect(await client().readRun(keptRun)).toMatchObject({ id: keptRun, name: 'kept' });
  });

  it('takes feedback through a presigned token without a key, for its run and key only', async () => {
    const ls = client();
    const project = `fb-token-${randomUUID()}`;
    const run = await tracedRun(ls, project);
    const token = await ls.createPresignedFeedbackToken(run.id, 'thumbs');
    expect(token.url).toBe(`${api.endpoint}/feedback/tokens/${token.id}`);
    // The SDK's default: three hours.
    const ttl = Date.parse(token.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(2.9 * 3_600_000);
    expect(ttl).toBeLessThanOrEqual(3 * 3_600_000);

    const get = await fetch(`${token.url}?score=1&comment=${encodeURIComponent('great answer')}`);
    expect(get.status).toBe(200);
    expect(await get.json()).toMatchObject({
      run_id: run.id,
      key: 'thumbs',
      score: 1,
      comment: 'great answer',
      feedback_source: { type: 'app' },
    });
    const post = await fetch(token.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        score: false,
        value: 'meh',
        correction: { a: 2 },
        metadata: { u: 1 },
      }),
    });
    expect(post.status).toBe(200);
    expect(await post.json()).toMatchObject({
      score: 0,
      value: 'meh',
      correction: { a: 2 },
      feedback_source: { type: 'app', metadata: { u: 1 } },
    });
    const stored = await collect(ls.listFeedback({ runIds: [run.id], feedbackKeys: ['thumbs'] }));
    expect(stored).toHaveLength(2);
    expect(
      await collect(ls.listFeedback({ runIds: [run.id], feedbackSourceTypes: ['app'] })),
    ).toHaveLength(2);
    expect(
      await collect(ls.listFeedback({ runIds: [run.id], feedbackSourceTypes: ['api'] })),
    ).toEqual([]);
    expect((await ls.readRun(run.id)).feedback_stats).toEqual({
      thumbs: { n: 2, avg: 0.5, values: { meh: 1 } },
    });

    // A malformed score is refused and stores nothing.
    expect((await fetch(`${token.url}?score=high`)).status).toBe(422);
    const badPost = await fetch(token.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ score: 'high' }),
    });
    expect(badPost.status).toBe(422);
    expect(await collect(ls.listFeedback({ runIds: [run.id] }))).toHaveLength(2);

    // Unknown and expired tokens.
    const unknown = await fetch(`${api.endpoint}/feedback/tokens/${randomUUID()}?score=1`);
    expect(unknown.status).toBe(404);
    const short = await ls.createPresignedFeedbackToken(run.id, 'thumbs', {
      expiration: { minutes: 5 },
    });
    expect(Date.parse(short.expires_at) - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    await api.pool.query(
      "UPDATE trace_feedback_tokens SET expires_at = now() - interval '1 second' WHERE id = $1",
      [short.id],
    );
    const expired = await fetch(`${short.url}?score=1`);
    expect(expired.status).toBe(410);
    expect(((await expired.json()) as { detail: string }).detail).toMatch(/expired/);

    // An explicit expiry, and several tokens in one request.
    const at = new Date(Date.now() + 86_400_000).toISOString();
    const dated = await ls.createPresignedFeedbackToken(run.id, 'other', { expiration: at });
    expect(Date.parse(dated.expires_at)).toBe(Date.parse(at));
    const many = (await (
      await http('/feedback/tokens', {
        method: 'POST',
        json: [
          { run_id: run.id, feedback_key: 'a', expires_in: { days: 1 } },
          { run_id: run.id, feedback_key: 'b' },
        ],
      })
    ).json()) as { id: string; url: string }[];
    expect(many).toHaveLength(2);
    // listPresignedFeedbackTokens: the run's tokens, with their URLs.
    const listed = await collect(ls.listPresignedFeedbackTokens(run.id));
    expect(listed.map((t) => t.id).sort()).toEqual(
      [token.id, short.id, dated.id, ...many.map((t) => t.id)].sort(),
    );
    expect(listed.find((t) => t.id === token.id)!.url).toBe(token.url);
    expect(many[1]!.url).toBe(`${api.endpoint}/feedback/tokens/${many[1]!.id}`);
    const past = await http('/feedback/tokens', {
      method: 'POST',
      json: { run_id: run.id, feedback_key: 'a', expires_at: '2020-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(422);
    const configured = await http('/feedback/tokens', {
      method: 'POST',
      json: { run_id: run.id, feedback_key: 'a', feedback_config: { type: 'categorical' } },
    });
    expect(configured.status).toBe(422);
    // A naive time (Python's isoformat()) is UTC.
    const naive = new Date(Date.now() + 3_600_000).toISOString().replace('Z', '123');
    const fromPython = await http('/feedback/tokens', {
      method: 'POST',
      json: { run_id: run.id, feedback_key: 'a', expires_at: naive },
    });
    expect(((await fromPython.json()) as { expires_at: string }).expires_at).toBe(`${naive}Z`);
    // Creating a token needs a key; a token's URL opens nothing else.
    expect(
      (
        await http('/feedback/tokens', {
          method: 'POST',
          key: null,
          json: { run_id: run.id, feedback_key: 'a' },
        })
      ).status,
    ).toBe(401);
    expect((await fetch(`${token.url}/x`)).status).toBe(401);
    expect((await fetch(token.url, { method: 'DELETE' })).status).toBe(401);
  });

  it('shows a workspace nothing of the feedback of another', async () => {
    const ls = client();
    const run = await tracedRun(ls, `fb-iso-${randomUUID()}`);
    const feedbackId = randomUUID();
    await ls.createFeedback(run.id, 'private', { score: 1, feedbackId });
    const other = await api.newWorkspace('feedback-other');
    const theirs = client(other.key);
    expect(await collect(theirs.listFeedback({ runIds: [run.id] }))).toEqual([]);
    await expect(theirs.readFeedback(feedbackId)).rejects.toThrow(/404|not found/i);
    // The same id in their workspace is their own feedback; ours is untouched.
    await theirs.createFeedback(run.id, 'theirs', { score: 0, feedbackId });
    expect(await ls.readFeedback(feedbackId)).toMatchObject({ key: 'private', score: 1 });
    expect(await theirs.readFeedback(feedbackId)).toMatchObject({ key: 'theirs', score: 0 });
    // Their token records feedback in their workspace only.
    const token = await theirs.createPresignedFeedbackToken(run.id, 'via-token');
    expect((await fetch(`${token.url}?score=1`)).status).toBe(200);
    expect(
      await collect(ls.listFeedback({ runIds: [run.id], feedbackKeys: ['via-token'] })),
    ).toEqual([]);
    expect((await ls.readRun(run.id)).feedback_stats).toEqual({
      private: { n: 1, avg: 1, values: {} },
    });
    // Nor can they change or delete ours: the same id is theirs.
    await theirs.updateFeedback(feedbackId, { score: 0.25 });
    await theirs.deleteFeedback(feedbackId);
    expect(await ls.readFeedback(feedbackId)).toMatchObject({ key: 'private', score: 1 });
    await expect(theirs.deleteFeedback(feedbackId)).rejects.toThrow(/404|not found/i);
  });

  it('updates and deletes a feedback with updateFeedback and deleteFeedback', async () => {
    const ls = client();
    const run = await tracedRun(ls, `fb-edit-${randomUUID()}`);
    const feedbackId = randomUUID();
    await ls.createFeedback(run.id, 'quality', { score: 0.2, comment: 'first', feedbackId });
    await ls.updateFeedback(feedbackId, { score: true, correction: { better: 'x\u0000y' } });
    expect(await ls.readFeedback(feedbackId)).toMatchObject({
      key: 'quality',
      score: 1,
      comment: 'first',
      correction: { better: 'x\u0000y' },
    });
    await ls.updateFeedback(feedbackId, { comment: 'second' });
    expect(await ls.readFeedback(feedbackId)).toMatchObject({ score: 1, comment: 'second' });
    const bad = await http(`/feedback/${feedbackId}`, { method: 'PATCH', json: { score: 'top' } });
    expect(bad.status).toBe(422);
    await ls.deleteFeedback(feedbackId);
    await expect(ls.readFeedback(feedbackId)).rejects.toThrow(/404|not found/i);
    expect((await ls.readRun(run.id)).feedback_stats).toBeNull();
    const missing = await http(`/feedback/${randomUUID()}`, {
      method: 'PATCH',
      json: { score: 1 },
    });
    expect(missing.status).toBe(404);
  });

  it('puts feedback_stats in the bulk export rows', async () => {
    const ls = client();
    const project = `fb-export-${randomUUID()}`;
    const run = await tracedRun(ls, project);
    const bare = await tracedRun(ls, project);
    await ls.createFeedback(run.id, 'correctness', { score: 1, value: 'right' });
    await ls.createFeedback(run.id, 'correctness', { score: 0 });
    const session = await ls.readProject({ projectName: project });
    const store = new TraceStore(api.pool);
    const query = {
      sessionId: session.id,
      start: new Date(Date.now() - 3_600_000).toISOString(),
      end: new Date(Date.now() + 3_600_000).toISOString(),
      limit: 10,
    };
    const expected = { correctness: { n: 2, avg: 0.5, values: { right: 1 } } };
    const rows = await store.exportPage(api.workspaceId, query);
    const statsOf = (id: string) => rows.find((r) => r.id === id)!.feedback_stats;
    expect(JSON.parse(statsOf(run.id)!)).toEqual(expected);
    expect(statsOf(bare.id)).toBeNull();
    // The COPY path writes the same column.
    const end = await store.exportChunkEnd(api.workspaceId, query);
    const path = join(tmp, 'rows.csv');
    await store.copyExportRows(
      api.workspaceId,
      { ...query, until: end!.last },
      ['id', 'feedback_stats'],
      path,
    );
    const lines = readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const byId = new Map(lines.map((l) => l.split('\t') as [string, string]));
    expect(JSON.parse(byId.get(run.id)!)).toEqual(expected);
    expect(byId.get(bare.id)).toBe('');
  });

  it("sweeps a run's feedback with the run at retention", async () => {
    const team = await api.newWorkspace('feedback-retention');
    await http('/trace-retention', { method: 'PUT', json: { ttl_days: 7 }, key: team.key });
    const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
    // `ancient` goes with its whole day partition (past every workspace's retention), `old` by
    // its workspace's shorter retention.
    const [ancient, old, recent, never] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    for (const [id, start] of [
      [ancient, daysAgo(40)],
      [old, daysAgo(10)],
      [recent, daysAgo(2)],
    ] as const)
      await http('/runs', {
        method: 'POST',
        key: team.key,
        json: { id, name: 'r', run_type: 'chain', start_time: start, inputs: {} },
      });
    const theirs = client(team.key);
    for (const id of [ancient, old, recent])
      await theirs.createFeedback(id, 'k', { score: 1, sessionId: randomUUID() });
    // Feedback on a run that never arrived goes once stored longer ago than the retention.
    const orphan = await http('/feedback', {
      method: 'POST',
      key: team.key,
      json: { run_id: never, key: 'k' },
    });
    expect(orphan.status).toBe(200);
    await api.pool.query(
      "UPDATE trace_feedback SET modified_at = now() - interval '8 days' WHERE run_id = $1",
      [never],
    );
    // A client's own created_at does not make feedback stale.
    await http('/feedback', {
      method: 'POST',
      key: team.key,
      json: { run_id: recent, key: 'old-stamp', created_at: daysAgo(30) },
    });
    const sweeper = await createTraceService(api.pool, createLogger({ level: 'silent' }));
    await sweeper.sweepExpired();
    const left = await collect(theirs.listFeedback({ runIds: [ancient, old, recent, never] }));
    expect(left.map((f) => f.run_id)).toEqual([recent, recent]);
  });

  it("takes the feedback of PyPI's langsmith: by run, batched with the traces, and by token", async () => {
    const result = await runTracesPython('feedback_langsmith.py', {
      LANGSMITH_ENDPOINT: api.endpoint,
      LANGSMITH_API_KEY: TRACES_BOOTSTRAP_KEY,
      LANGSMITH_TRACING: 'true',
      LANGSMITH_PROJECT: `py-feedback-${randomUUID()}`,
    });
    expect(result.code, result.stderr).toBe(0);
    const runId = result.stdout.trim().split('\n').at(-1)!;
    expect((await client().readRun(runId)).feedback_stats).toMatchObject({
      direct: { n: 1, avg: 1 },
      batched: { n: 1, avg: 0.5 },
      thumbs: { n: 1, avg: 1 },
    });
  }, 600_000);

  it("lets a page on any origin use a token's URL (preflight included), and nothing else", async () => {
    const ls = client();
    const run = await tracedRun(ls, `fb-cors-${randomUUID()}`);
    const token = await ls.createPresignedFeedbackToken(run.id, 'thumbs');
    const page = { origin: 'https://chat.example.com' };
    const preflight = (url: string) =>
      fetch(url, {
        method: 'OPTIONS',
        headers: {
          ...page,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
    const allowed = await preflight(token.url);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('*');
    expect(allowed.headers.get('access-control-allow-methods')).toContain('POST');
    expect(allowed.headers.get('access-control-allow-headers')).toContain('content-type');
    const posted = await fetch(token.url, {
      method: 'POST',
      headers: { ...page, 'content-type': 'application/json' },
      body: JSON.stringify({ score: 1 }),
    });
    expect(posted.status).toBe(200);
    expect(posted.headers.get('access-control-allow-origin')).toBe('*');
    // Keyed routes give a page on another origin nothing to read.
    const other = await preflight(`${api.endpoint}/runs/query`);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const listed = await fetch(`${api.endpoint}/feedback?run=${run.id}`, {
      headers: { ...page, 'x-api-key': TRACES_BOOTSTRAP_KEY, 'x-tenant-id': api.workspaceId },
    });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('access-control-allow-origin')).toBeNull();
  });
});
