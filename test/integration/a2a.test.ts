// A2A through the official @a2a-js/sdk client against a real server and PostgreSQL: agent card,
// send, stream, get, cancel, multi-turn contexts, interrupts, and the JSON-RPC error cases.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type {
  Message,
  MessageSendParams,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatusUpdateEvent,
} from '@a2a-js/sdk';
import {
  ClientFactory,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  type Client,
} from '@a2a-js/sdk/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT } from '../support/server.js';

const rt = useRuntime({
  config: join(REPO_ROOT, 'test', 'fixtures', 'a2a', 'langgraph.json'),
  env: { GRAPHDOCK_SLOW_STEP_MS: '1500' },
});

function userMessage(text: string, ids: { contextId?: string; taskId?: string } = {}): Message {
  return {
    kind: 'message',
    role: 'user',
    messageId: randomUUID(),
    parts: [{ kind: 'text', text }],
    ...ids,
  };
}

const texts = (parts: { kind: string; text?: string }[] | undefined) =>
  (parts ?? []).flatMap((p) => (p.kind === 'text' && p.text !== undefined ? [p.text] : []));

async function clientFor(assistantId: string): Promise<Client> {
  return new ClientFactory().createFromUrl(
    rt.url,
    `/.well-known/agent-card.json?assistant_id=${assistantId}`,
  );
}

async function rpc(assistantId: string, body: unknown, raw?: string) {
  const res = await rt.http(`/a2a/${assistantId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: raw ?? JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function asTask(result: unknown): Task {
  expect(result).toMatchObject({ kind: 'task' });
  return result as Task;
}

let echo: Client;
beforeAll(async () => {
  echo = await clientFor('echo');
});

describe('agent card', () => {
  it('describes the assistant with its own name and description and an absolute endpoint URL', async () => {
    const assistant = await rt.client.assistants.create({
      graphId: 'echo',
      name: 'Echo Bot',
      description: 'Repeats what you say',
    });
    const res = await rt.http(
      `/.well-known/agent-card.json?assistant_id=${assistant.assistant_id}`,
    );
    expect(res.status).toBe(200);
    const card = (await res.json()) as Record<string, unknown>;
    expect(card).toMatchObject({
      name: 'Echo Bot',
      description: 'Repeats what you say',
      protocolVersion: '0.3.0',
      url: `${rt.url}/a2a/${assistant.assistant_id}`,
      preferredTransport: 'JSONRPC',
      capabilities: { streaming: true, pushNotifications: false },
      defaultInputModes: expect.arrayContaining(['text/plain']) as unknown,
      defaultOutputModes: expect.arrayContaining(['text/plain']) as unknown,
    });
    expect(card.skills).toEqual([
      expect.objectContaining({
        id: `${assistant.assistant_id}-main`,
        tags: expect.any(Array) as unknown,
      }),
    ]);
    // The same card next to the endpoint, where the official client looks when given the
    // assistant's A2A URL (with the trailing slash that keeps the id in a relative URL).
    const beside = await rt.http(`/a2a/${assistant.assistant_id}/.well-known/agent-card.json`);
    expect(await beside.json()).toEqual(card);
    const byEndpoint = await new ClientFactory().createFromUrl(
      `${rt.url}/a2a/${assistant.assistant_id}/`,
    );
    expect((await byEndpoint.getAgentCard()).name).toBe('Echo Bot');
    const said = asTask(await byEndpoint.sendMessage({ message: userMessage('by url') }));
    expect(texts(said.status.message?.parts)).toEqual(['echo: by url']);
    // A graph's system assistant is named after the graph and carries its description.
    const agent = await (await rt.http('/.well-known/agent-card.json?assistant_id=agent')).json();
    expect(agent).toMatchObject({
      name: 'agent',
      description: 'A tool-calling agent driven by a deterministic fake chat model',
    });
  });

  it('answers 400 without assistant_id when several graphs and no default, 404 for an unknown assistant', async () => {
    const missing = await rt.http('/.well-known/agent-card.json');
    expect(missing.status).toBe(400);
    // The answer says what to do: name an assistant, or configure the server's default.
    const { detail } = (await missing.json()) as { detail: string };
    expect(detail).toContain('echo, agent, interrupt');
    expect(detail).toContain('GRAPHDOCK_A2A_DEFAULT_ASSISTANT');
    const res = await rt.http(`/.well-known/agent-card.json?assistant_id=${randomUUID()}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      detail: expect.stringContaining('not found') as unknown,
    });
  });
});

describe('message/send', () => {
  it('returns a completed task with the answer as status message and artifact, ids generated', async () => {
    const task = asTask(await echo.sendMessage({ message: userMessage('hello there') }));
    expect(task.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(task.contextId).toMatch(/^[0-9a-f-]{36}$/);
    expect(task.status.state).toBe('completed');
    expect(texts(task.status.message?.parts)).toEqual(['echo: hello there']);
    expect(task.status.message).toMatchObject({
      role: 'agent',
      taskId: task.id,
      contextId: task.contextId,
    });
    expect(task.artifacts).toHaveLength(1);
    expect(texts(task.artifacts?.[0]?.parts)).toEqual(['echo: hello there']);
    expect(task.history?.map((m) => [m.role, texts(m.parts)[0]])).toEqual([
      ['user', 'hello there'],
      ['agent', 'echo: hello there'],
    ]);
    // contextId is the thread and taskId the run, visible through the LangGraph API too.
    const run = await rt.client.runs.get(task.contextId, task.id);
    expect(run).toMatchObject({ status: 'success', thread_id: task.contextId });
    const state = await rt.client.threads.getState<{ messages: { content: string }[] }>(
      task.contextId,
    );
    expect(state.values.messages.map((m) => m.content)).toEqual([
      'hello there',
      'echo: hello there',
    ]);
  });

  it('runs the tool-calling agent and answers with its final AI message only', async () => {
    const agent = await clientFor('agent');
    const task = asTask(await agent.sendMessage({ message: userMessage('add 2 and 40') }));
    expect(task.status.state).toBe('completed');
    expect(texts(task.status.message?.parts)).toEqual(['The answer is 42.']);
    expect(texts(task.artifacts?.[0]?.parts)).toEqual(['The answer is 42.']);
  });

  it('carries on a conversation: a new task per turn in the same context', async () => {
    const first = asTask(await echo.sendMessage({ message: userMessage('one') }));
    const second = asTask(
      await echo.sendMessage({ message: userMessage('two', { contextId: first.contextId }) }),
    );
    expect(second.contextId).toBe(first.contextId);
    expect(second.id).not.toBe(first.id);
    expect(texts(second.status.message?.parts)).toEqual(['echo: two']);
    expect(second.history?.map((m) => texts(m.parts)[0])).toEqual([
      'one',
      'echo: one',
      'two',
      'echo: two',
    ]);
    // A completed task takes no more messages: the reference server answers -32004.
    const reuse = echo.sendMessage({
      message: userMessage('three', { contextId: first.contextId, taskId: second.id }),
    });
    await expect(reuse).rejects.toBeInstanceOf(UnsupportedOperationError);
  });

  it('accepts a client-chosen UUID contextId and refuses one that is not a UUID', async () => {
    const contextId = randomUUID();
    const task = asTask(await echo.sendMessage({ message: userMessage('mine', { contextId }) }));
    expect(task.contextId).toBe(contextId);
    const bad = await rpc('echo', {
      jsonrpc: '2.0',
      id: 'ctx',
      method: 'message/send',
      params: { message: userMessage('x', { contextId: 'session-42' }) },
    });
    expect(bad.body).toMatchObject({ id: 'ctx', error: { code: -32602 } });
    expect((bad.body.error as { message: string }).message).toContain('UUID');
  });

  it('a graph whose state has no messages key gets a clear invalid-params error', async () => {
    const res = await rpc('counter', {
      jsonrpc: '2.0',
      id: 7,
      method: 'message/send',
      params: { message: userMessage('count please') },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32602 } });
    const message = (res.body.error as { message: string }).message;
    expect(message).toContain('"messages"');
    expect(message).toContain('count');
    // A data part with the graph's own keys works.
    const data = await rpc('counter', {
      jsonrpc: '2.0',
      id: 8,
      method: 'message/send',
      params: {
        message: { ...userMessage(''), parts: [{ kind: 'data', data: { count: 41 } }] },
      },
    });
    expect(data.body).toMatchObject({
      id: 8,
      result: { kind: 'task', status: { state: 'completed' } },
    });
    expect((data.body.result as Task).artifacts?.[0]?.parts).toEqual([
      { kind: 'data', data: { count: 42 } },
    ]);
  });

  it('reports a failed run as a failed task, by send and by stream', async () => {
    const failing = await clientFor('failing');
    const task = asTask(await failing.sendMessage({ message: userMessage('hello?') }));
    expect(task.status.state).toBe('failed');
    expect(texts(task.status.message?.parts)).toEqual([
      'Error executing assistant: RangeError: the model is down',
    ]);
    expect(task.artifacts).toBeUndefined();
    expect((await rt.client.runs.get(task.contextId, task.id)).status).toBe('error');
    expect((await failing.getTask({ id: task.id })).status.state).toBe('failed');
    let final: TaskStatusUpdateEvent | undefined;
    for await (const event of failing.sendMessageStream({ message: userMessage('again?') })) {
      if (event.kind === 'status-update' && event.final) final = event;
    }
    expect(final?.status.state).toBe('failed');
  });
});

describe('message/stream', () => {
  it('streams the task, working updates, the answer as an artifact, and a final status', async () => {
    const events: unknown[] = [];
    for await (const event of echo.sendMessageStream({ message: userMessage('stream me') })) {
      events.push(event);
    }
    const [first, ...rest] = events;
    const task = asTask(first);
    expect(task.status.state).toBe('submitted');
    expect(texts(task.history?.[0]?.parts)).toEqual(['stream me']);
    const statuses = rest.filter(
      (e): e is TaskStatusUpdateEvent => (e as { kind: string }).kind === 'status-update',
    );
    const artifacts = rest.filter(
      (e): e is TaskArtifactUpdateEvent => (e as { kind: string }).kind === 'artifact-update',
    );
    expect(statuses[0]?.status.state).toBe('working');
    const last = rest.at(-1) as TaskStatusUpdateEvent;
    expect(last).toMatchObject({ kind: 'status-update', final: true, taskId: task.id });
    expect(last.status.state).toBe('completed');
    expect(texts(last.status.message?.parts)).toEqual(['echo: stream me']);
    expect(statuses.slice(0, -1).every((s) => !s.final)).toBe(true);
    expect(artifacts).toHaveLength(1);
    expect(artifacts[0]).toMatchObject({
      taskId: task.id,
      contextId: task.contextId,
      lastChunk: true,
    });
    expect(texts(artifacts[0]?.artifact.parts)).toEqual(['echo: stream me']);
    // The artifact comes before the final status.
    expect(rest.indexOf(artifacts[0])).toBeLessThan(rest.length - 1);
  });

  it('streams the model tokens of the agent as working messages', async () => {
    const agent = await clientFor('agent');
    const tokens: string[] = [];
    let final: TaskStatusUpdateEvent | undefined;
    for await (const event of agent.sendMessageStream({ message: userMessage('just talk') })) {
      if (event.kind === 'status-update' && !event.final)
        tokens.push(...texts(event.status.message?.parts));
      if (event.kind === 'status-update' && event.final) final = event;
    }
    expect(tokens.join('')).toContain('You said: just talk');
    expect(tokens.length).toBeGreaterThan(1);
    expect(texts(final?.status.message?.parts)).toEqual(['You said: just talk']);
  });

  it('stamps the statuses of a stream in non-decreasing time order', async () => {
    // Several turns: a fast graph's events are often read after its run has ended.
    for (const text of ['one', 'two', 'three']) {
      const stamps: string[] = [];
      for await (const event of echo.sendMessageStream({ message: userMessage(text) })) {
        if (event.kind === 'task' || event.kind === 'status-update')
          stamps.push(event.status.timestamp ?? '');
      }
      expect(stamps.length).toBeGreaterThan(2);
      const times = stamps.map((t) => Date.parse(t));
      expect(times.every((t) => Number.isFinite(t))).toBe(true);
      expect(times).toEqual([...times].sort((a, b) => a - b));
    }
  });
});

/** Reads a streaming call to its end; resolves with the error it ends with. */
async function streamError(events: AsyncIterable<unknown>): Promise<Error & { cause?: unknown }> {
  try {
    for await (const event of events) void event;
  } catch (err) {
    return err as Error;
  }
  throw new Error('the stream ended without an error');
}

describe('errors of the streaming methods', () => {
  it('come as an SSE stream holding the JSON-RPC error, so the official client reports the code', async () => {
    const unknown = await streamError(echo.resubscribeTask({ id: randomUUID() }));
    expect(unknown.message).toContain('(Code: -32001)');
    expect(unknown.cause).toBeInstanceOf(TaskNotFoundError);

    const done = asTask(await echo.sendMessage({ message: userMessage('finished') }));
    const more = await streamError(
      echo.sendMessageStream({ message: userMessage('more', { taskId: done.id }) }),
    );
    expect(more.message).toContain('(Code: -32004)');
    expect(more.cause).toBeInstanceOf(UnsupportedOperationError);

    const noParts = await streamError(
      echo.sendMessageStream({ message: { ...userMessage('x'), parts: [] } }),
    );
    expect(noParts.message).toContain('(Code: -32602)');
    expect(noParts.message).toContain('params.message.parts');
  });

  it('frames the error as one SSE event with the request id, also for a malformed envelope', async () => {
    const post = (body: unknown) =>
      rt.http('/a2a/echo', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(body),
      });
    const res = await post({ jsonrpc: '2.0', id: 's', method: 'message/stream', params: {} });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await res.text()).split('\n\n').filter((e) => e.trim() !== '');
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]?.replace(/^data: /, '') ?? '')).toMatchObject({
      jsonrpc: '2.0',
      id: 's',
      error: { code: -32602 },
    });
    const version = await post({ jsonrpc: '1.0', id: 7, method: 'tasks/resubscribe' });
    expect(version.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await version.text()).toContain('"code":-32600');
  });
});

describe('tasks/get and tasks/cancel', () => {
  it('gets a task by id, with historyLength, and -32001 for unknown ids', async () => {
    const sent = asTask(await echo.sendMessage({ message: userMessage('remember me') }));
    const got = await echo.getTask({ id: sent.id });
    expect(got).toMatchObject({
      id: sent.id,
      contextId: sent.contextId,
      status: { state: 'completed' },
    });
    expect(texts(got.artifacts?.[0]?.parts)).toEqual(['echo: remember me']);
    const short = await echo.getTask({ id: sent.id, historyLength: 1 });
    expect(short.history?.map((m) => texts(m.parts)[0])).toEqual(['echo: remember me']);
    await expect(echo.getTask({ id: randomUUID() })).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(echo.getTask({ id: 'not-a-uuid' })).rejects.toBeInstanceOf(TaskNotFoundError);
    // A task of one assistant is not visible through another's endpoint.
    const agent = await clientFor('agent');
    await expect(agent.getTask({ id: sent.id })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('cancels a working task of the slow graph; a finished task is not cancelable', async () => {
    const slow = await new ClientFactory().createFromUrl(
      rt.url,
      '/.well-known/agent-card.json?assistant_id=slow',
    );
    const params: MessageSendParams = {
      message: userMessage('take your time'),
      configuration: { blocking: false },
    };
    const started = asTask(await slow.sendMessage(params));
    expect(['submitted', 'working']).toContain(started.status.state);
    // Wait until it is really working (first step underway), then cancel.
    const deadline = Date.now() + 15_000;
    while ((await slow.getTask({ id: started.id })).status.state !== 'working') {
      if (Date.now() > deadline) throw new Error('the slow task never started');
      await new Promise((r) => setTimeout(r, 50));
    }
    const canceled = await slow.cancelTask({ id: started.id });
    expect(canceled.status.state).toBe('canceled');
    expect((await slow.getTask({ id: started.id })).status.state).toBe('canceled');
    expect((await rt.client.runs.get(started.contextId, started.id)).status).toBe('interrupted');
    await expect(slow.cancelTask({ id: started.id })).rejects.toBeInstanceOf(
      TaskNotCancelableError,
    );
    const done = asTask(await echo.sendMessage({ message: userMessage('quick') }));
    await expect(echo.cancelTask({ id: done.id })).rejects.toBeInstanceOf(TaskNotCancelableError);
  });

  it('resubscribes to a running task and sees it finish', async () => {
    const slow = await clientFor('slow');
    const started = asTask(
      await slow.sendMessage({ message: userMessage('watch'), configuration: { blocking: false } }),
    );
    const events: unknown[] = [];
    for await (const event of slow.resubscribeTask({ id: started.id })) events.push(event);
    expect(asTask(events[0]).id).toBe(started.id);
    const last = events.at(-1) as TaskStatusUpdateEvent;
    expect(last).toMatchObject({
      kind: 'status-update',
      final: true,
      status: { state: 'completed' },
    });
    expect(texts(last.status.message?.parts)).toEqual(['second: first: watch']);
  });
});

describe('interrupts', () => {
  it('an interrupt() becomes input-required; the answer sent with the taskId resumes the same task', async () => {
    const client = await clientFor('interrupt');
    const asked = asTask(await client.sendMessage({ message: userMessage('write a draft') }));
    expect(asked.status.state).toBe('input-required');
    expect(texts(asked.status.message?.parts)).toEqual(['Approve the draft?']);
    expect(asked.status.message?.parts).toContainEqual({
      kind: 'data',
      data: { interrupts: [{ question: 'Approve the draft?' }] },
    });
    expect((await client.getTask({ id: asked.id })).status.state).toBe('input-required');

    const done = asTask(
      await client.sendMessage({
        message: userMessage('yes', { contextId: asked.contextId, taskId: asked.id }),
      }),
    );
    expect(done.id).toBe(asked.id);
    expect(done.contextId).toBe(asked.contextId);
    expect(done.status.state).toBe('completed');
    expect(texts(done.status.message?.parts)).toEqual(['Review: yes']);
    const state = await rt.client.threads.getState<{ approved: boolean }>(asked.contextId);
    expect(state.values.approved).toBe(true);
    // tasks/get follows the task to its latest turn.
    expect((await client.getTask({ id: asked.id })).status.state).toBe('completed');
    // Once completed, the task takes no more input.
    await expect(
      client.sendMessage({ message: userMessage('again', { taskId: asked.id }) }),
    ).rejects.toBeInstanceOf(UnsupportedOperationError);
  });

  it('a task whose interrupt a later task of the same context ran past cannot be resumed', async () => {
    const client = await clientFor('interrupt');
    const asked = asTask(await client.sendMessage({ message: userMessage('draft one') }));
    expect(asked.status.state).toBe('input-required');
    const next = asTask(
      await client.sendMessage({
        message: userMessage('draft two', { contextId: asked.contextId }),
      }),
    );
    expect(next.id).not.toBe(asked.id);
    await expect(
      client.sendMessage({
        message: userMessage('yes', { contextId: asked.contextId, taskId: asked.id }),
      }),
    ).rejects.toBeInstanceOf(UnsupportedOperationError);
    // The newer task is the one waiting for input, and it resumes.
    const done = asTask(
      await client.sendMessage({
        message: userMessage('yes', { contextId: next.contextId, taskId: next.id }),
      }),
    );
    expect(done.status.state).toBe('completed');
  });

  it('streams an interrupt as a final input-required status, and resumes by stream', async () => {
    const client = await clientFor('interrupt');
    let task: Task | undefined;
    let final: TaskStatusUpdateEvent | undefined;
    for await (const event of client.sendMessageStream({ message: userMessage('draft') })) {
      if (event.kind === 'task') task = event;
      if (event.kind === 'status-update' && event.final) final = event;
    }
    expect(final?.status.state).toBe('input-required');
    let resumed: TaskStatusUpdateEvent | undefined;
    for await (const event of client.sendMessageStream({
      message: userMessage('no', { contextId: task?.contextId, taskId: task?.id }),
    })) {
      if (event.kind === 'status-update' && event.final) resumed = event;
    }
    expect(resumed).toMatchObject({ taskId: task?.id, status: { state: 'completed' } });
    expect(texts(resumed?.status.message?.parts)).toEqual(['Review: no']);
  });
});

describe('JSON-RPC errors', () => {
  it('answers protocol errors at HTTP 200 with the request id echoed (null when unknown)', async () => {
    const parse = await rpc('echo', undefined, '{"jsonrpc": "2.0", "id": 1, ');
    expect(parse).toEqual({
      status: 200,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: expect.any(String) as unknown },
      },
    });
    const empty = await rpc('echo', undefined, '');
    expect(empty.body).toMatchObject({ id: null, error: { code: -32700 } });
    const version = await rpc('echo', { jsonrpc: '1.0', id: 'v', method: 'tasks/get' });
    expect(version.body).toMatchObject({ id: 'v', error: { code: -32600 } });
    const batch = await rpc('echo', [{ jsonrpc: '2.0', id: 1, method: 'tasks/get' }]);
    expect(batch.body).toMatchObject({ id: null, error: { code: -32600 } });
    const noMethod = await rpc('echo', { jsonrpc: '2.0', id: 3 });
    expect(noMethod.body).toMatchObject({ id: 3, error: { code: -32600 } });
    const badId = await rpc('echo', { jsonrpc: '2.0', id: { x: 1 }, method: 'tasks/get' });
    expect(badId.body).toMatchObject({ id: null, error: { code: -32600 } });
    const unknown = await rpc('echo', {
      jsonrpc: '2.0',
      id: 'm',
      method: 'tasks/list',
      params: {},
    });
    expect(unknown).toMatchObject({ status: 200, body: { id: 'm', error: { code: -32601 } } });
    const push = await rpc('echo', {
      jsonrpc: '2.0',
      id: 'p',
      method: 'tasks/pushNotificationConfig/get',
      params: { id: randomUUID() },
    });
    expect(push.body).toMatchObject({ id: 'p', error: { code: -32003 } });
  });

  it('checks the method and params of a request without id before refusing it', async () => {
    const unknown = await rpc('echo', { jsonrpc: '2.0', method: 'tasks/list', params: {} });
    expect(unknown.body).toMatchObject({ id: null, error: { code: -32601 } });
    const badParams = await rpc('echo', { jsonrpc: '2.0', method: 'tasks/get', params: {} });
    expect(badParams.body).toMatchObject({ id: null, error: { code: -32602 } });
    expect((badParams.body.error as { message: string }).message).toContain('params.id');
    // A well-formed request without id is still refused: every A2A method answers.
    const valid = await rpc('echo', {
      jsonrpc: '2.0',
      method: 'tasks/get',
      params: { id: randomUUID() },
    });
    expect(valid.body).toMatchObject({ id: null, error: { code: -32600 } });
    expect((valid.body.error as { message: string }).message).toContain('"id"');
  });

  it('names the invalid params', async () => {
    const missing = await rpc('echo', { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: {} });
    expect(missing.body).toMatchObject({ id: 1, error: { code: -32602 } });
    expect((missing.body.error as { message: string }).message).toContain('params.id');
    const parts = await rpc('echo', {
      jsonrpc: '2.0',
      id: 2,
      method: 'message/send',
      params: { message: { role: 'user', messageId: 'm', parts: [{ kind: 'text', text: 5 }] } },
    });
    expect(parts.body).toMatchObject({ id: 2, error: { code: -32602 } });
    expect((parts.body.error as { message: string }).message).toContain(
      'params.message.parts.0.text',
    );
    const file = await rpc('echo', {
      jsonrpc: '2.0',
      id: 3,
      method: 'message/send',
      params: {
        message: {
          role: 'user',
          messageId: 'm',
          parts: [{ kind: 'file', file: { uri: 'https://example.com/a.png' } }],
        },
      },
    });
    expect(file.body).toMatchObject({ id: 3, error: { code: -32005 } });
    const noAssistant = await rpc(randomUUID(), {
      jsonrpc: '2.0',
      id: 4,
      method: 'message/send',
      params: { message: userMessage('anyone?') },
    });
    expect(noAssistant.body).toMatchObject({ id: 4, error: { code: -32602 } });
    const cancelUnknown = await rpc('echo', {
      jsonrpc: '2.0',
      id: 5,
      method: 'tasks/cancel',
      params: { id: randomUUID() },
    });
    expect(cancelUnknown.body).toMatchObject({ id: 5, error: { code: -32001 } });
  });
});
