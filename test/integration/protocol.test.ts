// The thread protocol (`/threads/{id}/commands`, `/threads/{id}/stream/events` over SSE and
// WebSocket) through the official JS SDK's protocol client (`client.threads.stream`), against two
// server processes on one database: every channel, interrupts answered with `input.respond`,
// `state.get`, subgraph namespaces and `agent.getTree`, replay with `since` on the other replica,
// cancel, and the documented errors for bad input.
import { randomUUID } from 'node:crypto';
import { Client } from '@langchain/langgraph-sdk-protocol';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { postCommand } from '../support/protocol.js';
import { REPO_ROOT, startServer, type RunningServer } from '../support/server.js';

const CONFIG = `${REPO_ROOT}/test/fixtures/protocol/langgraph.json`;

interface Event {
  type: 'event';
  event_id: string;
  seq: number;
  method: string;
  params: { namespace: string[]; node?: string; data: Record<string, unknown> };
}

let db: TestDatabase;
let a: RunningServer;
let b: RunningServer;
beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  // One after the other: two start-ups at once on a loaded machine miss the /ok deadline.
  a = await startServer({ databaseUrl: db.url, config: CONFIG });
  b = await startServer({ databaseUrl: db.url, config: CONFIG });
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.drop();
});

const ALL = [
  'lifecycle',
  'values',
  'updates',
  'messages',
  'tools',
  'custom',
  'checkpoints',
  'tasks',
  'input',
] as const;
const isRootEnd = (e: Event) =>
  e.method === 'lifecycle' &&
  e.params.namespace.length === 0 &&
  ['completed', 'failed', 'interrupted'].includes(String(e.params.data.event));

/** Reads SSE frames of `POST /threads/{id}/stream/events` until `until` says stop. */
async function sse(
  url: string,
  threadId: string,
  body: Record<string, unknown>,
  until: (events: Event[]) => boolean,
): Promise<Event[]> {
  const controller = new AbortController();
  const res = await fetch(`${url}/threads/${threadId}/stream/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const events: Event[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split('\n').find((l) => l.startsWith('data: '));
        const id = frame.split('\n').find((l) => l.startsWith('id: '));
        if (!data) continue;
        const event = JSON.parse(data.slice(6)) as Event;
        expect(id).toBe(`id: ${event.event_id}`);
        events.push(event);
      }
      if (until(events)) break;
    }
  } finally {
    controller.abort();
  }
  return events;
}

/** A WebSocket on the thread's event stream, open. */
async function openSocket(url: string, threadId: string): Promise<WebSocket> {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/threads/${threadId}/stream/events`);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return socket;
}

const command = postCommand;

describe('thread protocol through the official JS SDK', () => {
  it('streams every channel over SSE, with subgraph namespaces, and resumes an interrupt with input.respond', async () => {
    const client = new Client({ apiUrl: a.url, apiKey: null });
    const thread = client.threads.stream({ assistantId: 'agent' });
    const all = await thread.subscribe({ channels: [...ALL] });
    const events: Event[] = [];
    const collected = (async () => {
      for await (const e of all) {
        events.push(e as unknown as Event);
        if (isRootEnd(e as unknown as Event)) break;
      }
    })();
    const { run_id } = await thread.run.start({
      input: { messages: [{ role: 'user', content: 'add' }] },
    });
    expect(run_id).toMatch(/^[0-9a-f-]{36}$/);
    await collected;

    const methods = new Set(events.map((e) => e.method));
    for (const m of [
      'lifecycle',
      'values',
      'updates',
      'messages',
      'tools',
      'custom',
      'checkpoints',
      'tasks',
      'input.requested',
    ])
      expect(methods, m).toContain(m);
    // Ids are the thread-wide sequence numbers, increasing.
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(events.every((e) => e.event_id === String(e.seq))).toBe(true);
    // Root lifecycle: running first, interrupted last (the subgraph asked a question).
    expect(events[0]).toMatchObject({
      method: 'lifecycle',
      params: { namespace: [], data: { event: 'running', graph_name: 'agent' } },
    });
    expect(events.at(-1)!.params.data.event).toBe('interrupted');
    // The model's message streams token by token; the tool call is announced and finished.
    const deltas = events.filter(
      (e) => e.method === 'messages' && e.params.data.event === 'content-block-delta',
    );
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas[0]!.params.namespace[0]).toMatch(/^model:/);
    const tools = events.filter((e) => e.method === 'tools').map((e) => e.params.data);
    expect(tools[0]).toMatchObject({
      event: 'tool-started',
      tool_call_id: 'call_add',
      tool_name: 'add',
    });
    expect(tools.at(-1)).toMatchObject({ event: 'tool-finished', tool_call_id: 'call_add' });
    // Updates carry the node's delta; values are the state in the API's message shape.
    const update = events.find((e) => e.method === 'updates' && e.params.node === 'model')!;
    expect(update.params.data).toHaveProperty('messages');
    const lastValues = events
      .filter((e) => e.method === 'values' && !e.params.namespace.length)
      .at(-1)!;
    expect((lastValues.params.data.messages as { type: string }[]).map((m) => m.type)).toEqual([
      'human',
      'ai',
      'tool',
    ]);
    expect(lastValues.params.data).not.toHaveProperty('__interrupt__');
    // The subgraph's events carry its namespace; the question comes from inside it.
    const asked = events.find((e) => e.method === 'input.requested')!;
    expect(asked.params.namespace[0]).toMatch(/^review:/);
    expect(asked.params.data.payload).toEqual({ question: 'Approve?' });
    const custom = events
      .filter((e) => e.method === 'custom')
      .map((e) => [e.params.namespace.length, e.params.data.step]);
    expect(custom).toEqual([
      [0, 'tool'],
      [1, 'asking'],
    ]);
    expect(
      events.some((e) => e.method === 'checkpoints' && typeof e.params.data.id === 'string'),
    ).toBe(true);
    expect(thread.interrupted).toBe(true);
    expect(thread.interrupts.map((i) => i.interruptId)).toEqual([asked.params.data.interrupt_id]);

    // The tree of the run: the root and its three nodes' namespaces.
    const { tree } = (await thread.agent.getTree()) as {
      tree: { graph_name: string; status: string; children?: { graph_name: string }[] };
    };
    expect(tree.graph_name).toBe('agent');
    expect(tree.status).toBe('interrupted');
    expect(tree.children!.map((c) => c.graph_name)).toEqual(['model', 'tools', 'review']);

    // The thread is an ordinary thread: interrupted, with its run in the runs list.
    const rest = new Client({ apiUrl: a.url, apiKey: null });
    expect((await rest.threads.get(thread.threadId)).status).toBe('interrupted');
    expect((await rest.runs.list(thread.threadId)).map((r) => r.run_id)).toEqual([run_id]);

    // input.respond resumes: the subgraph's answer lands in the state.
    const resumed = await thread.subscribe({ channels: ['lifecycle', 'values'] });
    await thread.input.respond({
      interrupt_id: String(asked.params.data.interrupt_id),
      response: 'yes',
      namespace: asked.params.namespace,
    });
    const firstEnd = events.at(-1)!.seq;
    for await (const e of resumed)
      // A stream without `since` replays the first run too: its end is not this one's.
      if (isRootEnd(e as unknown as Event) && (e as unknown as Event).seq > firstEnd) {
        expect((e as unknown as Event).params.data.event).toBe('completed');
        break;
      }
    const state = await thread.state.get({ namespace: [], keys: ['answer'] });
    expect(state.values).toEqual({ answer: 'yes' });
    expect(state.checkpoint?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await rest.threads.get(thread.threadId)).status).toBe('idle');
    expect(await rest.runs.list(thread.threadId)).toHaveLength(2);
    await thread.close();
  });

  it("answers a subscription with its headers at once, before the thread's first event", async () => {
    // Before the first heartbeat (5 s): the SDK's subscribe waits for them, and only then starts
    // a new thread's first run.
    const controller = new AbortController();
    let started = performance.now();
    const res = await fetch(`${a.url}/threads/${randomUUID()}/stream/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ channels: ['lifecycle'] }),
      signal: controller.signal,
    });
    const answered = performance.now() - started;
    controller.abort();
    expect(res.status).toBe(200);
    expect(answered).toBeLessThan(2_000);

    const client = new Client({ apiUrl: a.url, apiKey: null });
    const thread = client.threads.stream({ assistantId: 'agent' });
    started = performance.now();
    const all = await thread.subscribe({ channels: ['lifecycle'] });
    expect(performance.now() - started).toBeLessThan(2_000);
    await all.unsubscribe();
    await thread.close();
  });

  it('filters by channel, namespace and depth', async () => {
    const threadId = randomUUID();
    const start = await command(a.url, threadId, {
      id: 1,
      method: 'run.start',
      params: { assistant_id: 'agent', input: { messages: [] } },
    });
    expect(start.body).toMatchObject({ type: 'success', id: 1, meta: { thread_id: threadId } });
    const rootOnly = await sse(
      a.url,
      threadId,
      { channels: ['lifecycle', 'custom'], depth: 0 },
      (e) => e.some(isRootEnd),
    );
    expect(rootOnly.every((e) => e.params.namespace.length === 0)).toBe(true);
    expect(rootOnly.filter((e) => e.method === 'custom')).toHaveLength(1);
    const review = await sse(
      a.url,
      threadId,
      { channels: ['custom:progress', 'input'], namespaces: [['review']] },
      (e) => e.some((x) => x.method === 'input.requested'),
    );
    expect(review.map((e) => e.method)).toEqual(['custom', 'input.requested']);
    expect(review.every((e) => e.params.namespace[0]!.startsWith('review:'))).toBe(true);
    const none = await sse(a.url, threadId, { channels: [] }, () => true).catch(() => []);
    expect(none).toEqual([]);
  });

  it('streams over a WebSocket through the SDK, and carries commands on it', async () => {
    const client = new Client({ apiUrl: a.url, apiKey: null });
    // Node 20 has no global WebSocket: the SDK takes a factory.
    const thread = client.threads.stream({
      assistantId: 'agent',
      transport: 'websocket',
      webSocketFactory: (url: string) => new WebSocket(url) as unknown as globalThis.WebSocket,
    });
    await thread.run.start({ input: { messages: [{ role: 'user', content: 'ws' }] } });
    const messages: string[] = [];
    for await (const message of thread.messages) messages.push(await message.text);
    expect(messages).toContain('Adding two numbers.');
    const sub = await thread.subscribe({ channels: ['lifecycle', 'input'] });
    for await (const e of sub) if (isRootEnd(e as unknown as Event)) break;
    expect(thread.interrupted).toBe(true);
    const { tree } = (await thread.agent.getTree()) as { tree: { children?: unknown[] } };
    expect(tree.children).toHaveLength(3);
    const [pending] = thread.interrupts;
    await thread.input.respond({
      interrupt_id: pending!.interruptId,
      response: 'ok',
      namespace: pending!.namespace,
    });
    // The resumed run's own end (the subscription's replay starts at the newest run).
    const resumed = await thread.subscribe({ channels: ['lifecycle'] });
    for await (const e of resumed)
      if (isRootEnd(e as unknown as Event)) {
        expect((e as unknown as Event).params.data.event).toBe('completed');
        break;
      }
    const state = (await thread.state.get({ namespace: [], keys: ['answer'] })) as {
      values: { answer?: string };
    };
    expect(state.values.answer).toBe('ok');
    await thread.close();
  });

  it('replays with `since` on the other replica: nothing missed, nothing repeated', async () => {
    const threadId = randomUUID();
    await command(a.url, threadId, {
      id: 1,
      method: 'run.start',
      params: { assistant_id: 'slow', input: { ticks: 20 } },
    });
    // Read part of the run through A, then "reconnect" to B with the last seq seen.
    const first = await sse(
      a.url,
      threadId,
      { channels: ['lifecycle', 'custom'] },
      (e) => e.filter((x) => x.method === 'custom').length >= 5,
    );
    const since = first.at(-1)!.seq;
    const rest = await sse(b.url, threadId, { channels: ['lifecycle', 'custom'], since }, (e) =>
      e.some(isRootEnd),
    );
    const ticks = [...first, ...rest]
      .filter((e) => e.method === 'custom')
      .map((e) => e.params.data.payload as { tick: number });
    expect(ticks.map((t) => t.tick)).toEqual([...Array(20).keys()]);
    expect(rest.every((e) => e.seq > since)).toBe(true);
    // The whole stream again from B, without since: the same ids as A gave.
    const again = await sse(b.url, threadId, { channels: ['lifecycle', 'custom'] }, (e) =>
      e.some(isRootEnd),
    );
    expect(again.map((e) => e.event_id)).toEqual([...first, ...rest].map((e) => e.event_id));
  });

  it('replays with `since` over a WebSocket subscription on the other replica', async () => {
    const threadId = randomUUID();
    await command(a.url, threadId, {
      id: 1,
      method: 'run.start',
      params: { assistant_id: 'slow', input: { ticks: 6 } },
    });
    const first = await sse(
      a.url,
      threadId,
      { channels: ['custom', 'lifecycle'] },
      (e) => e.filter((x) => x.method === 'custom').length >= 3,
    );
    const since = first.at(-1)!.seq;
    const socket = await openSocket(b.url, threadId);
    const frames: Record<string, unknown>[] = [];
    const done = new Promise<void>((resolve) =>
      socket.on('message', (raw) => {
        const frame = JSON.parse((raw as Buffer).toString()) as Record<string, unknown>;
        frames.push(frame);
        if (frame.type === 'event' && isRootEnd(frame as unknown as Event)) resolve();
      }),
    );
    socket.send(
      JSON.stringify({
        id: 1,
        method: 'subscription.subscribe',
        params: { channels: ['custom', 'lifecycle'], since },
      }),
    );
    await done;
    socket.close();
    expect(frames[0]).toMatchObject({ type: 'success', id: 1 });
    const ticks = frames
      .filter((f) => f.method === 'custom')
      .map((f) => ((f as unknown as Event).params.data.payload as { tick: number }).tick);
    expect(ticks).toEqual([3, 4, 5]);
  });

  it('a WebSocket subscription made while run.start is still writing its run sees that run', async () => {
    // issue 24: the subscription started "now" when the thread had no run yet, and a run whose
    // insert began before that but committed after was never read: the socket stalled (2 of
    // ~700 runs in bench/protocol, subscribe and run.start sent back to back). Here the run's
    // insert is held on the thread's row lock until the subscription has been answered.
    const threadId = randomUUID();
    const created = await fetch(`${a.url}/threads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ thread_id: threadId }),
    });
    expect(created.status).toBe(200);
    const locker = new pg.Client({ connectionString: db.url });
    locker.on('error', () => undefined);
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE', [threadId]);
      const socket = await openSocket(a.url, threadId);
      const frames: Record<string, unknown>[] = [];
      let subscribed!: () => void;
      const answered = new Promise<void>((resolve) => (subscribed = resolve));
      const ended = new Promise<'ended'>((resolve) =>
        socket.on('message', (raw) => {
          const frame = JSON.parse((raw as Buffer).toString()) as Record<string, unknown>;
          frames.push(frame);
          if (frame.type === 'success' && frame.id === 2) subscribed();
          if (frame.type === 'event' && isRootEnd(frame as unknown as Event)) resolve('ended');
        }),
      );
      socket.send(
        JSON.stringify({
          id: 1,
          method: 'run.start',
          params: { assistant_id: 'burst', input: { n: 3 } },
        }),
      );
      // The run's insert has begun and waits for the thread's row.
      for (;;) {
        const { rows } = await locker.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
           WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))`,
        );
        if (rows[0]!.waiting > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      socket.send(
        JSON.stringify({
          id: 2,
          method: 'subscription.subscribe',
          params: { channels: ['custom', 'lifecycle'] },
        }),
      );
      await answered;
      await locker.query('COMMIT');
      const outcome = await Promise.race([
        ended,
        new Promise<'stalled'>((r) => setTimeout(() => r('stalled'), 20_000)),
      ]);
      socket.close();
      expect(outcome).toBe('ended');
      const custom = frames.filter((f) => f.method === 'custom');
      expect(custom).toHaveLength(3);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
  });

  it('follows runs started on the other replica one after another, each as it comes', async () => {
    // A reader asks for the thread's next run only when it hears of one (or at its 5 s idle
    // poll): every run here, started on replica a, must reach the subscription on replica b
    // through the notification, well before that poll.
    const threadId = randomUUID();
    const socket = await openSocket(b.url, threadId);
    const ends: number[] = [];
    const customs: unknown[] = [];
    let subscribed!: () => void;
    const answered = new Promise<void>((resolve) => (subscribed = resolve));
    socket.on('message', (raw) => {
      const frame = JSON.parse((raw as Buffer).toString()) as Record<string, unknown>;
      if (frame.type === 'success' && frame.id === 1) subscribed();
      if (frame.method === 'custom') customs.push((frame as unknown as Event).params.data.payload);
      if (frame.type === 'event' && isRootEnd(frame as unknown as Event)) ends.push(Date.now());
    });
    socket.send(
      JSON.stringify({
        id: 1,
        method: 'subscription.subscribe',
        params: { channels: ['custom', 'lifecycle'] },
      }),
    );
    await answered;
    const endOf = async (count: number) => {
      const deadline = Date.now() + 20_000;
      while (ends.length < count && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 10));
      expect(ends.length).toBeGreaterThanOrEqual(count);
      return ends[count - 1]!;
    };
    try {
      const start = (ticks: number) =>
        command(a.url, threadId, {
          id: 1,
          method: 'run.start',
          params: { assistant_id: 'slow', input: { ticks } },
        });
      // One after the other: each starts once the one before has ended.
      for (let i = 1; i <= 3; i++) {
        const sent = Date.now();
        expect((await start(1)).status).toBe(200);
        expect((await endOf(i)) - sent).toBeLessThan(3000);
      }
      // Two at once: the second is queued behind the first, created while the first runs.
      const sent = Date.now();
      expect((await start(2)).status).toBe(200);
      expect((await start(1)).status).toBe(200);
      expect((await endOf(5)) - sent).toBeLessThan(4000);
    } finally {
      socket.close();
    }
    expect(customs).toEqual([0, 0, 0, 0, 1, 0].map((tick) => ({ tick })));
  });

  it('cancels a protocol run through the runs API: the stream ends interrupted', async () => {
    const threadId = randomUUID();
    const start = await command(a.url, threadId, {
      id: 1,
      method: 'run.start',
      params: { assistant_id: 'slow', input: { ticks: 400 } },
    });
    const runId = (start.body.result as { run_id: string }).run_id;
    let cancelled = false;
    const events = await sse(b.url, threadId, { channels: ['lifecycle', 'custom'] }, (e) => {
      if (!cancelled && e.filter((x) => x.method === 'custom').length >= 2) {
        cancelled = true;
        void fetch(`${b.url}/threads/${threadId}/runs/${runId}/cancel`, { method: 'POST' });
      }
      return e.some(isRootEnd);
    });
    expect(events.at(-1)!.params.data.event).toBe('interrupted');
    expect(events.filter((e) => e.method === 'custom').length).toBeLessThan(400);
    const run = await new Client({ apiUrl: a.url, apiKey: null }).runs.get(threadId, runId);
    expect(run.status).toBe('interrupted');
  });

  it('answers bad commands with the documented error envelopes', async () => {
    const threadId = randomUUID();
    const cases: [unknown, string][] = [
      [{ id: 1, method: 'run.start', params: {} }, 'invalid_argument'],
      [{ id: 2, method: 'input.respond', params: { response: 'x' } }, 'invalid_argument'],
      [{ id: 3, method: 'input.respond', params: { responses: [] } }, 'invalid_argument'],
      [
        { id: 4, method: 'input.respond', params: { interrupt_id: 'i', response: 'x' } },
        'no_such_run',
      ],
      [{ id: 5, method: 'subscription.subscribe', params: { channels: [] } }, 'invalid_argument'],
      [
        { id: 6, method: 'subscription.subscribe', params: { channels: ['nope'] } },
        'invalid_argument',
      ],
      [
        { id: 7, method: 'subscription.unsubscribe', params: { subscription_id: 'x' } },
        'no_such_subscription',
      ],
      [{ id: 8, method: 'subscription.reconnect', params: {} }, 'not_supported'],
      [{ id: 9, method: 'agent.getTree', params: {} }, 'no_such_run'],
      [{ id: 10, method: 'state.fork', params: {} }, 'unknown_command'],
      // A goto or update of a shape LangGraph cannot take (see official-behaviours.test.ts).
      [
        { id: 14, method: 'input.respond', params: { interrupt_id: 'i', response: 1, goto: 5 } },
        'invalid_argument',
      ],
      [
        {
          id: 15,
          method: 'input.respond',
          params: { interrupt_id: 'i', response: 1, goto: [{ input: {} }] },
        },
        'invalid_argument',
      ],
      [
        { id: 16, method: 'input.respond', params: { interrupt_id: 'i', response: 1, update: 5 } },
        'invalid_argument',
      ],
      [
        {
          id: 17,
          method: 'run.start',
          params: { assistant_id: 'agent', config: { recursion_limit: 0 } },
        },
        'invalid_argument',
      ],
    ];
    for (const [body, error] of cases) {
      const res = await command(a.url, threadId, body);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(res.body, JSON.stringify(body)).toMatchObject({
        type: 'error',
        id: (body as { id: number }).id,
        error,
      });
    }
    const malformed = await command(a.url, threadId, { method: 'run.start' });
    expect(malformed).toMatchObject({
      status: 400,
      body: { type: 'error', id: null, error: 'invalid_argument' },
    });
    // An unknown assistant is the runs API's 404, as on the official JS server.
    const unknown = await command(a.url, threadId, {
      id: 11,
      method: 'run.start',
      params: { assistant_id: 'missing' },
    });
    expect(unknown.status).toBe(404);
    const strict = await fetch(`${a.url}/threads/${threadId}/stream/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ channels: ['values'], extra: 1 }),
    });
    expect(strict.status).toBe(400);
    // An unknown interrupt id on an interrupted thread.
    await command(a.url, threadId, {
      id: 12,
      method: 'run.start',
      params: { assistant_id: 'agent', input: { messages: [] } },
    });
    await sse(a.url, threadId, { channels: ['lifecycle'] }, (e) => e.some(isRootEnd));
    const wrong = await command(a.url, threadId, {
      id: 13,
      method: 'input.respond',
      params: { interrupt_id: 'nope', response: 1 },
    });
    expect(wrong.body).toMatchObject({ type: 'error', error: 'no_such_interrupt' });
    // A WebSocket frame that is not a command: an error with id null, and the socket stays open.
    const socket = await openSocket(a.url, threadId);
    const replies: Record<string, unknown>[] = [];
    const two = new Promise<void>((resolve) =>
      socket.on('message', (raw) => {
        replies.push(JSON.parse((raw as Buffer).toString()) as Record<string, unknown>);
        if (replies.length === 2) resolve();
      }),
    );
    socket.send('not json');
    socket.send(JSON.stringify({ id: 5, method: 'state.get', params: { keys: ['answer'] } }));
    await two;
    socket.close();
    expect(replies[0]).toMatchObject({ type: 'error', id: null, error: 'invalid_argument' });
    expect(replies[1]).toMatchObject({
      type: 'success',
      id: 5,
      result: { values: { answer: null } },
    });
    // A plain GET is not an upgrade.
    expect((await fetch(`${a.url}/threads/${threadId}/stream/events`)).status).toBe(426);
  });

  it('holds WebSocket frames to the limits of a request body: depth, unstorable strings, size', async () => {
    const threadId = randomUUID();
    const socket = await openSocket(a.url, threadId);
    const replies: Record<string, unknown>[] = [];
    socket.on('message', (raw) => {
      replies.push(JSON.parse((raw as Buffer).toString()) as Record<string, unknown>);
    });
    const reply = async (frame: string) => {
      const before = replies.length;
      socket.send(frame);
      await expect.poll(() => replies.length, { timeout: 10_000 }).toBeGreaterThan(before);
      return replies[before]!;
    };
    const nested = `${'['.repeat(600)}${']'.repeat(600)}`;
    expect(
      await reply(
        `{"id":1,"method":"run.start","params":{"assistant_id":"agent","input":${nested}}}`,
      ),
    ).toMatchObject({ type: 'error', id: null, error: 'invalid_argument' });
    // A NUL where PostgreSQL cannot hold it (metadata is matched by filters): refused, nothing made.
    const refused = await reply(
      JSON.stringify({
        id: 2,
        method: 'run.start',
        params: { assistant_id: 'agent', input: { messages: [] }, metadata: { tag: 'a\u0000b' } },
      }),
    );
    expect(refused).toMatchObject({ type: 'error', id: 2, error: 'invalid_argument' });
    expect(String(refused.message)).toContain('params.metadata.tag');
    expect((await fetch(`${a.url}/threads/${threadId}`)).status).toBe(404);
    // In the input a graph sees, the same string is kept exactly, over both transports.
    const input = { messages: [{ role: 'user', content: 'a\u0000b\ud800' }] };
    expect(
      await reply(
        JSON.stringify({ id: 3, method: 'run.start', params: { assistant_id: 'agent', input } }),
      ),
    ).toMatchObject({ type: 'success', id: 3 });
    const overHttp = randomUUID();
    const started = await command(a.url, overHttp, {
      id: 4,
      method: 'run.start',
      params: { assistant_id: 'agent', input, metadata: { tag: 'x' } },
    });
    expect(started).toMatchObject({ status: 200, body: { type: 'success', id: 4 } });
    const nulMetadata = await command(a.url, overHttp, {
      id: 5,
      method: 'run.start',
      params: { assistant_id: 'agent', input, metadata: { tag: 'a\u0000b' } },
    });
    expect(nulMetadata.status).toBe(422);
    for (const id of [threadId, overHttp]) {
      await sse(a.url, id, { channels: ['lifecycle'] }, (e) => e.some(isRootEnd));
      const state = (await command(a.url, id, { id: 6, method: 'state.get', params: {} })).body
        .result as { values: { messages: { content: string }[] } };
      expect(state.values.messages[0]!.content).toBe('a\u0000b\ud800');
    }
    // A frame over a body's 25 MiB closes the socket with 1009; the server goes on.
    const closed = new Promise<number>((resolve) => socket.once('close', resolve));
    socket.send(`{"id":7,"method":"state.get","params":{"pad":"${'x'.repeat(25 * 1024 * 1024)}"}}`);
    expect(await closed).toBe(1009);
    expect((await fetch(`${a.url}/ok`)).status).toBe(200);
  });

  it('answers CORS on the protocol routes, streams included', async () => {
    const threadId = randomUUID();
    const res = await fetch(`${a.url}/threads/${threadId}/stream/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://app.example' },
      body: JSON.stringify({ channels: ['values'] }),
    });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    await res.body?.cancel();
    const pre = await fetch(`${a.url}/threads/${threadId}/commands`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
  });
});
