// A WebSocket subscribed to a thread that does not exist yet, then `run.start` on the socket (what
// the JS SDK's protocol client does for a new thread): the run is the thread's first and executes
// in this process, so the subscription finds it in memory when the run's creation wakes it:
// no query for the thread's next run before its first event. Before, it was woken before the run was
// remembered and queried for it, which put a round trip (and, under a burst of events, the whole
// first step) before the first frame. The runtime runs in this process so every query is seen.
import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { createLogger } from '../../common/logging/index.js';
import { createRuntime, type Runtime } from '../../runtime/index.js';
import { observeClientQueries } from '../support/counting-pool.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { postCommand } from '../support/protocol.js';
import { REPO_ROOT } from '../support/server.js';

const CONFIG = `${REPO_ROOT}/test/fixtures/protocol/langgraph.json`;
/** Names of the named statements sent since the test began recording. */
const named: string[] = [];
/** Texts of every statement sent since the test began recording. */
const texts: string[] = [];

let db: TestDatabase;
let rt: Runtime;
let url: string;
let restoreQuery: (() => void) | undefined;
beforeAll(async () => {
  restoreQuery = observeClientQueries((q) => {
    if (typeof q === 'object' && q.name) named.push(q.name);
    texts.push(typeof q === 'string' ? q : (q.text ?? ''));
  });
  db = await createTestDatabase(inject('pgAdminUrl'));
  rt = await createRuntime({
    configPath: CONFIG,
    databaseUrl: db.url,
    apiKeys: [],
    logger: createLogger({ level: 'error' }),
  });
  url = await rt.app.listen({ port: 0, host: '127.0.0.1' });
}, 120_000);
afterAll(async () => {
  restoreQuery?.();
  await rt?.close();
  await db?.drop();
});

type Frame = { type: string; id?: number; method?: string; params?: { data?: unknown } };

describe('a protocol run on a new thread, subscribed before run.start', () => {
  it('reaches the subscription with every event, its run found in memory', async () => {
    const threadId = randomUUID();
    const socket = await openSocket(threadId);
    const frames: Frame[] = [];
    /** The statements sent before the first event frame arrived. */
    let beforeFirstEvent: string[] | undefined;
    const replies = new Map<number, () => void>();
    const ended = new Promise<void>((resolve) =>
      socket.on('message', (raw) => {
        const frame = JSON.parse((raw as Buffer).toString()) as Frame;
        frames.push(frame);
        if (frame.type === 'event') beforeFirstEvent ??= [...named];
        if (frame.type === 'success' && frame.id !== undefined) replies.get(frame.id)?.();
        const data = frame.params?.data as { event?: string } | undefined;
        if (frame.method === 'lifecycle' && data?.event === 'completed') resolve();
      }),
    );
    const command = (id: number, method: string, params: object) =>
      new Promise<void>((resolve) => {
        replies.set(id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      });
    try {
      named.length = 0;
      await command(1, 'subscription.subscribe', { channels: ['custom', 'lifecycle'] });
      // The read that placed the subscription found no run; it waits to be woken, no second look.
      await new Promise((r) => setTimeout(r, 50));
      expect(named.filter((name) => name.startsWith('runs.'))).toEqual(['runs.protocolStart']);
      named.length = 0;
      // A run that lasts (three events 50 ms apart): it still executes when the subscription
      // looks, so what it reads is the in-memory log, not the table.
      await command(2, 'run.start', { assistant_id: 'slow', input: { ticks: 3 } });
      await ended;
    } finally {
      socket.close();
    }
    const events = frames.filter((f) => f.type === 'event');
    expect(events.map((f) => f.method)).toEqual([
      'lifecycle',
      ...Array<string>(3).fill('custom'),
      'lifecycle',
    ]);
    expect(events.filter((f) => f.method === 'custom').map((f) => f.params?.data)).toEqual(
      [0, 1, 2].map((tick) => ({ payload: { tick } })),
    );
    // (Once the run has ended, the subscription asks for the thread's next run as usual.)
    expect(beforeFirstEvent).toBeDefined();
    expect(beforeFirstEvent).not.toContain('runs.nextProtocolRun');
  });
});

/** `subscription.subscribe` and `run.start` back to back, as the JS SDK's protocol client sends them. */
function subscribeThenStart(socket: WebSocket, channels: string[], run: object): void {
  socket.send(JSON.stringify({ id: 1, method: 'subscription.subscribe', params: { channels } }));
  socket.send(JSON.stringify({ id: 2, method: 'run.start', params: run }));
}

/** Counts the system-call writes (`_write`, `_writev`) made on the server side of connections. */
function countServerWrites(): { count: () => number; restore: () => void } {
  const proto = Socket.prototype as unknown as Record<
    '_write' | '_writev',
    (...a: unknown[]) => unknown
  >;
  const original = { write: proto._write, writev: proto._writev };
  let writes = 0;
  const counted = (fn: (...a: unknown[]) => unknown) =>
    function (this: Socket & { server?: unknown }, ...args: unknown[]) {
      if (this.server) writes++;
      return fn.apply(this, args);
    };
  proto._write = counted(original.write);
  proto._writev = counted(original.writev);
  return {
    count: () => writes,
    restore: () => {
      proto._write = original.write;
      proto._writev = original.writev;
    },
  };
}

describe('a burst of events on a WebSocket', () => {
  it('leaves the server in a few writes, not one per frame', async () => {
    const threadId = randomUUID();
    const socket = await openSocket(threadId);
    let custom = 0;
    const ended = new Promise<void>((resolve) =>
      socket.on('message', (raw) => {
        const frame = JSON.parse((raw as Buffer).toString()) as Frame;
        if (frame.method === 'custom') custom++;
        const data = frame.params?.data as { event?: string } | undefined;
        if (frame.method === 'lifecycle' && data?.event === 'completed') resolve();
      }),
    );
    const writes = countServerWrites();
    try {
      subscribeThenStart(socket, ['custom', 'lifecycle'], {
        assistant_id: 'burst',
        input: { n: 200 },
      });
      await ended;
    } finally {
      writes.restore();
      socket.close();
    }
    expect(custom).toBe(200);
    // The 200 custom frames come in a handful of batches; a write per frame would be 200+.
    expect(writes.count()).toBeLessThan(40);
  });
});

describe('run.start on a thread waiting at an interrupt', () => {
  it('resumes it with the input, reading the interrupts and not the thread values', async () => {
    const threadId = randomUUID();
    const command = async (id: number, params: object) => {
      const res = await postCommand(url, threadId, { id, method: 'run.start', params });
      expect(res.status).toBe(200);
      return res.body;
    };
    const thread = async () =>
      (await (await fetch(`${url}/threads/${threadId}`)).json()) as {
        status: string;
        values: { answer?: string | null };
      };
    const settled = async () => {
      for (let i = 0; i < 200; i++) {
        const t = await thread();
        if (t.status !== 'busy') return t;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('the run did not settle');
    };
    const input = { messages: [{ type: 'human', content: 'add 2 and 3' }] };
    expect((await command(1, { assistant_id: 'agent', input })).type).toBe('success');
    expect((await settled()).status).toBe('interrupted');
    named.length = 0;
    texts.length = 0;
    expect((await command(2, { assistant_id: 'agent', input: 'approved' })).type).toBe('success');
    const sent = [...named];
    // The insert that declines (the thread waits at an interrupt), the interrupts' read, and the
    // insert of the resume.
    expect(inserts()).toEqual({ lock: 0, create: 0, upsert: 2 });
    expect(sent.filter((name) => name === 'threads.interrupts')).toHaveLength(1);
    const after = await settled();
    expect(after.status).toBe('idle');
    expect(after.values.answer).toBe('approved');
    expect(sent).toContain('threads.interrupts');
    expect(sent).not.toContain('threads.get');
  });
});

/**
 * The run inserts among `texts`: locking an existing thread, creating a new one, or either (the
 * thread step of `if_not_exists: "create"`, which every `run.start` sends).
 */
function inserts() {
  const sent = texts.map((text) => text.trimStart());
  const inserting = sent.filter((t) => t.startsWith('WITH thread AS (INSERT INTO threads'));
  return {
    lock: sent.filter((t) => t.startsWith('WITH thread AS (UPDATE threads')).length,
    create: inserting.filter((t) => !/ON CONFLICT \(thread_id\) DO UPDATE/.test(t)).length,
    upsert: inserting.filter((t) => /ON CONFLICT \(thread_id\) DO UPDATE/.test(t)).length,
  };
}

describe('run.start over HTTP on a new thread, then again on it', () => {
  it('reads no interrupts: one statement creates the thread, then one locks it', async () => {
    const threadId = randomUUID();
    const start = async () => {
      const res = await postCommand(url, threadId, {
        id: 1,
        method: 'run.start',
        params: { assistant_id: 'slow', input: { ticks: 1 } },
      });
      expect(res.status).toBe(200);
      expect(res.body.type).toBe('success');
      return (res.body.result as { run_id?: string } | undefined)?.run_id;
    };
    texts.length = 0;
    named.length = 0;
    const first = await start();
    // The thread did not exist: the statement that inserts the run created it.
    expect(inserts()).toEqual({ lock: 0, create: 0, upsert: 1 });
    texts.length = 0;
    const second = await start();
    // An existing thread waiting at no interrupt: the same statement locks it instead.
    expect(inserts()).toEqual({ lock: 0, create: 0, upsert: 1 });
    expect(named).not.toContain('threads.interrupts');
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    // Both are ordinary runs of the thread, and both end.
    const deadline = Date.now() + 20_000;
    let statuses: string[] = [];
    while (Date.now() < deadline) {
      const res = await fetch(`${url}/threads/${threadId}/runs`);
      statuses = ((await res.json()) as { status: string }[]).map((r) => r.status);
      if (statuses.length === 2 && statuses.every((s) => s === 'success')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(statuses).toEqual(['success', 'success']);
  });
});

describe('subscription.subscribe then run.start on a WebSocket, on a new thread', () => {
  it('creates the thread with the run in one statement', async () => {
    const threadId = randomUUID();
    const socket = await openSocket(threadId);
    const ended = new Promise<void>((resolve) =>
      socket.on('message', (raw) => {
        const frame = JSON.parse((raw as Buffer).toString()) as Frame;
        const data = frame.params?.data as { event?: string } | undefined;
        if (frame.method === 'lifecycle' && data?.event === 'completed') resolve();
      }),
    );
    texts.length = 0;
    named.length = 0;
    try {
      subscribeThenStart(socket, ['lifecycle'], { assistant_id: 'slow', input: { ticks: 1 } });
      await ended;
    } finally {
      socket.close();
    }
    expect(inserts()).toEqual({ lock: 0, create: 0, upsert: 1 });
    expect(named).not.toContain('threads.interrupts');
  });
});

/** The run's events on `socket` until the root's terminal lifecycle event. */
function eventsUntilEnd(socket: WebSocket): Promise<Frame[]> {
  const events: Frame[] = [];
  return new Promise((resolve) =>
    socket.on('message', (raw) => {
      const frame = JSON.parse((raw as Buffer).toString()) as Frame;
      if (frame.type !== 'event') return;
      events.push(frame);
      const data = frame.params?.data as { event?: string } | undefined;
      if (frame.method === 'lifecycle' && data?.event === 'completed') resolve(events);
    }),
  );
}

async function openSocket(threadId: string): Promise<WebSocket> {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/threads/${threadId}/stream/events`);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return socket;
}

async function until(
  check: () => boolean,
  ms: number,
  look: () => Promise<void> = () => new Promise((r) => setTimeout(r, 10)),
): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await look();
  return check();
}

describe('run.start sent right after subscription.subscribe', () => {
  it("sends the run's insert while the subscription's read is still out", async () => {
    // A lock on the runs table holds both statements: the run's insert must not wait for the
    // subscription's read to answer (before, its first event waited for two round trips).
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    const socket = await openSocket(randomUUID());
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE runs IN ACCESS EXCLUSIVE MODE');
      texts.length = 0;
      named.length = 0;
      const events = eventsUntilEnd(socket);
      subscribeThenStart(socket, ['lifecycle'], { assistant_id: 'slow', input: { ticks: 1 } });
      const bothSent = await until(
        () => named.includes('runs.protocolStart') && inserts().upsert === 1,
        5_000,
      );
      await locker.query('COMMIT');
      expect(bothSent).toBe(true);
      expect((await events).map((f) => f.method)).toEqual(['lifecycle', 'lifecycle']);
      expect(inserts()).toEqual({ lock: 0, create: 0, upsert: 1 });
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
      socket.close();
    }
  });

  it('on an existing thread, starts the run there in one statement', async () => {
    const threadId = randomUUID();
    const first = await openSocket(threadId);
    try {
      const events = eventsUntilEnd(first);
      subscribeThenStart(first, ['lifecycle'], { assistant_id: 'slow', input: { ticks: 1 } });
      await events;
    } finally {
      first.close();
    }
    const socket = await openSocket(threadId);
    texts.length = 0;
    try {
      // The subscription starts at the thread's newest run, which its read may find to be the
      // first run or already the new one: the new run's last tick and end come either way.
      const newRunEnded = new Promise<void>((resolve) => {
        let lastTick = false;
        socket.on('message', (raw) => {
          const frame = JSON.parse((raw as Buffer).toString()) as Frame;
          const data = frame.params?.data as { event?: string; payload?: { tick?: number } };
          if (frame.method === 'custom' && data?.payload?.tick === 1) lastTick = true;
          if (lastTick && frame.method === 'lifecycle' && data?.event === 'completed') resolve();
        });
      });
      subscribeThenStart(socket, ['lifecycle', 'custom'], {
        assistant_id: 'slow',
        input: { ticks: 2 },
      });
      await newRunEnded;
    } finally {
      socket.close();
    }
    expect(inserts()).toEqual({ lock: 0, create: 0, upsert: 1 });
    const res = await fetch(`${url}/threads/${threadId}/runs`);
    const runs = (await res.json()) as { status: string }[];
    expect(runs.map((r) => r.status)).toEqual(['success', 'success']);
  });

  it('on a thread waiting at an interrupt, resumes it with the input', async () => {
    const threadId = randomUUID();
    let status = '';
    const input = { messages: [{ type: 'human', content: 'add 2 and 3' }] };
    const first = await openSocket(threadId);
    try {
      const frames = new Promise<void>((resolve) =>
        first.on('message', (raw) => {
          if ((raw as Buffer).toString().includes('"input.requested"')) resolve();
        }),
      );
      subscribeThenStart(first, ['input'], { assistant_id: 'agent', input });
      await frames;
    } finally {
      first.close();
    }
    // Input sent while the run still settles would be plain input, queued after it.
    const settled = await until(
      () => status === 'interrupted',
      10_000,
      async () => {
        await new Promise((r) => setTimeout(r, 25));
        const res = await fetch(`${url}/threads/${threadId}`);
        status = ((await res.json()) as { status: string }).status;
      },
    );
    expect(settled).toBe(true);
    const socket = await openSocket(threadId);
    try {
      // The subscription starts at the thread's newest run: the interrupted one (its terminal
      // event replayed) or already the new one, whose end is `completed`.
      const ended = terminalEvents(socket, (event) => event !== 'interrupted');
      subscribeThenStart(socket, ['lifecycle'], { assistant_id: 'agent', input: 'approved' });
      expect((await ended).at(-1)).toBe('completed');
    } finally {
      socket.close();
    }
    const thread = (await (await fetch(`${url}/threads/${threadId}`)).json()) as {
      status: string;
      values: { answer?: string };
    };
    expect(thread.status).toBe('idle');
    expect(thread.values.answer).toBe('approved');
  });
});

/** The root terminal lifecycle events on `socket`, up to the first that `last` accepts. */
function terminalEvents(socket: WebSocket, last: (event: string) => boolean): Promise<string[]> {
  const seen: string[] = [];
  return new Promise((resolve) =>
    socket.on('message', (raw: Buffer) => {
      const frame = JSON.parse(raw.toString()) as Frame & { params?: { namespace?: unknown[] } };
      const event = (frame.params?.data as { event?: string } | undefined)?.event;
      if (frame.method !== 'lifecycle' || frame.params?.namespace?.length !== 0) return;
      if (event !== 'completed' && event !== 'interrupted' && event !== 'failed') return;
      seen.push(event);
      if (last(event)) resolve(seen);
    }),
  );
}
