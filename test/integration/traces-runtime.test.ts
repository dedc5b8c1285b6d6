// The runtime traces every graph run with the official langsmith tracer: `graphdock dev` into
// its own store, a deployed runtime into the control plane's; thread_id, run_id, graph_id and
// assistant_id on every run of the trace; a trace endpoint that is down costs runs nothing.
import { join } from 'node:path';
import { Client as AgentClient } from '@langchain/langgraph-sdk';
import { Client, RunTree, type Run } from 'langsmith';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startServer, type RunningServer } from '../support/server.js';
import { useTraceApi } from '../support/traces.js';
import { collect } from '../support/iterables.js';
import { CLIPPED_JSON } from '../../common/json/index.js';

const DEEP_OUTPUT_CONFIG = join(import.meta.dirname, '../fixtures/deep-output/langgraph.json');

const hi = (text: string) => ({ messages: [{ role: 'user', content: text }] });

/**
 * The runs of trace `traceId`, once its root has ended (traces are sent in the background). The
 * runtime's sender gives a batch's request up to 30 s on a loaded machine; the deadline is past it.
 */
async function traceOf(ls: Client, traceId: string, project: string): Promise<Run[]> {
  const deadline = Date.now() + 45_000;
  let lastError: unknown;
  for (;;) {
    const runs = await collect(ls.listRuns({ projectName: project, traceId })).catch(
      (err: unknown) => ((lastError = err), [] as Run[]),
    );
    const root = runs.find((r) => r.id === traceId);
    if (root?.end_time && runs.every((r) => r.end_time)) return runs;
    if (Date.now() > deadline)
      throw new Error(
        `trace ${traceId} incomplete: ${runs.length} runs (last read error: ${String(lastError)})`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

function expectThreadOnEveryRun(
  runs: Run[],
  ids: { thread_id: string; run_id: string; graph_id: string },
) {
  for (const run of runs) {
    const metadata = (run.extra as { metadata: Record<string, unknown> }).metadata;
    expect(metadata, `${run.run_type} ${run.name}`).toMatchObject(ids);
    expect(typeof metadata.assistant_id, run.name).toBe('string');
  }
}

async function withDatabase(): Promise<TestDatabase> {
  return createTestDatabase(inject('pgAdminUrl'));
}

describe('graphdock dev traces into its own store', () => {
  let db: TestDatabase;
  let dev: RunningServer;
  beforeAll(async () => {
    db = await withDatabase();
    dev = await startServer({ command: 'dev', databaseUrl: db.url });
  }, 120_000);
  afterAll(async () => {
    await dev?.stop();
    await db?.drop();
  });

  it('traces the tool-calling agent: thread_id on the run and every child, project default', async () => {
    const agent = new AgentClient({ apiUrl: dev.url, apiKey: null });
    const thread = await agent.threads.create();
    const run = await agent.runs.create(thread.thread_id, 'agent', { input: hi('add 2 and 3') });
    await agent.runs.join(thread.thread_id, run.run_id);

    const ls = new Client({ apiUrl: `${dev.url}/api/v1` });
    const runs = await traceOf(ls, run.run_id, 'default');
    // The graph, its nodes, the model (twice: before and after the tool) and the tool.
    expect(runs.filter((r) => r.run_type === 'llm')).toHaveLength(2);
    expect(runs.filter((r) => r.run_type === 'tool').map((r) => r.name)).toEqual(['add']);
    expect(runs.length).toBeGreaterThan(5);
    expectThreadOnEveryRun(runs, {
      thread_id: thread.thread_id,
      run_id: run.run_id,
      graph_id: 'agent',
    });
    const root = runs.find((r) => r.id === run.run_id)!;
    expect(root.parent_run_id).toBeNull();
    expect(runs.every((r) => r.trace_id === run.run_id)).toBe(true);

    // The thread view has this run's trace in execution order.
    const view = (await (await fetch(`${dev.url}/api/v1/threads/${thread.thread_id}`)).json()) as {
      runs: { id: string; dotted_order: string }[];
    };
    expect(view.runs).toHaveLength(runs.length);
    const orders = view.runs.map((r) => r.dotted_order);
    expect(orders).toEqual([...orders].sort());
  });

  it("nests a run under the caller's trace when it sends langsmith-trace and baggage", async () => {
    const ls = new Client({ apiUrl: `${dev.url}/api/v1` });
    // The caller's own run, traced into the same store, as RemoteGraph's distributed tracing does.
    const caller = new RunTree({
      name: 'caller',
      run_type: 'chain',
      client: ls,
      project_name: 'distributed',
      metadata: { tenant: 'acme' },
      tags: ['remote-call'],
    });
    await caller.postRun();
    const agent = new AgentClient({
      apiUrl: dev.url,
      apiKey: null,
      defaultHeaders: caller.toHeaders(),
    });
    const thread = await agent.threads.create();
    const run = await agent.runs.create(thread.thread_id, 'echo', { input: hi('nested') });
    await agent.runs.join(thread.thread_id, run.run_id);
    await caller.end({ done: true });
    await caller.patchRun();
    await ls.awaitPendingTraceBatches();

    const runs = await traceOf(ls, caller.id, 'distributed');
    const root = runs.find((r) => r.id === run.run_id)!;
    expect(root.parent_run_id).toBe(caller.id);
    expect(runs.every((r) => r.trace_id === caller.id)).toBe(true);
    expect(
      runs
        .filter((r) => r.id !== caller.id)
        .every((r) => r.dotted_order!.startsWith(`${caller.dotted_order}.`)),
    ).toBe(true);
    const metadata = (root.extra as { metadata: Record<string, unknown> }).metadata;
    expect(metadata).toMatchObject({ tenant: 'acme', thread_id: thread.thread_id });
    expect(root.tags).toContain('remote-call');
    // The run keeps the caller's trace in its configurable, as the official servers do.
    const stored = (await agent.runs.get(thread.thread_id, run.run_id)) as unknown as {
      kwargs: { config: { configurable: Record<string, unknown> } };
    };
    expect(stored.kwargs.config.configurable).toMatchObject({
      'langsmith-trace': caller.dotted_order,
      'langsmith-project': 'distributed',
    });

    // A trace header that is not a dotted order is ignored: the run is a trace of its own.
    const stray = new AgentClient({
      apiUrl: dev.url,
      apiKey: null,
      defaultHeaders: { 'langsmith-trace': 'not-a-dotted-order', baggage: 'langsmith-project=x' },
    });
    const alone = await stray.runs.create(thread.thread_id, 'echo', { input: hi('alone') });
    await stray.runs.join(thread.thread_id, alone.run_id);
    const own = await traceOf(ls, alone.run_id, 'default');
    expect(own.find((r) => r.id === alone.run_id)!.parent_run_id).toBeNull();
  });

  it("sends a run's trace to the project its langsmith_tracer names, with its dataset example", async () => {
    const agent = new AgentClient({ apiUrl: dev.url, apiKey: null });
    const thread = await agent.threads.create();
    const example = crypto.randomUUID();
    const res = await fetch(`${dev.url}/threads/${thread.thread_id}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        assistant_id: 'echo',
        input: hi('graded'),
        langsmith_tracer: { project_name: 'evaluations', example_id: example },
      }),
    });
    const run = (await res.json()) as { run_id: string };
    await agent.runs.join(thread.thread_id, run.run_id);
    const ls = new Client({ apiUrl: `${dev.url}/api/v1` });
    const runs = await traceOf(ls, run.run_id, 'evaluations');
    const root = runs.find((r) => r.id === run.run_id)!;
    expect(root.reference_example_id).toBe(example);
    // Not in the runtime's own project (which may not exist yet at all).
    const inDefault = await collect(
      ls.listRuns({ projectName: 'default', traceId: run.run_id }),
    ).catch(() => [] as Run[]);
    expect(inDefault).toEqual([]);
    // A project name that is empty is refused, and nothing runs.
    const bad = await fetch(`${dev.url}/threads/${thread.thread_id}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'echo', langsmith_tracer: { project_name: '' } }),
    });
    expect(bad.status).toBe(422);
  });

  it('traces the subgraph example, its inner graph included, and threadless runs under their temporary thread', async () => {
    const agent = new AgentClient({ apiUrl: dev.url, apiKey: null });
    const thread = await agent.threads.create();
    const run = await agent.runs.create(thread.thread_id, 'nested', { input: hi('deep') });
    await agent.runs.join(thread.thread_id, run.run_id);
    const ls = new Client({ apiUrl: `${dev.url}/api/v1` });
    const runs = await traceOf(ls, run.run_id, 'default');
    // The inner graph's own node runs below the outer graph's `inner` node.
    const think = runs.find((r) => r.name === 'think');
    expect(think).toBeDefined();
    expect(think!.parent_run_ids!.length).toBeGreaterThanOrEqual(2);
    expectThreadOnEveryRun(runs, {
      thread_id: thread.thread_id,
      run_id: run.run_id,
      graph_id: 'nested',
    });

    // A threadless run: its temporary thread's id is its thread_id.
    const stateless = await agent.runs.create(null, 'echo', { input: hi('x') });
    const traced = await traceOf(ls, stateless.run_id, 'default');
    expectThreadOnEveryRun(traced, {
      thread_id: stateless.thread_id,
      run_id: stateless.run_id,
      graph_id: 'echo',
    });
  });
});

describe('a deployed runtime traces into the control plane', () => {
  const api = useTraceApi();
  let db: TestDatabase;
  // Apart, so that neither replica claims the other's runs and traces them elsewhere.
  let downDb: TestDatabase;
  let runtime: RunningServer;
  let down: RunningServer;
  let key: string;
  beforeAll(async () => {
    db = await withDatabase();
    const team = await api.newWorkspace('runtime-team');
    key = team.key;
    runtime = await startServer({
      databaseUrl: db.url,
      env: {
        GRAPHDOCK_TRACES_ENDPOINT: api.endpoint,
        GRAPHDOCK_TRACES_API_KEY: key,
        GRAPHDOCK_DEPLOYMENT_NAME: 'shop-agent',
      },
    });
    // The same runtime with a trace endpoint nobody listens at.
    downDb = await withDatabase();
    down = await startServer({
      databaseUrl: downDb.url,
      env: {
        GRAPHDOCK_TRACES_ENDPOINT: 'http://127.0.0.1:1/api/v1',
        GRAPHDOCK_TRACES_API_KEY: 'x',
      },
    });
  }, 180_000);
  afterAll(async () => {
    await runtime?.stop();
    await down?.stop();
    await db?.drop();
    await downDb?.drop();
  });

  it("stores the runs in the key's workspace, under the deployment's project", async () => {
    const agent = new AgentClient({ apiUrl: runtime.url, apiKey: null });
    const thread = await agent.threads.create();
    const run = await agent.runs.create(thread.thread_id, 'agent', { input: hi('add 1 and 2') });
    await agent.runs.join(thread.thread_id, run.run_id);
    const ls = new Client({ apiUrl: api.endpoint, apiKey: key });
    const runs = await traceOf(ls, run.run_id, 'shop-agent');
    expectThreadOnEveryRun(runs, {
      thread_id: thread.thread_id,
      run_id: run.run_id,
      graph_id: 'agent',
    });
    // Another workspace's key sees none of it.
    const other = new Client({ apiUrl: api.endpoint, apiKey: (await api.newWorkspace('x')).key });
    await expect(other.readRun(run.run_id)).rejects.toThrow(/not found/i);
  });

  it('runs succeed while the trace endpoint is down; failed sends are counted', async () => {
    const agent = new AgentClient({ apiUrl: down.url, apiKey: null });
    const started = Date.now();
    for (let i = 0; i < 5; i++) {
      const result = (await agent.runs.wait(null, 'agent', { input: hi('add 4 and 5') })) as {
        messages: { content: string }[];
      };
      expect(result.messages.at(-1)?.content).toBe('The answer is 9.');
    }
    // Five agent runs take well under the SDK's retry delays, which they never wait for.
    expect(Date.now() - started).toBeLessThan(20_000);
    const deadline = Date.now() + 30_000;
    let failures = 0;
    while (Date.now() < deadline && failures === 0) {
      const text = await (await fetch(`${down.url}/metrics`)).text();
      failures = Number(/^graphdock_trace_send_failures_total (\d+)/m.exec(text)?.[1] ?? 0);
      if (!failures) await new Promise((r) => setTimeout(r, 500));
    }
    expect(failures).toBeGreaterThan(0);
    expect(await (await fetch(`${down.url}/metrics`)).text()).toMatch(
      /^graphdock_trace_runs_dropped_total \d+/m,
    );
  });
});

describe('a graph whose output nests deeper than a request body may', () => {
  let db: TestDatabase;
  let dev: RunningServer;
  beforeAll(async () => {
    db = await withDatabase();
    dev = await startServer({ command: 'dev', databaseUrl: db.url, config: DEEP_OUTPUT_CONFIG });
  }, 120_000);
  afterAll(async () => {
    await dev?.stop();
    await db?.drop();
  });

  it("keeps every trace of a batch when one run's output nests too deep or holds NUL", async () => {
    const agent = new AgentClient({ apiUrl: dev.url, apiKey: null });
    const odd = 'a\u0000b\ud800';
    const inputs = [{ depth: 600 }, { depth: 3, text: odd }, { depth: 10 }, { depth: 10 }];
    // Started together, their traces share the runtime's batches.
    const runs = await Promise.all(
      inputs.map(async (input) => {
        const thread = await agent.threads.create();
        const run = await agent.runs.create(thread.thread_id, 'deep', { input });
        await agent.runs.join(thread.thread_id, run.run_id);
        expect((await agent.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
        return run.run_id;
      }),
    );
    const ls = new Client({ apiUrl: `${dev.url}/api/v1` });
    const roots = await Promise.all(
      runs.map(async (id) => (await traceOf(ls, id, 'default')).find((r) => r.id === id)!),
    );
    // Body 1, `post` 2, the run 3, `outputs` 4: the arrays of levels 5 to 512 are kept, the
    // next one is cut to the marker.
    let value = (roots[0]!.outputs as { result: unknown }).result;
    let arrays = 0;
    for (; Array.isArray(value); arrays++) value = (value as unknown[])[0];
    expect({ arrays, value }).toEqual({ arrays: 508, value: CLIPPED_JSON });
    expect(roots[1]!.outputs).toEqual({ depth: 3, text: odd, result: [[[odd]]] });
    expect(roots[2]!.outputs).toMatchObject({ depth: 10 });
    const metrics = await (await fetch(`${dev.url}/metrics`)).text();
    expect(metrics).toMatch(/^graphdock_trace_send_failures_total 0$/m);
  });

  it('stores and returns such state; far deeper fails the run, and the thread goes on', async () => {
    const agent = new AgentClient({ apiUrl: dev.url, apiKey: null });
    const thread = await agent.threads.create();
    const bottom = (value: unknown) => {
      let levels = 0;
      for (; Array.isArray(value); levels++) value = (value as unknown[])[0];
      return { levels, value };
    };
    const waited = (await agent.runs.wait(thread.thread_id, 'deep', {
      input: { depth: 600 },
    })) as { result: unknown };
    expect(bottom(waited.result)).toEqual({ levels: 600, value: 'bottom' });
    const state = await agent.threads.getState<{ result: unknown }>(thread.thread_id);
    expect(bottom(state.values.result)).toEqual({ levels: 600, value: 'bottom' });
    // Past what JSON.stringify can recurse through, LangGraph's serializer stores its placeholder
    // and the run fails; the server, the thread and its next run are unharmed.
    const deep = await agent.runs.create(thread.thread_id, 'deep', { input: { depth: 10_000 } });
    await agent.runs.join(thread.thread_id, deep.run_id);
    expect((await agent.runs.get(thread.thread_id, deep.run_id)).status).toBe('error');
    const next = (await agent.runs.wait(thread.thread_id, 'deep', {
      input: { depth: 2 },
    })) as { result: unknown };
    expect(next.result).toEqual([['bottom']]);
    expect((await agent.threads.get(thread.thread_id)).status).toBe('idle');
  });
});
