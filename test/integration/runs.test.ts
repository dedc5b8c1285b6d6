// Runs through the official JS SDK: the queue, waiting, streaming, joining, multitask
// strategies, interrupts and cancellation, on a real server and PostgreSQL.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';

const rt = useRuntime({ env: { GRAPHDOCK_SLOW_STEP_MS: '400' } });

type Msg = { type: string; content: string };
type Values = { messages: Msg[] };
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const contents = (values: unknown) =>
  ((values as Partial<Values>).messages ?? []).map((m) => m.content);

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('waiting for a run', () => {
  it('runs a graph on a thread and returns its final values', async () => {
    const thread = await rt.client.threads.create();
    const result = await rt.client.runs.wait(thread.thread_id, 'echo', { input: hi('hello') });
    expect(contents(result)).toEqual(['hello', 'echo: hello']);
    const after = await rt.client.threads.get(thread.thread_id);
    expect(after.status).toBe('idle');
    expect(after.metadata).toMatchObject({ graph_id: 'echo' });
    const state = await rt.client.threads.getState(thread.thread_id);
    expect(contents(state.values)).toEqual(['hello', 'echo: hello']);
    expect(state.metadata).toMatchObject({ source: 'loop', graph_id: 'echo' });
    const [run] = await rt.client.runs.list(thread.thread_id);
    expect(run).toMatchObject({
      status: 'success',
      thread_id: thread.thread_id,
      multitask_strategy: 'enqueue',
    });
  });

  it('runs threadless (stateless) and leaves no thread, checkpoint or run behind', async () => {
    const sql = new pg.Client({ connectionString: rt.db.url });
    await sql.connect();
    const rows = async () =>
      (
        await sql.query<Record<string, number>>(
          `SELECT (SELECT count(*)::int FROM threads) AS threads, (SELECT count(*)::int FROM runs) AS runs,
             (SELECT count(*)::int FROM checkpoints) AS checkpoints,
             (SELECT count(*)::int FROM checkpoint_blobs) AS blobs,
             (SELECT count(*)::int FROM checkpoint_writes) AS writes`,
        )
      ).rows[0];
    try {
      const before = await rows();
      const result = await rt.client.runs.wait(null, 'echo', { input: hi('alone') });
      expect(contents(result)).toEqual(['alone', 'echo: alone']);
      const streamed: string[] = [];
      for await (const part of rt.client.runs.stream(null, 'echo', { input: hi('flowing') }))
        streamed.push(part.event);
      expect(streamed).toContain('values');
      expect(
        await eventually(rows, (now) => JSON.stringify(now) === JSON.stringify(before)),
      ).toEqual(before);
    } finally {
      await sql.end();
    }
  });

  it('runs the tool-calling agent to its answer', async () => {
    const result = await rt.client.runs.wait(null, 'agent', { input: hi('add 2 and 3') });
    const messages = (result as Values).messages;
    expect(messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
    expect(messages.at(-1)?.content).toBe('The answer is 5.');
  });
});

describe('a run whose caller waits for it', () => {
  // Wait and stream may start the run in the statement that creates it, on the process that
  // received it: such a run has no claim, so it started at the instant it was created.
  const withSql = async <T>(fn: (sql: pg.Client) => Promise<T>): Promise<T> => {
    const sql = new pg.Client({ connectionString: rt.db.url });
    await sql.connect();
    try {
      return await fn(sql);
    } finally {
      await sql.end();
    }
  };
  const timing = (sql: pg.Client, runId: string) =>
    sql
      .query<{ at_once: boolean; started: Date; ended: Date; attempt: number }>(
        `SELECT run_started_at = created_at AS at_once, run_started_at AS started,
                run_ended_at AS ended, attempt FROM runs WHERE run_id = $1`,
        [runId],
      )
      .then((r) => r.rows[0]);

  it('starts as it is created when its thread is free, and is never claimed', async () => {
    const thread = await rt.client.threads.create();
    const result = await rt.client.runs.wait(thread.thread_id, 'echo', { input: hi('now') });
    expect(contents(result)).toEqual(['now', 'echo: now']);
    const [run] = await rt.client.runs.list(thread.thread_id);
    await withSql(async (sql) => {
      expect(await timing(sql, run!.run_id)).toMatchObject({ at_once: true, attempt: 1 });
    });
    const parts: string[] = [];
    for await (const part of rt.client.runs.stream(thread.thread_id, 'echo', {
      input: hi('again'),
    }))
      parts.push(part.event);
    expect(parts[0]).toBe('metadata');
    expect(parts).toContain('values');
    expect(contents((await rt.client.threads.getState(thread.thread_id)).values)).toEqual([
      'now',
      'echo: now',
      'again',
      'echo: again',
    ]);
  });

  it('queues behind a run already on its thread, and runs after it', async () => {
    const thread = await rt.client.threads.create();
    const first = await rt.client.runs.create(thread.thread_id, 'slow', { input: hi('first') });
    const result = await rt.client.runs.wait(thread.thread_id, 'echo', { input: hi('second') });
    // The echo ran on the slow run's output.
    const seen = contents(result);
    expect(seen[0]).toBe('first');
    expect(seen.length).toBeGreaterThan(3);
    expect(seen.slice(-2)).toEqual(['second', 'echo: second']);
    const runs = await rt.client.runs.list(thread.thread_id);
    const second = runs.find((r) => r.run_id !== first.run_id)!;
    await withSql(async (sql) => {
      const [a, b] = [await timing(sql, first.run_id), await timing(sql, second.run_id)];
      expect(b!.at_once).toBe(false);
      expect(b!.started.getTime()).toBeGreaterThanOrEqual(a!.ended.getTime());
    });
  });

  it('queues instead when a run of its thread was claimed while it was being created', async () => {
    const thread = await rt.client.threads.create();
    const [assistant] = await rt.client.assistants.search({ graphId: 'echo' });
    await withSql(async (sql) => {
      // Another worker's claim, not yet committed: the new run does not see it, and the index of
      // running runs refuses the second running run once it commits.
      const holder = crypto.randomUUID();
      await sql.query('BEGIN');
      await sql.query(
        `INSERT INTO runs (run_id, thread_id, assistant_id, status, attempt, worker_id, lease_expires_at)
         VALUES ($1, $2, $3, 'running', 1, 'elsewhere', now() + interval '1 minute')`,
        [holder, thread.thread_id, assistant!.assistant_id],
      );
      // Plain fetch, not the SDK: the SDK retries a 5xx, which would hide a failed first insert.
      const waited = fetch(`${rt.url}/threads/${thread.thread_id}/runs/wait`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ assistant_id: 'echo', input: hi('late') }),
      });
      // Commit only once the new run's insert waits on a lock the claim holds, so the insert
      // surely began before the claim became visible.
      const watcher = new pg.Client({ connectionString: rt.db.url });
      await watcher.connect();
      try {
        const blocked = async () =>
          (
            await watcher.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity
               WHERE datname = current_database() AND wait_event_type = 'Lock'
                 AND query LIKE '%INSERT INTO runs%'`,
            )
          ).rows[0]!.n > 0;
        expect(await eventually(blocked, (b) => b)).toBe(true);
      } finally {
        await watcher.end();
      }
      await sql.query('COMMIT');
      // The other run ends only once the new one has queued: ending it sooner lets the new run's
      // insert, still waiting on the thread, find the thread free and start at once.
      const queued = async () =>
        (
          await sql.query<{ status: string }>(
            'SELECT status FROM runs WHERE thread_id = $1 AND run_id <> $2',
            [thread.thread_id, holder],
          )
        ).rows.map((r) => r.status);
      expect(await eventually(queued, (s) => s.length > 0)).toEqual(['pending']);
      // The queued one is then claimed like any other.
      await sql.query(
        `UPDATE runs SET status = 'success', run_ended_at = now() WHERE run_id = $1`,
        [holder],
      );
      const answer = await waited;
      expect(answer.status).toBe(200);
      expect(contents(await answer.json())).toEqual(['late', 'echo: late']);
      const runs = await rt.client.runs.list(thread.thread_id);
      const late = runs.find((r) => r.run_id !== holder)!;
      expect(late.status).toBe('success');
      expect(await timing(sql, late.run_id)).toMatchObject({ at_once: false, attempt: 1 });
    });
  });
});

describe("the thread's values after a run", () => {
  // A run that ends without an interrupt settles its thread from its own stream; the thread's
  // values must be what its checkpoints say, for every kind of graph and stream mode.
  it.each([
    ['echo', hi('one'), ['values']],
    ['echo', hi('two'), ['updates']],
    ['agent', hi('add 2 and 3'), ['values', 'messages-tuple']],
    ['nested', hi('deep'), ['values']],
  ] as const)('%s with %j equal the checkpointed state', async (graph, input, streamMode) => {
    const thread = await rt.client.threads.create();
    for (let turn = 0; turn < 2; turn++) {
      // The SDK's wait takes no stream modes; the API does.
      const res = await rt.http(`/threads/${thread.thread_id}/runs/wait`, {
        method: 'POST',
        json: { assistant_id: graph, input, stream_mode: streamMode },
      });
      expect(res.status).toBe(200);
    }
    const row = await rt.client.threads.get(thread.thread_id);
    const state = await rt.client.threads.getState(thread.thread_id);
    expect(row.status).toBe('idle');
    expect(row.interrupts).toEqual({});
    expect(state.next).toEqual([]);
    expect(row.values).toEqual(state.values);
    expect((row.values as Values).messages.length).toBeGreaterThan(2);
  });

  it('after an interrupt before a node, the thread is interrupted with that node next', async () => {
    const thread = await rt.client.threads.create();
    await rt.client.runs.wait(thread.thread_id, 'agent', {
      input: hi('add 2 and 3'),
      interruptBefore: ['tools'],
    });
    const row = await rt.client.threads.get(thread.thread_id);
    const state = await rt.client.threads.getState(thread.thread_id);
    expect(state.next).toEqual(['tools']);
    expect(row.status).toBe('interrupted');
    expect(row.values).toEqual(state.values);
  });
});

describe("the assistant's settings", () => {
  const checkpointConfigs = async (threadId: string, runId: string) => {
    const configs: Record<string, unknown>[] = [];
    for await (const part of rt.client.runs.joinStream(threadId, runId, {
      streamMode: 'checkpoints',
    } as never)) {
      if (part.event === 'checkpoints')
        configs.push(
          (part.data as { config: { configurable: Record<string, unknown> } }).config.configurable,
        );
    }
    return configs;
  };

  it('are merged into the run when it is created, and it executes with them', async () => {
    const assistant = await rt.client.assistants.create({
      graphId: 'echo',
      config: { configurable: { tone: 'calm' }, tags: ['from-assistant'] },
      context: { region: 'eu' },
    });
    const thread = await rt.client.threads.create();
    // A slow run holds the thread, so the next one waits in the queue.
    await rt.client.runs.create(thread.thread_id, 'slow', { input: hi('first') });
    const queued = await rt.client.runs.create(thread.thread_id, assistant.assistant_id, {
      input: hi('second'),
      config: { configurable: { mood: 'sunny' } },
      streamMode: ['checkpoints'],
      streamResumable: true,
    });
    const stored = await rt.client.runs.get(thread.thread_id, queued.run_id);
    const { kwargs } = stored as unknown as {
      kwargs: { config: Record<string, unknown>; context: unknown };
    };
    expect(kwargs.config).toMatchObject({
      tags: ['from-assistant'],
      configurable: {
        tone: 'calm',
        mood: 'sunny',
        graph_id: 'echo',
        assistant_id: assistant.assistant_id,
      },
    });
    expect(kwargs.context).toEqual({ region: 'eu' });
    // Changed while the run waits: the run keeps what it was created with.
    await rt.client.assistants.update(assistant.assistant_id, {
      config: { configurable: { tone: 'sharp' } },
    });
    const configs = await checkpointConfigs(thread.thread_id, queued.run_id);
    expect(configs.length).toBeGreaterThan(0);
    for (const configurable of configs)
      expect(configurable).toMatchObject({ tone: 'calm', mood: 'sunny' });
    const next = await rt.client.runs.create(thread.thread_id, assistant.assistant_id, {
      input: hi('third'),
      streamMode: ['checkpoints'],
      streamResumable: true,
    });
    for (const configurable of await checkpointConfigs(thread.thread_id, next.run_id))
      expect(configurable).toMatchObject({ tone: 'sharp' });
  });

  it('are read again for a new run whenever the assistant changed since the last one', async () => {
    // Runs reuse an assistant read for an earlier run only while its row is unchanged.
    const assistantId = crypto.randomUUID();
    const create = (tone: string) =>
      rt.client.assistants.create({
        graphId: 'echo',
        assistantId,
        config: { configurable: { tone } },
      });
    const toneOfNewRun = async () => {
      const thread = await rt.client.threads.create();
      const run = await rt.client.runs.create(thread.thread_id, assistantId, { input: hi('x') });
      const stored = (await rt.client.runs.get(thread.thread_id, run.run_id)) as unknown as {
        kwargs: { config: { configurable: { tone: string } } };
      };
      return stored.kwargs.config.configurable.tone;
    };
    await create('one');
    expect(await toneOfNewRun()).toBe('one');
    expect(await toneOfNewRun()).toBe('one');
    await rt.client.assistants.update(assistantId, { config: { configurable: { tone: 'two' } } });
    expect(await toneOfNewRun()).toBe('two');
    await rt.client.assistants.setLatest(assistantId, 1);
    expect(await toneOfNewRun()).toBe('one');
    await rt.client.assistants.delete(assistantId);
    await create('three');
    expect(await toneOfNewRun()).toBe('three');
    // Threadless runs too.
    await rt.client.assistants.update(assistantId, { config: { configurable: { tone: 'four' } } });
    const stateless = await rt.http('/runs/wait', {
      method: 'POST',
      json: { assistant_id: assistantId, input: hi('x'), on_completion: 'keep' },
    });
    expect(stateless.status).toBe(200);
    const [thread] = await rt.client.threads.search({ metadata: { assistant_id: assistantId } });
    const [run] = await rt.client.runs.list(thread!.thread_id);
    expect(
      (run as unknown as { kwargs: { config: { configurable: { tone: string } } } }).kwargs.config
        .configurable.tone,
    ).toBe('four');
    await rt.client.assistants.delete(assistantId);
    const gone = await rt.http('/runs/wait', {
      method: 'POST',
      json: { assistant_id: assistantId, input: hi('x') },
    });
    expect(gone.status).toBe(404);
  });
});

describe('background runs', () => {
  it('creates a pending run, then joins it', async () => {
    const thread = await rt.client.threads.create();
    const run = await rt.client.runs.create(thread.thread_id, 'echo', {
      input: hi('later'),
      metadata: { via: 'bg' },
    });
    expect(run).toMatchObject({ thread_id: thread.thread_id, metadata: { via: 'bg' } });
    expect(['pending', 'running', 'success']).toContain(run.status);
    const result = await rt.client.runs.join(thread.thread_id, run.run_id);
    expect(contents(result)).toEqual(['later', 'echo: later']);
    expect((await rt.client.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
  });
});

describe('streaming', () => {
  it('streams metadata first, then the requested modes, with resumable ids', async () => {
    const thread = await rt.client.threads.create();
    const seen: { event: string; data: unknown }[] = [];
    for await (const part of rt.client.runs.stream(thread.thread_id, 'echo', {
      input: hi('stream me'),
      streamMode: ['values', 'updates'],
    })) {
      seen.push(part);
    }
    expect(seen[0]?.event).toBe('metadata');
    expect(new Set(seen.map((p) => p.event))).toEqual(new Set(['metadata', 'values', 'updates']));
    const updates = seen.filter((p) => p.event === 'updates').map((p) => p.data);
    expect(updates).toContainEqual({
      echo: { messages: [expect.objectContaining({ type: 'ai', content: 'echo: stream me' })] },
    });
    const runId = (seen[0]?.data as { run_id: string }).run_id;

    const all: string[] = [];
    for await (const part of rt.client.runs.joinStream(thread.thread_id, runId))
      all.push(part.event);
    expect(all).toEqual(seen.map((p) => p.event));
    const rest: string[] = [];
    for await (const part of rt.client.runs.joinStream(thread.thread_id, runId, {
      lastEventId: '1',
    }))
      rest.push(part.event);
    expect(rest).toEqual(seen.slice(2).map((p) => p.event));
  });

  it('streams chat model tokens as message tuples', async () => {
    const chunks: string[] = [];
    for await (const part of rt.client.runs.stream(null, 'agent', {
      input: hi('hello there'),
      streamMode: 'messages-tuple',
    })) {
      if (part.event === 'messages') chunks.push((part.data as [Msg, unknown])[0].content);
    }
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.join('')).toBe('You said: hello there');
  });
});

describe('multitask strategies', () => {
  it('enqueue: runs execute one after the other, in order', async () => {
    const thread = await rt.client.threads.create();
    const first = await rt.client.runs.create(thread.thread_id, 'slow', { input: hi('one') });
    const second = await rt.client.runs.create(thread.thread_id, 'slow', {
      input: hi('two'),
      multitaskStrategy: 'enqueue',
    });
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('busy');
    await rt.client.runs.join(thread.thread_id, second.run_id);
    const runs = await rt.client.runs.list(thread.thread_id);
    expect(runs.map((r) => [r.run_id, r.status])).toEqual([
      [second.run_id, 'success'],
      [first.run_id, 'success'],
    ]);
    const state = await rt.client.threads.getState(thread.thread_id);
    expect(contents(state.values)).toEqual([
      'one',
      'first: one',
      'second: first: one',
      'two',
      'first: two',
      'second: first: two',
    ]);
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('idle');
  });

  it('reject: a second run is refused with 409 and the first is untouched', async () => {
    const thread = await rt.client.threads.create();
    const first = await rt.client.runs.create(thread.thread_id, 'slow', { input: hi('keep') });
    const res = await rt.http(`/threads/${thread.thread_id}/runs`, {
      method: 'POST',
      json: { assistant_id: 'slow', input: hi('nope'), multitask_strategy: 'reject' },
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      detail:
        'Thread is already running a task. Wait for it to finish or choose a different multitask strategy.',
    });
    await rt.client.runs.join(thread.thread_id, first.run_id);
    expect((await rt.client.runs.get(thread.thread_id, first.run_id)).status).toBe('success');
  });

  it('interrupt: the earlier run stops as interrupted, keeps its progress, and the new run continues from it', async () => {
    const thread = await rt.client.threads.create();
    const first = await rt.client.runs.create(thread.thread_id, 'slow', { input: hi('old') });
    // Let the first step of the first run finish (one checkpoint of progress), then interrupt.
    await eventually(
      () => rt.client.threads.getState(thread.thread_id),
      (s) => contents(s.values).includes('first: old'),
    );
    const second = await rt.client.runs.create(thread.thread_id, 'slow', {
      input: hi('new'),
      multitaskStrategy: 'interrupt',
    });
    await rt.client.runs.join(thread.thread_id, second.run_id);
    expect((await rt.client.runs.get(thread.thread_id, first.run_id)).status).toBe('interrupted');
    expect((await rt.client.runs.get(thread.thread_id, second.run_id)).status).toBe('success');
    const values = contents((await rt.client.threads.getState(thread.thread_id)).values);
    expect(values.slice(0, 2)).toEqual(['old', 'first: old']);
    expect(values).not.toContain('second: first: old');
    expect(values.slice(-3)).toEqual(['new', 'first: new', 'second: first: new']);
  });

  it('rollback: the earlier run and its checkpoints are deleted', async () => {
    const thread = await rt.client.threads.create();
    const first = await rt.client.runs.create(thread.thread_id, 'slow', { input: hi('gone') });
    await eventually(
      () => rt.client.runs.get(thread.thread_id, first.run_id),
      (r) => r.status === 'running',
    );
    // A client still reading the first run's stream sees it end.
    const reader = (async () => {
      for await (const part of rt.client.runs.joinStream(thread.thread_id, first.run_id))
        expect(part.event).not.toBe('error');
    })();
    const second = await rt.client.runs.create(thread.thread_id, 'slow', {
      input: hi('kept'),
      multitaskStrategy: 'rollback',
    });
    await rt.client.runs.join(thread.thread_id, second.run_id);
    // Its stream ended: one that never did would hold the test to its timeout here.
    await reader;
    await expect(rt.client.runs.get(thread.thread_id, first.run_id)).rejects.toThrow(/404/);
    // Deleting itself is the rolled-back run's own end, not a run taken over by another worker.
    const aboutFirst = rt.server
      .output()
      .split('\n')
      .filter((line) => line.includes(first.run_id));
    expect(aboutFirst.filter((line) => line.includes('taken over'))).toEqual([]);
    const values = contents((await rt.client.threads.getState(thread.thread_id)).values);
    expect(values).toEqual(['kept', 'first: kept', 'second: first: kept']);
  });
});

describe('interrupts and cancellation', () => {
  it('stops at interrupt(), leaves the thread interrupted, and resumes with a command', async () => {
    const thread = await rt.client.threads.create();
    await rt.client.runs.wait(thread.thread_id, 'interrupt', { input: hi('draft it') });
    const stopped = await rt.client.threads.get(thread.thread_id);
    expect(stopped.status).toBe('interrupted');
    expect(Object.values(stopped.interrupts).flat()).toContainEqual(
      expect.objectContaining({ value: { question: 'Approve the draft?' } }),
    );
    const [run] = await rt.client.runs.list(thread.thread_id);
    expect(run?.status).toBe('success');
    const resumed = await rt.client.runs.wait(thread.thread_id, 'interrupt', {
      command: { resume: 'yes' },
    });
    expect((resumed as { approved: boolean }).approved).toBe(true);
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('idle');
  });

  it('cancels a running run on request', async () => {
    const thread = await rt.client.threads.create();
    const run = await rt.client.runs.create(thread.thread_id, 'slow', { input: hi('stop me') });
    await eventually(
      () => rt.client.runs.get(thread.thread_id, run.run_id),
      (r) => r.status === 'running',
    );
    await rt.client.runs.cancel(thread.thread_id, run.run_id, true, 'interrupt');
    expect((await rt.client.runs.get(thread.thread_id, run.run_id)).status).toBe('interrupted');
    expect(['idle', 'interrupted']).toContain(
      (await rt.client.threads.get(thread.thread_id)).status,
    );
  });
});

describe('strict resume', () => {
  // An interrupt id of the shape LangGraph gives them (XXH3, 32 hex digits) that is not waiting.
  const STALE = '0'.repeat(32);

  it('fails a run whose resume answers no waiting interrupt, and leaves the interrupt waiting', async () => {
    const info = (await (await rt.http('/info')).json()) as { flags: Record<string, unknown> };
    expect(info.flags.strict_resume).toBe(true);
    const thread = (await rt.client.threads.create()).thread_id;
    await rt.client.runs.wait(thread, 'interrupt', { input: hi('write') });
    const before = await rt.client.threads.getState(thread);
    expect(before.next).toEqual(['review']);

    const res = await rt.http(`/threads/${thread}/runs/wait`, {
      method: 'POST',
      json: {
        assistant_id: 'interrupt',
        command: { resume: { [STALE]: 'yes' } },
        strict_resume: true,
      },
    });
    expect(await res.json()).toMatchObject({ __error__: { error: 'UnknownInterruptError' } });
    const [refused] = await rt.client.runs.list(thread, { limit: 1 });
    expect(refused?.status).toBe('error');
    const after = await rt.client.threads.getState(thread);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect(after.next).toEqual(['review']);

    // Answering the interrupt that waits still works, strict or not.
    const [waiting] = Object.values(after.tasks[0]?.interrupts ?? []).map((i) => i.id);
    const done = await rt.http(`/threads/${thread}/runs/wait`, {
      method: 'POST',
      json: {
        assistant_id: 'interrupt',
        command: { resume: { [waiting!]: 'yes' } },
        strict_resume: true,
      },
    });
    expect(await done.json()).toMatchObject({ approved: true });
  });

  it('without it, the same resume is not refused', async () => {
    const thread = (await rt.client.threads.create()).thread_id;
    await rt.client.runs.wait(thread, 'interrupt', { input: hi('write') });
    const res = await rt.http(`/threads/${thread}/runs/wait`, {
      method: 'POST',
      json: { assistant_id: 'interrupt', command: { resume: { [STALE]: 'yes' } } },
    });
    expect(JSON.stringify(await res.json())).not.toContain('UnknownInterruptError');
  });
});

describe('batches, bulk cancel and implicit threads', () => {
  it('creates a batch of stateless runs and streams each by run id', async () => {
    const runs = await rt.client.runs.createBatch([
      { assistantId: 'echo', input: hi('a') },
      { assistantId: 'echo', input: hi('b') },
    ]);
    expect(runs).toHaveLength(2);
    for (const [run, word] of [
      [runs[0], 'a'],
      [runs[1], 'b'],
    ] as const) {
      const values: unknown[] = [];
      for await (const part of rt.client.runs.joinStream(null, run?.run_id ?? '')) {
        if (part.event === 'values') values.push(part.data);
      }
      expect(contents(values.at(-1))).toEqual([word, `echo: ${word}`]);
    }
  });

  it('creates a batch all or none: one run it cannot create leaves none of the others', async () => {
    const tag = crypto.randomUUID();
    const run = (input: string) => ({
      assistant_id: 'echo',
      input: hi(input),
      metadata: { batch: tag },
      on_completion: 'keep',
    });
    const refusals: [unknown[], number][] = [
      [[run('a'), run('b'), { assistant_id: 'no-such-graph', input: hi('c') }], 404],
      // The webhook rules refuse loopback addresses unless configured.
      [[run('a'), { ...run('b'), webhook: 'http://127.0.0.1:9/hook' }], 422],
    ];
    for (const [batch, status] of refusals) {
      const res = await rt.http('/runs/batch', { method: 'POST', json: batch });
      expect(res.status).toBe(status);
    }
    // A kept stateless run leaves its thread, tagged with the run's metadata: none was made.
    await new Promise((r) => setTimeout(r, 300));
    expect(await rt.client.threads.search({ metadata: { batch: tag } })).toEqual([]);

    const made = await rt.http('/runs/batch', { method: 'POST', json: [run('a'), run('b')] });
    expect(made.status).toBe(200);
    const runs = (await made.json()) as { run_id: string; thread_id: string }[];
    for (const r of runs) await rt.client.runs.join(r.thread_id, r.run_id);
    expect(await rt.client.threads.search({ metadata: { batch: tag } })).toHaveLength(2);
  });

  it('cancels runs in bulk, by ids or by status', async () => {
    const thread = await rt.client.threads.create();
    const running = await rt.client.runs.create(thread.thread_id, 'slow', { input: hi('x') });
    await eventually(
      () => rt.client.runs.get(thread.thread_id, running.run_id),
      (r) => r.status === 'running',
    );
    const byIds = await rt.http('/runs/cancel', {
      method: 'POST',
      json: { thread_id: thread.thread_id, run_ids: [running.run_id] },
    });
    expect(byIds.status).toBe(204);
    const cancelled = await eventually(
      () => rt.client.runs.get(thread.thread_id, running.run_id),
      (r) => r.status === 'interrupted',
    );
    expect(cancelled.status).toBe('interrupted');

    const other = await rt.client.threads.create();
    const delayed = await rt.client.runs.create(other.thread_id, 'echo', {
      input: hi('later'),
      afterSeconds: 600,
    });
    const byStatus = await rt.http('/runs/cancel', { method: 'POST', json: { status: 'pending' } });
    expect(byStatus.status).toBe(204);
    expect((await rt.client.runs.get(other.thread_id, delayed.run_id)).status).toBe('interrupted');

    const both = await rt.http('/runs/cancel', {
      method: 'POST',
      json: { status: 'all', thread_id: thread.thread_id, run_ids: [running.run_id] },
    });
    expect(both.status).toBe(422);

    // A thread alone names no runs: the answer says what the body may hold.
    const threadOnly = await rt.http('/runs/cancel', {
      method: 'POST',
      json: { thread_id: thread.thread_id },
    });
    expect(threadOnly.status).toBe(422);
    expect(await threadOnly.json()).toEqual({
      detail: [
        {
          loc: ['body'],
          msg: 'Give thread_id with run_ids (at least one), or status: "pending", "running" or "all"',
          type: 'invalid_union',
        },
      ],
    });
  });

  it('creates the thread when asked to with if_not_exists', async () => {
    const id = crypto.randomUUID();
    const result = await rt.client.runs.wait(id, 'echo', {
      input: hi('new thread'),
      ifNotExists: 'create',
    });
    expect(contents(result)).toEqual(['new thread', 'echo: new thread']);
    expect((await rt.client.threads.get(id)).metadata).toMatchObject({ graph_id: 'echo' });
  });

  it('creates the thread once when many runs ask for it at the same time', async () => {
    // One statement creates the thread or, when it exists, locks it: the runs racing for a new
    // thread all land on it, and none is refused.
    const id = crypto.randomUUID();
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        rt.client.runs.create(id, 'echo', {
          input: hi(`turn ${i}`),
          ifNotExists: 'create',
          metadata: { turn: i },
        }),
      ),
    );
    expect(new Set(runs.map((r) => r.run_id)).size).toBe(20);
    for (const run of runs) await rt.client.runs.join(id, run.run_id);
    const listed = await rt.client.runs.list(id, { limit: 50 });
    expect(listed.map((r) => r.status).sort()).toEqual(Array<string>(20).fill('success'));
    const thread = await rt.client.threads.get(id);
    expect(thread.metadata).toMatchObject({ graph_id: 'echo' });
    expect(typeof thread.metadata?.assistant_id).toBe('string');
    expect(thread.status).toBe('idle');
    // Every turn went through the echo graph on the one thread, in some order.
    const messages = (thread.values as { messages: { content: string }[] }).messages;
    expect(messages).toHaveLength(40);
  });
});

describe('streams and their log', () => {
  // A stream that cannot be resumed reaches its caller as it is produced and its log is written
  // in batches; a resumable one sends only what is durable, so any event id can be asked again.
  it('hold the same events; a resumable stream sends only durable ones, another sends them live', async () => {
    const sql = new pg.Client({ connectionString: rt.db.url });
    await sql.connect();
    try {
      const durable = async (runId: string) =>
        (
          await sql.query<{ n: number }>(
            'SELECT coalesce(sum(json_array_length(events)), 0)::int AS n FROM run_event_batches WHERE run_id = $1',
            [runId],
          )
        ).rows[0]!.n;
      const streamed = async (resumable: boolean) => {
        const thread = await rt.client.threads.create();
        const parts: { event: string; data: unknown }[] = [];
        let runId = '';
        let behind = 0;
        for await (const part of rt.client.runs.stream(thread.thread_id, 'slow', {
          input: hi(resumable ? 'kept' : 'live'),
          streamMode: ['values', 'updates'],
          streamResumable: resumable,
        })) {
          parts.push(part);
          if (part.event === 'metadata') runId = (part.data as { run_id: string }).run_id;
          if ((await durable(runId)) < parts.length) behind++;
        }
        const joined: { event: string; data: unknown }[] = [];
        for await (const part of rt.client.runs.joinStream(thread.thread_id, runId, {
          lastEventId: '-1',
        }))
          joined.push(part);
        return { parts, joined, behind };
      };
      const resumable = await streamed(true);
      expect(resumable.behind).toBe(0);
      const live = await streamed(false);
      // Sent before its batch was written (50 ms): seen for at least one of its five events.
      expect(live.behind).toBeGreaterThan(0);
      for (const { parts, joined } of [resumable, live]) {
        expect(parts.map((p) => p.event)).toEqual([
          'metadata',
          'values',
          'updates',
          'values',
          'updates',
          'values',
        ]);
        // The log, replayed once the run ended, holds every event that was sent.
        expect(joined).toEqual(parts);
      }
    } finally {
      await sql.end();
    }
  });
});

describe("a run's checkpoints", () => {
  // Checkpoint writes of a run with asynchronous durability are sent together, at most 50 ms
  // after they were made; a short run's go with its final status.
  const messagesOf = (state: { values: unknown }) =>
    ((state.values as { messages?: { content: string }[] }).messages ?? []).map((m) => m.content);

  it('are durable while a long run is still going, not only at its end', async () => {
    const thread = await rt.client.threads.create();
    await rt.client.runs.create(thread.thread_id, 'slow', { input: hi('steady') });
    // Written only at the end, every checkpoint would appear at once: the one after the first
    // step never alone, without the second step's.
    let midway = false;
    let done = false;
    const deadline = Date.now() + 15_000;
    while (!done && Date.now() < deadline) {
      const contents = (await rt.client.threads.getHistory(thread.thread_id)).map(messagesOf);
      done = contents.some((c) => c.includes('second: first: steady'));
      if (!done && contents.some((c) => c.includes('first: steady'))) midway = true;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(done).toBe(true);
    expect(midway).toBe(true);
    const states = await rt.client.threads.getHistory(thread.thread_id);
    expect(states.map((s) => s.metadata?.step)).toEqual([2, 1, 0, -1]);
  });

  it('fail the run when they cannot be written, and the thread keeps what is durable', async () => {
    const thread = await rt.client.threads.create();
    await rt.client.runs.wait(thread.thread_id, 'echo', { input: hi('kept') });
    const sql = new pg.Client({ connectionString: rt.db.url });
    await sql.connect();
    const trigger = `refuse_${thread.thread_id.replaceAll('-', '')}`;
    try {
      await sql.query(`CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.thread_id = '${thread.thread_id}' THEN RAISE EXCEPTION 'checkpoint refused'; END IF;
          RETURN NEW;
        END $$`);
      await sql.query(
        `CREATE TRIGGER ${trigger} BEFORE INSERT ON checkpoints FOR EACH ROW EXECUTE FUNCTION ${trigger}()`,
      );
      const res = await rt.http(`/threads/${thread.thread_id}/runs/wait`, {
        method: 'POST',
        json: { assistant_id: 'echo', input: hi('refused') },
        signal: AbortSignal.timeout(15_000),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ __error__: { message: 'checkpoint refused' } });
      const [run] = await rt.client.runs.list(thread.thread_id);
      expect(run?.status).toBe('error');
      const after = await rt.client.threads.get(thread.thread_id);
      expect(after.status).toBe('error');
      expect(messagesOf(await rt.client.threads.getState(thread.thread_id))).toEqual([
        'kept',
        'echo: kept',
      ]);
    } finally {
      await sql.query(`DROP TRIGGER IF EXISTS ${trigger} ON checkpoints`);
      await sql.query(`DROP FUNCTION IF EXISTS ${trigger}()`);
      await sql.end();
    }
    // With its checkpoints writable again, the thread goes on from what was durable.
    const next = await rt.client.runs.wait(thread.thread_id, 'echo', { input: hi('again') });
    expect(contents(next)).toEqual(['kept', 'echo: kept', 'again', 'echo: again']);
  });
});

describe('run errors', () => {
  it('ends a stateful run whose input the graph rejects, instead of leaving it running', async () => {
    const thread = await rt.client.threads.create();
    const res = await rt.http(`/threads/${thread.thread_id}/runs/wait`, {
      method: 'POST',
      json: { assistant_id: 'echo', input: { messages: [{ bogus: true }] } },
      signal: AbortSignal.timeout(15_000),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toHaveProperty('__error__');
    const [run] = await rt.client.runs.list(thread.thread_id);
    expect(run?.status).toBe('error');
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('error');
    // The thread stays usable.
    const next = await rt.client.runs.wait(thread.thread_id, 'echo', { input: hi('again') });
    expect(contents(next).at(-1)).toBe('echo: again');
  });

  it('answers bad input with the right status and detail', async () => {
    const thread = await rt.client.threads.create();
    const unknown = await rt.http(`/threads/${thread.thread_id}/runs`, {
      method: 'POST',
      json: { assistant_id: 'nope' },
    });
    // Neither a UUID nor a graph: no such assistant, as the official JS server answers.
    expect(unknown.status).toBe(404);
    const missing = await rt.http(`/threads/${thread.thread_id}/runs`, {
      method: 'POST',
      json: { assistant_id: crypto.randomUUID() },
    });
    expect(missing.status).toBe(404);
    const malformed = await rt.http('/threads/not-a-uuid/runs', {
      method: 'POST',
      json: { assistant_id: 'echo' },
    });
    expect(malformed.status).toBe(422);
    const badMode = await rt.http(`/threads/${thread.thread_id}/runs`, {
      method: 'POST',
      json: { assistant_id: 'echo', stream_mode: 'everything' },
    });
    expect(badMode.status).toBe(422);
    const resume = await rt.http('/runs/wait', {
      method: 'POST',
      json: { assistant_id: 'interrupt', command: { resume: 'x' } },
    });
    expect(resume.status).toBe(400);
    expect(await resume.json()).toEqual({ detail: 'You must provide a thread_id when resuming.' });
    const noThread = await rt.http(`/threads/${crypto.randomUUID()}/runs`, {
      method: 'POST',
      json: { assistant_id: 'echo' },
    });
    expect(noThread.status).toBe(404);
  });

  it('leaves no run and no event behind for a thread that does not exist', async () => {
    const sql = new pg.Client({ connectionString: rt.db.url });
    await sql.connect();
    try {
      const count = async () =>
        (
          await sql.query<{ runs: number; events: number }>(
            'SELECT (SELECT count(*)::int FROM runs) AS runs, (SELECT count(*)::int FROM run_event_batches) AS events',
          )
        ).rows[0];
      const missing = crypto.randomUUID();
      const before = await count();
      for (const strategy of ['enqueue', 'reject', 'interrupt']) {
        const res = await rt.http(`/threads/${missing}/runs`, {
          method: 'POST',
          json: { assistant_id: 'echo', multitask_strategy: strategy },
        });
        expect(res.status).toBe(404);
        expect(await res.json()).toEqual({ detail: `Thread with ID ${missing} not found` });
      }
      expect(await count()).toEqual(before);
      // if_not_exists creates it, through the same first attempt.
      const created = await rt.client.runs.wait(missing, 'echo', {
        input: hi('made'),
        ifNotExists: 'create',
      });
      expect(contents(created)).toEqual(['made', 'echo: made']);
    } finally {
      await sql.end();
    }
  });
});
