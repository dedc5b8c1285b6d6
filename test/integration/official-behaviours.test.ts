// Runtime behaviours where Graphdock once differed from the official servers, through the official
// JS SDK on a real server and PostgreSQL: cancelling a scheduled run, state updates of a graph
// built by a factory, the checkpoint of a subgraph's pending task, runs naming an assistant that
// cannot exist, and the order of `messages/complete` and `values`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT } from '../support/server.js';

const rt = useRuntime({
  config: join(REPO_ROOT, 'test', 'fixtures', 'behaviours', 'langgraph.json'),
});

type Msg = { type: string; content: string; id: string };
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const contents = (values: unknown) =>
  ((values as { messages?: Msg[] }).messages ?? []).map((m) => m.content);

describe('cancelling a run that has not started', () => {
  it('leaves its thread idle at once, and its state can be updated right away', async () => {
    const thread = await rt.client.threads.create();
    const run = await rt.client.runs.create(thread.thread_id, 'echo', {
      input: hi('later'),
      afterSeconds: 600,
    });
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('busy');
    await rt.client.runs.cancel(thread.thread_id, run.run_id);
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('idle');
    expect((await rt.client.runs.get(thread.thread_id, run.run_id)).status).toBe('interrupted');
    await rt.client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: 'user', content: 'edited' }] },
      asNode: 'echo',
    });
    expect(contents((await rt.client.threads.getState(thread.thread_id)).values)).toEqual([
      'edited',
    ]);
  });

  it('with rollback deletes the run and leaves the thread idle; waiting for it returns', async () => {
    const thread = await rt.client.threads.create();
    const run = await rt.client.runs.create(thread.thread_id, 'echo', {
      input: hi('later'),
      afterSeconds: 600,
    });
    await rt.client.runs.cancel(thread.thread_id, run.run_id, true, 'rollback');
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('idle');
    await expect(rt.client.runs.get(thread.thread_id, run.run_id)).rejects.toMatchObject({
      status: 404,
    });
  });

  it('keeps the thread busy while another run still waits on it', async () => {
    const thread = await rt.client.threads.create();
    const first = await rt.client.runs.create(thread.thread_id, 'echo', {
      input: hi('one'),
      afterSeconds: 600,
    });
    const second = await rt.client.runs.create(thread.thread_id, 'echo', {
      input: hi('two'),
      afterSeconds: 600,
      multitaskStrategy: 'enqueue',
    });
    await rt.client.runs.cancel(thread.thread_id, first.run_id);
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('busy');
    const bulk = await rt.http('/runs/cancel', {
      method: 'POST',
      json: { thread_id: thread.thread_id, run_ids: [second.run_id] },
    });
    expect(bulk.status).toBe(204);
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('idle');
  });
});

describe('a graph built by a factory from the run config', () => {
  it("reads and updates a thread's state with the graph its runs were built with", async () => {
    const thread = await rt.client.threads.create();
    const config = { configurable: { variant: 'fancy' } };
    const result = await rt.client.runs.wait(thread.thread_id, 'factory', {
      input: hi('question'),
      config,
    });
    expect(contents(result)).toEqual(['question', 'answered by answer_fancy']);
    // The node exists only in the graph built from the run's config.
    const updated = await rt.client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: 'ai', content: 'corrected' }] },
      asNode: 'answer_fancy',
    });
    const state = await rt.client.threads.getState(thread.thread_id);
    expect(state.checkpoint.checkpoint_id).toBe(
      (updated as { checkpoint: { checkpoint_id: string } }).checkpoint.checkpoint_id,
    );
    expect(contents(state.values)).toEqual(['question', 'answered by answer_fancy', 'corrected']);
    expect(state.next).toEqual([]);
    expect(state.metadata).toMatchObject({ source: 'update', writes: { answer_fancy: {} } });
    const history = await rt.client.threads.getHistory(thread.thread_id, { limit: 2 });
    expect(history.map((h) => h.metadata?.source)).toEqual(['update', 'loop']);
    // A second run continues from the edited state with the same graph.
    const again = await rt.client.runs.wait(thread.thread_id, 'factory', {
      input: hi('more'),
      config,
    });
    expect(contents(again).at(-1)).toBe('answered by answer_fancy');
  });
});

describe("a subgraph's pending task", () => {
  type Task = {
    name: string;
    interrupts: { value: unknown }[];
    checkpoint: Record<string, unknown> | null;
    state: { next: string[]; checkpoint: { checkpoint_id: string } } | null;
  };
  const approvalTask = (tasks: unknown[]) => tasks.find((t) => (t as Task).name === 'approval');

  it('names the checkpoint a client reads and resumes the subgraph with', async () => {
    const thread = await rt.client.threads.create();
    await rt.client.runs.wait(thread.thread_id, 'approval', { input: { request: 'leave' } });
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('interrupted');

    const state = await rt.client.threads.getState(thread.thread_id);
    const task = approvalTask(state.tasks) as Task;
    const ns = String(task.checkpoint?.checkpoint_ns);
    expect(ns).toMatch(/^approval:/);
    expect(task.checkpoint).toEqual({
      thread_id: thread.thread_id,
      checkpoint_ns: ns,
      checkpoint_id: null,
      checkpoint_map: null,
    });
    expect(task.state).toBeNull();
    expect(task.interrupts.map((i) => i.value)).toEqual([{ question: 'Approve LEAVE?' }]);
    // History carries the same task checkpoint.
    const [latest] = await rt.client.threads.getHistory(thread.thread_id, { limit: 1 });
    expect((approvalTask(latest!.tasks) as Task).checkpoint).toEqual(task.checkpoint);

    // Read the subgraph's own state with it, as a human-in-the-loop client does.
    const inner = await rt.client.threads.getState(
      thread.thread_id,
      task.checkpoint as unknown as Parameters<typeof rt.client.threads.getState>[1],
    );
    expect(inner.next).toEqual(['ask']);
    expect(inner.checkpoint.checkpoint_ns).toBe(ns);
    expect(inner.values).toMatchObject({ request: 'LEAVE', answer: null });

    // With subgraphs=true the task carries the subgraph's state, and its checkpoint has an id.
    const nested = await rt.client.threads.getState(thread.thread_id, undefined, {
      subgraphs: true,
    });
    const nestedTask = approvalTask(nested.tasks) as Task;
    expect(nestedTask.state?.next).toEqual(['ask']);
    expect(nestedTask.checkpoint).toMatchObject({
      thread_id: thread.thread_id,
      checkpoint_ns: ns,
      checkpoint_id: nestedTask.state?.checkpoint.checkpoint_id,
    });

    const resumed = await rt.client.runs.wait(thread.thread_id, 'approval', {
      command: { resume: 'yes' },
    });
    expect(resumed).toMatchObject({ request: 'LEAVE', answer: 'yes' });
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('idle');
  });
});

describe('a run naming an assistant that is neither a UUID nor a graph', () => {
  const detail =
    'No assistant found for "no-such-graph". Make sure the assistant ID is for a valid assistant or a valid graph ID.';

  it('is 404 on every route that creates runs, and creates nothing', async () => {
    const thread = await rt.client.threads.create();
    const body = { assistant_id: 'no-such-graph', input: hi('x') };
    const tid = thread.thread_id;
    const attempts: [string, unknown][] = [
      [`/threads/${tid}/runs`, body],
      [`/threads/${tid}/runs/wait`, body],
      [`/threads/${tid}/runs/stream`, body],
      ['/runs', body],
      ['/runs/wait', body],
      ['/runs/stream', body],
      ['/runs/batch', [body]],
      ['/runs/crons', { ...body, schedule: '*/5 * * * *' }],
      [`/threads/${tid}/runs/crons`, { ...body, schedule: '*/5 * * * *' }],
    ];
    for (const [path, json] of attempts) {
      const res = await rt.http(path, { method: 'POST', json });
      expect({ path, status: res.status, body: await res.json() }).toEqual({
        path,
        status: 404,
        body: { detail },
      });
    }
    await expect(
      rt.client.runs.wait(tid, 'no-such-graph', { input: hi('x') }),
    ).rejects.toMatchObject({ status: 404 });
    expect(await rt.client.runs.list(tid)).toEqual([]);
    expect((await rt.client.threads.get(tid)).status).toBe('idle');
  });
});

describe('legacy messages mode with values', () => {
  it("sends each step's messages/complete after that step's values event", async () => {
    const order: string[] = [];
    for await (const part of rt.client.runs.stream(null, 'agent', {
      input: hi('hello there'),
      streamMode: ['messages', 'values'],
    })) {
      if (part.event === 'values') order.push(`values:${contents(part.data).length}`);
      if (part.event === 'messages/complete')
        order.push(`complete:${(part.data as Msg[]).map((m) => m.type).join(',')}`);
    }
    expect(order).toEqual(['values:1', 'complete:human', 'values:2', 'complete:ai']);
  });
});

describe('state values that say what they are through toJSON()', () => {
  it('read the same in the run output, the stream, the thread, its state and its history', async () => {
    const order = {
      link: 'https://shop.example/orders/7?x=1',
      receipt: { type: 'Buffer', data: [111, 107] },
      placed: '2026-11-29T12:00:00.000Z',
      total: '12.50',
    };
    const thread = await rt.client.threads.create();
    expect(await rt.client.runs.wait(thread.thread_id, 'rich', { input: {} })).toEqual({ order });
    const streamed: Record<string, unknown[]> = {};
    for await (const part of rt.client.runs.stream(thread.thread_id, 'rich', {
      input: {},
      streamMode: ['values', 'updates', 'custom'],
    }))
      (streamed[part.event] ??= []).push(part.data);
    expect(streamed.custom).toEqual([order]);
    expect(streamed.updates).toEqual([{ price: { order } }]);
    expect(streamed.values?.at(-1)).toEqual({ order });
    expect((await rt.client.threads.get(thread.thread_id)).values).toEqual({ order });
    expect((await rt.client.threads.getState(thread.thread_id)).values).toEqual({ order });
    const [latest] = await rt.client.threads.getHistory(thread.thread_id, { limit: 1 });
    expect(latest?.values).toEqual({ order });
  });
});

describe('a command steering a run, as the official servers take it', () => {
  const logOf = async (threadId: string) =>
    ((await rt.client.threads.getState(threadId)).values as { log: string[] }).log;

  it('resumes and goes to a node or a Send ({node, input}), alone or in a list', async () => {
    const single = await rt.client.threads.create();
    await rt.client.runs.wait(single.thread_id, 'router', { input: {} });
    await rt.client.runs.wait(single.thread_id, 'router', {
      command: { resume: 'yes', goto: { node: 'visit', input: { label: 'sent' } } },
    });
    expect(await logOf(single.thread_id)).toEqual(['begin', 'ask:yes', 'visit:sent']);

    const listed = await rt.client.threads.create();
    await rt.client.runs.wait(listed.thread_id, 'router', { input: {} });
    await rt.client.runs.wait(listed.thread_id, 'router', {
      // A list mixing names and Sends, which the official servers take (the SDK's type does not).
      command: {
        resume: 'ok',
        goto: ['visit', { node: 'visit', input: { label: 'b' } }] as unknown as string[],
      },
    });
    expect((await logOf(listed.thread_id)).sort()).toEqual(
      ['ask:ok', 'begin', 'visit:b', 'visit:state'].sort(),
    );
  });

  it('refuses a goto or update of the wrong shape with 422, before any run exists', async () => {
    const thread = await rt.client.threads.create();
    await rt.client.runs.wait(thread.thread_id, 'router', { input: {} });
    const before = await rt.client.runs.list(thread.thread_id);
    for (const command of [
      { goto: 5 },
      { goto: [{ input: {} }] },
      { goto: ['visit', null] },
      { update: 5 },
      { update: [['log']] },
    ]) {
      const res = await rt.http(`/threads/${thread.thread_id}/runs/wait`, {
        method: 'POST',
        json: { assistant_id: 'router', command },
      });
      expect(res.status, JSON.stringify(command)).toBe(422);
      const body = (await res.json()) as { detail: { loc: (string | number)[] }[] };
      expect(body.detail[0]!.loc.slice(0, 3)).toEqual(['body', 'command', Object.keys(command)[0]]);
    }
    expect(await rt.client.runs.list(thread.thread_id)).toEqual(before);
  });

  it("applies a superstep's command when a thread is created with supersteps", async () => {
    const thread = await rt.client.threads.create({
      graphId: 'router',
      supersteps: [
        {
          updates: [
            {
              values: null,
              command: { update: { log: ['seeded'], label: 'copied' }, goto: 'visit' },
              asNode: 'ask',
            },
          ],
        },
      ],
    });
    const state = await rt.client.threads.getState(thread.thread_id);
    expect(state.values).toMatchObject({ log: ['seeded'], label: 'copied' });
    expect(state.next).toEqual(['visit']);
    await rt.client.runs.wait(thread.thread_id, 'router', { input: null });
    expect(await logOf(thread.thread_id)).toEqual(['seeded', 'visit:copied']);
  });
});

describe('a config of the wrong shape', () => {
  const bad = [
    { tags: 'not-a-list' },
    { recursion_limit: 'abc' },
    { recursion_limit: 0 },
    { recursion_limit: 2.5 },
    { configurable: [1, 2] },
  ];

  it('is a 422 naming config on runs, crons and assistants, and creates nothing', async () => {
    const thread = await rt.client.threads.create();
    for (const config of bad) {
      const field = Object.keys(config)[0]!;
      for (const [path, body] of [
        [`/threads/${thread.thread_id}/runs`, { assistant_id: 'echo', input: hi('x'), config }],
        ['/runs/wait', { assistant_id: 'echo', input: hi('x'), config }],
        ['/runs/crons', { assistant_id: 'echo', schedule: '0 0 * * *', config }],
        ['/assistants', { graph_id: 'echo', config }],
      ] as const) {
        const res = await rt.http(path, { method: 'POST', json: body });
        expect(res.status, `${path} ${JSON.stringify(config)}`).toBe(422);
        const detail = ((await res.json()) as { detail: { loc: string[] }[] }).detail;
        expect(detail[0]!.loc.slice(0, 3)).toEqual(['body', 'config', field]);
      }
    }
    expect(await rt.client.runs.list(thread.thread_id)).toEqual([]);
    expect(await rt.client.crons.search({ limit: 100 })).toEqual([]);
  });

  it('is invalid_argument for a protocol run.start', async () => {
    const thread = await rt.client.threads.create();
    const res = await rt.http(`/threads/${thread.thread_id}/commands`, {
      method: 'POST',
      json: {
        id: 1,
        method: 'run.start',
        params: { assistant_id: 'echo', input: hi('x'), config: { recursion_limit: 0 } },
      },
    });
    expect(await res.json()).toMatchObject({ type: 'error', error: 'invalid_argument' });
    expect(await rt.client.runs.list(thread.thread_id)).toEqual([]);
  });
});

describe('joining a run with stream_mode', () => {
  it('keeps only the modes asked for, subgraph namespaces included, and refuses unknown ones', async () => {
    const thread = await rt.client.threads.create();
    const run = await rt.client.runs.create(thread.thread_id, 'nested', {
      input: hi('go'),
      streamMode: ['values', 'updates', 'custom'],
      streamSubgraphs: true,
    });
    await rt.client.runs.join(thread.thread_id, run.run_id);
    const joined = async (streamMode?: Parameters<typeof rt.client.runs.joinStream>[2]) => {
      const names: string[] = [];
      for await (const part of rt.client.runs.joinStream(thread.thread_id, run.run_id, streamMode))
        names.push(part.event);
      return names;
    };
    const all = await joined();
    expect(all).toContain('values');
    expect(all).toContain('custom');
    // The JS SDK sends a list as one JSON array parameter.
    const updates = await joined({ streamMode: ['updates'] });
    expect(updates.filter((n) => n.startsWith('updates|inner:')).length).toBeGreaterThan(0);
    expect(updates.every((n) => n === 'metadata' || n.split('|')[0] === 'updates')).toBe(true);
    expect(updates.filter((n) => n !== 'metadata')).toEqual(
      all.filter((n) => n.split('|')[0] === 'updates'),
    );
    expect(await joined({ streamMode: 'custom' })).not.toContain('values');
    const path = `/threads/${thread.thread_id}/runs/${run.run_id}/stream`;
    expect((await rt.http(`${path}?stream_mode=nope`)).status).toBe(422);
    // What the Python SDK sends for a join without modes.
    const unfiltered = await rt.http(`${path}?stream_mode=&cancel_on_disconnect=false`);
    expect((await unfiltered.text()).match(/^event: values$/gm)?.length).toBe(
      all.filter((n) => n === 'values').length,
    );
    expect(
      (await rt.http(`${path}?stream_mode=${encodeURIComponent('["values",1]')}`)).status,
    ).toBe(422);
  });
});

describe('listing runs with select', () => {
  it('returns only the fields named, as one JSON array or repeated parameters', async () => {
    const thread = await rt.client.threads.create();
    const run = await rt.client.runs.create(thread.thread_id, 'echo', { input: hi('x') });
    await rt.client.runs.join(thread.thread_id, run.run_id);
    expect(await rt.client.runs.list(thread.thread_id, { select: ['run_id', 'status'] })).toEqual([
      { run_id: run.run_id, status: 'success' },
    ]);
    const repeated = await rt.http(
      `/threads/${thread.thread_id}/runs?select=assistant_id&select=multitask_strategy`,
    );
    expect(await repeated.json()).toEqual([
      { assistant_id: run.assistant_id, multitask_strategy: run.multitask_strategy },
    ]);
    const bad = await rt.http(`/threads/${thread.thread_id}/runs?select=values`);
    expect(bad.status).toBe(422);
    const [full] = await rt.client.runs.list(thread.thread_id);
    expect(Object.keys(full!)).toContain('kwargs');
  });
});

describe("a run's config metadata", () => {
  it('names the attempt and the server as the official servers do, in the graph and its checkpoints', async () => {
    const thread = await rt.client.threads.create();
    const seen: Record<string, unknown>[] = [];
    for await (const part of rt.client.runs.stream(thread.thread_id, 'agent', {
      input: hi('add 2 and 3'),
      streamMode: 'messages-tuple',
    }))
      if (part.event === 'messages')
        seen.push((part.data as [unknown, Record<string, unknown>])[1]);
    const version = (
      JSON.parse(
        readFileSync(join(REPO_ROOT, 'node_modules/@langchain/langgraph/package.json'), 'utf8'),
      ) as { version: string }
    ).version;
    const expected = {
      run_attempt: 1,
      langgraph_version: version,
      langgraph_plan: 'developer',
      langgraph_host: 'self-hosted',
    };
    expect(seen.length).toBeGreaterThan(0);
    for (const metadata of seen) expect(metadata).toMatchObject(expected);
    const state = await rt.client.threads.getState(thread.thread_id);
    expect(state.metadata).toMatchObject(expected);
  });

  it("merges the assistant's, the thread's, config.metadata and the run's own, as the official servers", async () => {
    const assistant = await rt.client.assistants.create({
      graphId: 'agent',
      metadata: { team: 'blue', level: 'assistant' },
    });
    const thread = await rt.client.threads.create({
      metadata: { user_id: 'u1', level: 'thread' },
    });
    const seen: Record<string, unknown>[] = [];
    for await (const part of rt.client.runs.stream(thread.thread_id, assistant.assistant_id, {
      input: hi('add 2 and 3'),
      streamMode: 'messages-tuple',
      // The JS SDK's Config type has no `metadata`; the Python SDK's does.
      config: { metadata: { from_config: 1, level: 'config' } } as never,
      metadata: { own: 2, assistant_id: 'spoofed' },
    }))
      if (part.event === 'messages')
        seen.push((part.data as [unknown, Record<string, unknown>])[1]);
    const merged = {
      team: 'blue',
      user_id: 'u1',
      from_config: 1,
      own: 2,
      level: 'config',
      graph_id: 'agent',
      assistant_id: assistant.assistant_id,
    };
    const [run] = await rt.client.runs.list(thread.thread_id);
    expect(run!.metadata).toEqual(merged);
    expect(seen.length).toBeGreaterThan(0);
    for (const metadata of seen) expect(metadata).toMatchObject(merged);
    expect((await rt.client.threads.getState(thread.thread_id)).metadata).toMatchObject(merged);
    // The thread itself keeps its own metadata.
    expect((await rt.client.threads.get(thread.thread_id)).metadata).toEqual({
      user_id: 'u1',
      level: 'thread',
      graph_id: 'agent',
      assistant_id: assistant.assistant_id,
    });
  });
});
