// Runs and state updates that name a checkpoint, through the official JS SDK and raw HTTP on a real
// server and PostgreSQL. LangGraph starts from an empty state when it finds no checkpoint by the
// id it is given, so a mistyped id used to replace a thread's conversation with the new input
// alone; such ids are now refused (422 when they cannot be an id, 404 when the thread has none
// such) and nothing changes. A subgraph's checkpoint (namespace and map) resumes that subgraph.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT } from '../support/server.js';

const rt = useRuntime({
  config: join(REPO_ROOT, 'test', 'fixtures', 'behaviours', 'langgraph.json'),
});

type Msg = { content: string };
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const contents = (values: unknown) =>
  ((values as { messages?: Msg[] }).messages ?? []).map((m) => m.content);
/** Well formed, and no thread has it. */
const UNKNOWN = '1f1eada5-0000-6000-8000-000000000000';

/** A thread with one finished echo run: its conversation and its run count are what must stay. */
async function conversation() {
  const thread = await rt.client.threads.create();
  await rt.client.runs.wait(thread.thread_id, 'echo', { input: hi('one') });
  return thread.thread_id;
}

async function unchanged(threadId: string) {
  const state = await rt.client.threads.getState(threadId);
  expect(contents(state.values)).toEqual(['one', 'echo: one']);
  expect(await rt.client.runs.list(threadId)).toHaveLength(1);
  expect((await rt.client.threads.get(threadId)).status).toBe('idle');
}

async function refused(threadId: string, path: string, body: unknown, status: number) {
  const res = await rt.http(`/threads/${threadId}${path}`, { method: 'POST', json: body });
  expect(res.status).toBe(status);
  return (await res.json()) as { detail: unknown };
}

describe('a checkpoint id that cannot be one', () => {
  it('is 422 on runs, state updates and history, naming the field', async () => {
    const thread = await conversation();
    const bodies: [string, unknown, (string | number)[]][] = [
      [
        '/runs/wait',
        { assistant_id: 'echo', input: {}, checkpoint_id: 'nonexistent' },
        ['body', 'checkpoint_id'],
      ],
      [
        '/runs',
        { assistant_id: 'echo', input: {}, checkpoint: { checkpoint_id: 'x' } },
        ['body', 'checkpoint', 'checkpoint_id'],
      ],
      ['/state', { values: hi('two'), checkpoint_id: 'garbage' }, ['body', 'checkpoint_id']],
      ['/history', { before: 'garbage' }, ['body', 'before']],
      // The Python SDK's form (a RunnableConfig) and the JS SDK's (a checkpoint).
      [
        '/history',
        { before: { configurable: { checkpoint_id: 'garbage' } } },
        ['body', 'before', 'checkpoint_id'],
      ],
      ['/history', { before: { checkpoint_id: 'garbage' } }, ['body', 'before', 'checkpoint_id']],
    ];
    for (const [path, body, loc] of bodies) {
      const { detail } = await refused(thread, path, body, 422);
      expect(detail).toEqual([
        expect.objectContaining({ loc, msg: 'Invalid checkpoint ID: must be a UUID' }),
      ]);
    }
    const query = await rt.http(`/threads/${thread}/history?before=garbage`);
    expect(query.status).toBe(422);
    expect(((await query.json()) as { detail: unknown }).detail).toEqual([
      expect.objectContaining({
        loc: ['query', 'before'],
        msg: 'Invalid checkpoint ID: must be a UUID',
      }),
    ]);
    await unchanged(thread);
  });
});

describe('a checkpoint the thread does not have', () => {
  it('is 404 for a run however the id is given, and nothing runs', async () => {
    const thread = await conversation();
    const attempts = [
      () => rt.client.runs.wait(thread, 'echo', { input: hi('two'), checkpointId: UNKNOWN }),
      () => rt.client.runs.create(thread, 'echo', { input: hi('two'), checkpointId: UNKNOWN }),
      () =>
        rt.client.runs.wait(thread, 'echo', {
          input: hi('two'),
          checkpoint: { checkpoint_id: UNKNOWN, checkpoint_ns: '', checkpoint_map: null },
        }),
      () =>
        rt.client.runs.wait(thread, 'echo', {
          input: hi('two'),
          config: { configurable: { checkpoint_id: UNKNOWN } },
        }),
    ];
    for (const attempt of attempts) {
      const err = (await attempt().catch((e: unknown) => e)) as {
        status?: number;
        message?: string;
      };
      expect(err.status).toBe(404);
      expect(err.message).toContain('Checkpoint not found');
    }
    await unchanged(thread);
  });

  it("is 404 for another thread's checkpoint", async () => {
    const [a, b] = [await conversation(), await conversation()];
    const ofA = (await rt.client.threads.getState(a)).checkpoint.checkpoint_id!;
    await expect(
      rt.client.runs.wait(b, 'echo', { input: hi('two'), checkpointId: ofA }),
    ).rejects.toMatchObject({ status: 404 });
    await unchanged(b);
  });

  it('is 404 for a state update, which writes no checkpoint', async () => {
    const thread = await conversation();
    const before = await rt.client.threads.getHistory(thread, { limit: 100 });
    await expect(
      rt.client.threads.updateState(thread, { values: hi('two'), checkpointId: UNKNOWN }),
    ).rejects.toMatchObject({ status: 404 });
    expect(await rt.client.threads.getHistory(thread, { limit: 100 })).toHaveLength(before.length);
    await unchanged(thread);
  });

  it('still forks from a checkpoint the thread has', async () => {
    const thread = await conversation();
    const [, first] = await rt.client.threads.getHistory(thread, { limit: 2 });
    const forked = await rt.client.runs.wait(thread, 'echo', {
      input: hi('two'),
      checkpointId: first!.checkpoint.checkpoint_id!,
    });
    expect(contents(forked)).toEqual(['one', 'two', 'echo: two']);
  });
});

describe("a subgraph's checkpoint", () => {
  type Task = { name: string; state: { checkpoint: Record<string, unknown> } | null };

  it('resumes that subgraph: its namespace and map reach LangGraph', async () => {
    const thread = (await rt.client.threads.create()).thread_id;
    await rt.client.runs.wait(thread, 'approval', { input: { request: 'leave' } });
    const state = await rt.client.threads.getState(thread, undefined, { subgraphs: true });
    const task = state.tasks.find((t) => (t as Task).name === 'approval') as Task;
    const checkpoint = task.state!.checkpoint;
    expect(checkpoint.checkpoint_ns).toMatch(/^approval:/);
    expect(checkpoint.checkpoint_map).toMatchObject({ '': state.checkpoint.checkpoint_id });

    const resumed = await rt.client.runs.wait(thread, 'approval', {
      command: { resume: 'yes' },
      checkpoint: checkpoint as {
        checkpoint_id: string;
        checkpoint_ns: string;
        checkpoint_map: Record<string, unknown>;
      },
    });
    expect(resumed).toMatchObject({ request: 'LEAVE', answer: 'yes' });
    expect((await rt.client.threads.get(thread)).status).toBe('idle');
  });
});
