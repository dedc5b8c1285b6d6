// Every stream mode through the official JS SDK, in the shapes the Agent Server sends: legacy
// `messages` (metadata, partial, complete), `events`, `checkpoints`, `tasks`, `debug`, `custom`,
// and subgraph namespaces.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';

const rt = useRuntime({ env: { RESUMABLE_STREAM_TTL_SECONDS: '2' } });

type Part = { event: string; data: unknown };
type Msg = { type: string; content: string; id: string };
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });

async function collect(
  threadId: string | null,
  graph: string,
  options: Parameters<typeof rt.client.runs.stream>[2],
): Promise<Part[]> {
  const parts: Part[] = [];
  const stream =
    threadId === null
      ? rt.client.runs.stream(null, graph, options)
      : rt.client.runs.stream(threadId, graph, options);
  for await (const part of stream) parts.push(part);
  return parts;
}
const named = (parts: Part[], event: string) => parts.filter((p) => p.event === event);

describe('legacy messages mode', () => {
  it('sends metadata once per message, accumulated partials, then the complete messages', async () => {
    const parts = await collect(null, 'agent', {
      input: hi('hello there'),
      streamMode: 'messages',
    });
    const metadata = named(parts, 'messages/metadata');
    const partials = named(parts, 'messages/partial').map((p) => (p.data as Msg[])[0]!);
    expect(metadata).toHaveLength(1);
    const [id] = Object.keys(metadata[0]!.data as object);
    expect(partials.length).toBeGreaterThan(2);
    expect(partials.every((m) => m.id === id)).toBe(true);
    // Each partial holds everything streamed so far, so contents only ever grow.
    const lengths = partials.map((m) => m.content.length);
    expect(lengths).toEqual([...lengths].sort((a, b) => a - b));
    expect(partials.at(-1)!.content).toBe('You said: hello there');
    const complete = named(parts, 'messages/complete').flatMap((p) => p.data as Msg[]);
    expect(complete.map((m) => [m.type, m.content])).toEqual([
      ['human', 'hello there'],
      ['ai', 'You said: hello there'],
    ]);
    expect(parts.map((p) => p.event)).not.toContain('values');
  });
});

describe('events mode', () => {
  it('forwards LangChain streamEvents v2 objects, including chat model tokens', async () => {
    const parts = await collect(null, 'agent', { input: hi('hi'), streamMode: 'events' });
    const events = named(parts, 'events').map(
      (p) => p.data as { event: string; name: string; run_id: string; metadata: object },
    );
    const kinds = new Set(events.map((e) => e.event));
    for (const kind of ['on_chain_start', 'on_chain_end', 'on_chat_model_stream'])
      expect(kinds).toContain(kind);
    for (const e of events) {
      expect(typeof e.name).toBe('string');
      expect(typeof e.run_id).toBe('string');
      expect(e.metadata).toBeTypeOf('object');
    }
    const runId = (parts[0]!.data as { run_id: string }).run_id;
    const root = events.find((e) => e.event === 'on_chain_start' && e.run_id === runId);
    expect(root).toBeDefined();
  });
});

describe('checkpoint, task and debug modes', () => {
  it('sends checkpoints in the API shape, without internal configurable keys', async () => {
    const thread = await rt.client.threads.create();
    const parts = await collect(thread.thread_id, 'echo', {
      input: hi('save me'),
      streamMode: ['checkpoints', 'tasks', 'debug'],
    });
    type Checkpoint = {
      config: { configurable: Record<string, unknown> };
      parent_config: { configurable: Record<string, unknown> } | null;
      checkpoint: { thread_id: string; checkpoint_id: string };
      parent_checkpoint: { checkpoint_id: string } | null;
      metadata: { source: string; step: number };
      values: { messages?: Msg[] };
      next: string[];
      tasks: { id: string; name: string }[];
    };
    const checkpoints = named(parts, 'checkpoints').map((p) => p.data as Checkpoint);
    expect(checkpoints.map((c) => [c.metadata.source, c.metadata.step])).toEqual([
      ['input', -1],
      ['loop', 0],
      ['loop', 1],
    ]);
    expect(checkpoints[0]!.parent_config).toBeNull();
    for (const [i, c] of checkpoints.entries()) {
      expect(c.checkpoint.thread_id).toBe(thread.thread_id);
      expect(c.config.configurable.checkpoint_id).toBe(c.checkpoint.checkpoint_id);
      expect(Object.keys(c.config.configurable).filter((k) => k.startsWith('__'))).toEqual([]);
      if (i > 0)
        expect(c.parent_checkpoint?.checkpoint_id).toBe(
          checkpoints[i - 1]!.checkpoint.checkpoint_id,
        );
    }
    expect(checkpoints[1]!.next).toEqual(['echo']);
    expect(checkpoints[2]!.values.messages?.at(-1)?.content).toBe('echo: save me');
    const history = await rt.client.threads.getHistory(thread.thread_id);
    expect(history[0]!.checkpoint.checkpoint_id).toBe(checkpoints[2]!.checkpoint.checkpoint_id);

    const tasks = named(parts, 'tasks').map((p) => p.data as Record<string, unknown>);
    expect(tasks).toHaveLength(2);
    expect(tasks[0]).toMatchObject({ name: 'echo', triggers: ['branch:to:echo'], interrupts: [] });
    expect(tasks[1]).toMatchObject({ id: tasks[0]!.id, name: 'echo', interrupts: [] });
    expect((tasks[1]!.result as { messages: Msg[] }).messages[0]!.content).toBe('echo: save me');

    const debug = named(parts, 'debug').map((p) => p.data as { type: string; payload: object });
    expect(debug.map((d) => d.type)).toEqual([
      'checkpoint',
      'checkpoint',
      'task',
      'task_result',
      'checkpoint',
    ]);
    expect(debug[0]!.payload).toMatchObject({ checkpoint: { thread_id: thread.thread_id } });
  });
});

describe('custom events and subgraphs', () => {
  it("streams the graph's own writer events", async () => {
    const parts = await collect(null, 'nested', { input: hi('go'), streamMode: 'custom' });
    expect(named(parts, 'custom').map((p) => p.data)).toEqual([
      { progress: 50 },
      { progress: 100 },
    ]);
  });

  it('names subgraph events by namespace when stream_subgraphs is on, and only then', async () => {
    const flat = await collect(null, 'nested', { input: hi('go'), streamMode: 'updates' });
    expect(new Set(flat.map((p) => p.event))).toEqual(new Set(['metadata', 'updates']));

    const nested = await collect(null, 'nested', {
      input: hi('go'),
      streamMode: ['updates', 'checkpoints'],
      streamSubgraphs: true,
    });
    const names = nested.map((p) => p.event);
    expect(names).toContain('updates');
    const inner = names.filter((n) => n.startsWith('updates|'));
    expect(inner.length).toBeGreaterThan(0);
    expect(inner.every((n) => /^updates\|inner:[0-9a-f-]{36}$/.test(n))).toBe(true);
    expect(names.some((n) => /^checkpoints\|inner:/.test(n))).toBe(true);
    const think = nested.find((p) => p.event.startsWith('updates|'))!.data as {
      think: { messages: Msg[] };
    };
    expect(think.think.messages[0]!.content).toBe('thought about 1 messages');
  });
});

describe('thread stream', () => {
  type Framed = Part & { id?: string };
  async function* threadStream(threadId: string, headers: Record<string, string> = {}, query = '') {
    const res = await rt.http(`/threads/${threadId}/stream${query}`, { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = Object.fromEntries(
          frame
            .split('\n')
            .filter((l) => !l.startsWith(':'))
            .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]),
        ) as Record<string, string>;
        if (fields.event)
          yield {
            event: fields.event,
            data: JSON.parse(fields.data ?? 'null'),
            id: fields.id,
          } as Framed;
      }
    }
  }
  async function take(source: AsyncGenerator<Framed>, until: (seen: Framed[]) => boolean) {
    const seen: Framed[] = [];
    for await (const part of source) {
      seen.push(part);
      if (until(seen)) break;
    }
    await source.return(undefined);
    return seen;
  }
  const runsSeen = (seen: Framed[]) => seen.filter((p) => p.event === 'metadata').length;

  it('follows every run on the thread, in order, and resumes from Last-Event-ID', async () => {
    const thread = await rt.client.threads.create();
    const live = take(
      threadStream(thread.thread_id),
      (seen) =>
        runsSeen(seen) === 2 &&
        seen.at(-1)!.event === 'values' &&
        (seen.at(-1)!.data as { messages: Msg[] }).messages.length === 4,
    );
    await new Promise((r) => setTimeout(r, 300));
    const first = await rt.client.runs.create(thread.thread_id, 'echo', { input: hi('one') });
    const second = await rt.client.runs.create(thread.thread_id, 'echo', { input: hi('two') });
    const seen = await live;
    const metadata = seen
      .filter((p) => p.event === 'metadata')
      .map((p) => p.data as { run_id: string });
    expect(metadata.map((m) => m.run_id)).toEqual([first.run_id, second.run_id]);
    expect(seen.every((p) => /^\d+-\d+$/.test(p.id ?? ''))).toBe(true);
    expect(new Set(seen.map((p) => p.id)).size).toBe(seen.length);

    // Replay everything, then resume just after the second run's metadata event.
    const replay = await take(
      threadStream(thread.thread_id, { 'Last-Event-ID': '-' }),
      (s) => s.length === seen.length,
    );
    expect(replay.map((p) => p.id)).toEqual(seen.map((p) => p.id));
    const secondStart = seen.findIndex(
      (p) => p.event === 'metadata' && (p.data as { run_id: string }).run_id === second.run_id,
    );
    const resumed = await take(
      threadStream(thread.thread_id, { 'Last-Event-ID': seen[secondStart]!.id! }),
      (s) => s.length === seen.length - secondStart - 1,
    );
    expect(resumed.map((p) => p.id)).toEqual(seen.slice(secondStart + 1).map((p) => p.id));
  });

  it('follows a run whose insert began before the stream opened and committed after', async () => {
    // The stream of a thread without an active run started at the database's "now": a run
    // whose insert had begun earlier (its created_at) but committed later was never read.
    // Here the run's insert is held on the thread's row lock until the stream has looked once.
    const thread = await rt.client.threads.create();
    const locker = new pg.Client({ connectionString: rt.db.url });
    locker.on('error', () => undefined);
    await locker.connect();
    const until = async (sql: string) => {
      for (;;) {
        // Activity is read afresh: within a transaction it is a snapshot otherwise.
        await locker.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await locker.query<{ n: number }>(sql);
        if (rows[0]!.n > 0) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE', [
        thread.thread_id,
      ]);
      const created = rt.client.runs.create(thread.thread_id, 'echo', {
        input: hi('late'),
        multitaskStrategy: 'enqueue',
      });
      await until(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))`,
      );
      const live = take(threadStream(thread.thread_id), (seen) =>
        seen.some(
          (p) => p.event === 'values' && (p.data as { messages: Msg[] }).messages.length === 2,
        ),
      );
      // The stream has read where it starts and looked for a run (its next-run query ran).
      await until(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE query LIKE '%AS thread, r.run_id, r.created_us%' AND pid <> pg_backend_pid()`,
      );
      await locker.query('COMMIT');
      await created;
      const outcome = await Promise.race([
        live.then(() => 'followed'),
        new Promise<string>((r) => setTimeout(() => r('stalled'), 20_000)),
      ]);
      expect(outcome).toBe('followed');
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
  });

  it('passes only run starts and errors in lifecycle mode, and refuses bad modes and ids', async () => {
    const thread = await rt.client.threads.create();
    await rt.client.runs.wait(thread.thread_id, 'echo', { input: hi('x') });
    const lifecycle = await take(
      threadStream(thread.thread_id, { 'Last-Event-ID': '-' }, '?stream_mode=lifecycle'),
      (s) => s.length === 1,
    );
    expect(lifecycle.map((p) => p.event)).toEqual(['metadata']);
    const viaSdk: string[] = [];
    const controller = new AbortController();
    for await (const part of rt.client.threads.joinStream(thread.thread_id, {
      lastEventId: '-',
      streamMode: 'state_update',
      signal: controller.signal,
    })) {
      viaSdk.push(part.event);
      controller.abort();
    }
    expect(viaSdk).toEqual(['values']);

    expect(
      (await rt.http(`/threads/${thread.thread_id}/stream?stream_mode=everything`)).status,
    ).toBe(422);
    const badId = await rt.http(`/threads/${thread.thread_id}/stream`, {
      headers: { 'Last-Event-ID': 'nope' },
    });
    expect(badId.status).toBe(422);
    expect(JSON.stringify(await badId.json())).toContain('Last-Event-ID');
    // Microseconds past PostgreSQL's bigint cannot be an id either (they reached the database).
    const hugeId = await rt.http(`/threads/${thread.thread_id}/stream`, {
      headers: { 'Last-Event-ID': '9999999999999999999-1' },
    });
    expect(hugeId.status).toBe(422);
    expect(JSON.stringify(await hugeId.json())).toContain('Last-Event-ID');
    expect((await rt.http(`/threads/${crypto.randomUUID()}/stream`)).status).toBe(404);
  });
});

describe('joining a run with Last-Event-ID', () => {
  it('past the last event, and past the largest event number, replays nothing and ends', async () => {
    const thread = await rt.client.threads.create();
    const run = await rt.client.runs.create(thread.thread_id, 'echo', {
      input: hi('x'),
      streamResumable: true,
    });
    await rt.client.runs.join(thread.thread_id, run.run_id);
    const join = (id: string) =>
      rt.http(`/threads/${thread.thread_id}/runs/${run.run_id}/stream`, {
        headers: { 'Last-Event-ID': id },
      });
    const all = await (await join('-1')).text();
    expect(all).toContain('event: values');
    for (const id of ['2147483647', '2147483648', '99999999999999999999']) {
      const res = await join(id);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text, id).not.toContain('event: error');
      expect(text, id).not.toContain('event: values');
    }
  });
});

describe('event retention', () => {
  it("keeps a finished run's events for joins only as long as RESUMABLE_STREAM_TTL_SECONDS", async () => {
    const thread = await rt.client.threads.create();
    const run = await rt.client.runs.create(thread.thread_id, 'echo', {
      input: hi('keep me'),
      streamResumable: true,
    });
    await rt.client.runs.join(thread.thread_id, run.run_id);
    const events = async () => {
      const names: string[] = [];
      for await (const part of rt.client.runs.joinStream(thread.thread_id, run.run_id, {
        lastEventId: '-1',
      }))
        names.push(part.event);
      return names;
    };
    expect(await events()).toEqual(['metadata', 'values', 'values']);
    // Retention 2 s, swept every second: well gone after 5 s, and a join then ends at once.
    await new Promise((r) => setTimeout(r, 5000));
    const started = Date.now();
    expect(await events()).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('durability', () => {
  it('writes only the final checkpoint with durability exit (or checkpoint_during false)', async () => {
    const history = async (extra: Record<string, unknown>) => {
      const thread = await rt.client.threads.create();
      const res = await rt.http(`/threads/${thread.thread_id}/runs/wait`, {
        method: 'POST',
        json: { assistant_id: 'slow', input: hi('keep'), ...extra },
      });
      expect(res.status).toBe(200);
      const states = await rt.client.threads.getHistory(thread.thread_id, { limit: 20 });
      const last = states[0]!.values as { messages: Msg[] };
      expect(last.messages.map((m) => m.content)).toEqual([
        'keep',
        'first: keep',
        'second: first: keep',
      ]);
      return states.length;
    };
    const everyStep = await history({});
    expect(everyStep).toBe(4); // input, before first, before second, final
    expect(await history({ durability: 'exit' })).toBeLessThan(everyStep);
    expect(await history({ checkpoint_during: false })).toBeLessThan(everyStep);
    expect(await history({ durability: 'sync' })).toBe(everyStep);
  });
});
