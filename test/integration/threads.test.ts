// Threads and their state through the official JS SDK against a running server on PostgreSQL.
import type { Message, ThreadState } from '@langchain/langgraph-sdk';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../runtime/auth/index.js';
import { ThreadStore, threadInsertBatcher, threadRowLoader } from '../../runtime/threads/index.js';
import { countingPool } from '../support/counting-pool.js';
import { useRuntime } from '../support/fixture.js';

const rt = useRuntime();

type Values = { messages: Message[] };

async function seededThread(metadata: Record<string, unknown> = {}) {
  return rt.client.threads.create({
    graphId: 'echo',
    metadata,
    supersteps: [
      {
        updates: [
          { values: { messages: [{ role: 'user', content: 'hello' }] }, asNode: '__start__' },
        ],
      },
      {
        updates: [
          { values: { messages: [{ role: 'assistant', content: 'echo: hello' }] }, asNode: 'echo' },
        ],
      },
    ],
  });
}

describe('thread create and read', () => {
  it('creates an empty idle thread', async () => {
    const thread = await rt.client.threads.create({ metadata: { user: 'u1' } });
    expect(thread.status).toBe('idle');
    expect(thread.metadata).toEqual({ user: 'u1' });
    expect(thread.values).toEqual({});
    expect(thread.thread_id).toMatch(/^[0-9a-f-]{36}$/);
    const fetched = await rt.client.threads.get(thread.thread_id);
    expect(fetched).toEqual(thread);
  });

  it('applies supersteps so values come back populated, messages in LangChain form', async () => {
    const thread = await seededThread();
    expect(thread.metadata).toEqual({ graph_id: 'echo' });
    const messages = (thread.values as Values).messages;
    expect(messages.map((m) => [m.type, m.content])).toEqual([
      ['human', 'hello'],
      ['ai', 'echo: hello'],
    ]);
    expect(messages[0]).toMatchObject({
      additional_kwargs: {},
      response_metadata: {},
      name: null,
      example: false,
    });
    expect(messages[0]?.id).toEqual(expect.any(String));
    expect(messages[1]).toMatchObject({
      tool_calls: [],
      invalid_tool_calls: [],
      usage_metadata: null,
    });
  });

  it('honours thread_id and if_exists', async () => {
    const id = crypto.randomUUID();
    const first = await rt.client.threads.create({ threadId: id, metadata: { n: 1 } });
    expect(first.thread_id).toBe(id);
    await expect(rt.client.threads.create({ threadId: id })).rejects.toThrow(/409/);
    const again = await rt.client.threads.create({
      threadId: id,
      ifExists: 'do_nothing',
      metadata: { n: 2 },
    });
    expect(again.metadata).toEqual({ n: 1 });
  });

  it('updates metadata by merging and deletes threads with their checkpoints', async () => {
    const thread = await seededThread({ a: 1 });
    const updated = await rt.client.threads.update(thread.thread_id, { metadata: { b: 2 } });
    expect(updated.metadata).toEqual({ graph_id: 'echo', a: 1, b: 2 });
    await rt.client.threads.delete(thread.thread_id);
    await expect(rt.client.threads.get(thread.thread_id)).rejects.toThrow(/404/);
    const history = await rt.http(`/threads/${thread.thread_id}/history`, {
      method: 'POST',
      json: {},
    });
    expect(history.status).toBe(404);
  });

  it('records a TTL and reports it on request', async () => {
    const thread = await rt.client.threads.create({ ttl: { ttl: 30, strategy: 'delete' } });
    const res = await rt.http(`/threads/${thread.thread_id}?include=ttl`);
    const body = (await res.json()) as {
      ttl: { ttl: number; strategy: string; expires_at: string };
    };
    expect(body.ttl).toMatchObject({ ttl: 30, strategy: 'delete' });
    const minutes = (new Date(body.ttl.expires_at).getTime() - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(29);
    expect(minutes).toBeLessThanOrEqual(30);
  });
});

describe('thread reads batched per turn of the event loop', () => {
  it('answers each concurrent GET with its own thread, or 404', async () => {
    const threads = await Promise.all(
      Array.from({ length: 12 }, (_, i) => rt.client.threads.create({ metadata: { batch: i } })),
    );
    const missing = '00000000-0000-4000-8000-0000000000aa';
    const asked = [
      ...threads.map((t) => t.thread_id),
      missing,
      threads[3]!.thread_id.toUpperCase(),
    ];
    const answers = await Promise.all(
      [...asked, ...asked].map((id) =>
        rt.http(`/threads/${id}`).then(async (r) => [r.status, await r.json()] as const),
      ),
    );
    answers.forEach(([status, body], i) => {
      const id = asked[i % asked.length]!;
      if (id === missing) {
        expect(status).toBe(404);
        expect(body).toEqual({ detail: `Thread with ID ${missing} not found` });
      } else {
        expect(status).toBe(200);
        const thread = threads.find((t) => t.thread_id === id.toLowerCase())!;
        expect(body).toMatchObject({ thread_id: thread.thread_id, metadata: thread.metadata });
      }
    });
  });

  it('reads the rows of one turn with one query, matched by id', async () => {
    const threads = await Promise.all(
      Array.from({ length: 5 }, (_, i) => rt.client.threads.create({ metadata: { loader: i } })),
    );
    const pool = new pg.Pool({ connectionString: rt.db.url, max: 2 });
    try {
      const store = new ThreadStore(pool);
      const batches: number[] = [];
      const loader = threadRowLoader({
        get: (id) => (batches.push(1), store.get(id)),
        getMany: (ids) => (batches.push(ids.length), store.getMany(ids)),
      });
      const missing = '00000000-0000-4000-8000-0000000000bb';
      const ids = [
        ...threads.map((t) => t.thread_id).reverse(),
        missing,
        threads[0]!.thread_id.toUpperCase(),
      ];
      const rows = await Promise.all(ids.map((id) => loader.load(id)));
      expect(batches).toEqual([7]);
      expect(rows.map((r) => r?.metadata ?? null)).toEqual([
        ...threads.map((t) => t.metadata).reverse(),
        null,
        threads[0]!.metadata,
      ]);
      // A read in a later turn sees a write committed in between.
      await rt.client.threads.update(threads[1]!.thread_id, { metadata: { loader: 'changed' } });
      expect((await loader.load(threads[1]!.thread_id))?.metadata).toEqual({ loader: 'changed' });
      expect(batches).toEqual([7, 1]);
    } finally {
      await pool.end();
    }
  });
});

describe('thread creations batched per turn of the event loop', () => {
  it('answers each concurrent create with its own thread, and one id taken once', async () => {
    const taken = crypto.randomUUID();
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) =>
        rt.http('/threads', { method: 'POST', json: { metadata: { wave: i } } }),
      ),
      ...Array.from({ length: 4 }, (_, i) =>
        rt.http('/threads', {
          method: 'POST',
          json: { thread_id: i % 2 ? taken : taken.toUpperCase(), metadata: { same: i } },
        }),
      ),
    ]).then((all) => Promise.all(all.map(async (r) => [r.status, await r.json()] as const)));
    const fresh = answers.slice(0, 10);
    expect(fresh.map(([status]) => status)).toEqual(Array(10).fill(200));
    expect(new Set(fresh.map(([, body]) => (body as { thread_id: string }).thread_id)).size).toBe(
      10,
    );
    fresh.forEach(([, body], i) => expect(body).toMatchObject({ metadata: { wave: i } }));
    const same = answers.slice(10);
    expect(same.filter(([status]) => status === 200)).toHaveLength(1);
    expect(same.filter(([status]) => status === 409)).toHaveLength(3);
    const winner = same.find(([status]) => status === 200)![1] as { metadata: unknown };
    expect((await rt.client.threads.get(taken)).metadata).toEqual(winner.metadata);
  });

  it('inserts the threads of one turn with one statement, and each alone when it fails', async () => {
    const pool = new pg.Pool({ connectionString: rt.db.url, max: 2 });
    try {
      const store = new ThreadStore(pool);
      const calls: string[] = [];
      const batcher = threadInsertBatcher({
        insert: (thread) => (calls.push('one'), store.insert(thread)),
        insertMany: (threads) => (calls.push(`many ${threads.length}`), store.insertMany(threads)),
      });
      const existing = await rt.client.threads.create();
      const duplicate = crypto.randomUUID();
      const wanted = [crypto.randomUUID(), existing.thread_id, duplicate, duplicate];
      const rows = await Promise.all(
        wanted.map((id, i) =>
          batcher.load({
            thread_id: id,
            metadata: { n: i },
            ttl: { minutes: 5, strategy: 'delete' },
          }),
        ),
      );
      expect(calls).toEqual(['many 3']);
      expect(rows.map((r) => r?.metadata ?? null)).toEqual([{ n: 0 }, null, { n: 2 }, null]);
      const ttl = await pool.query<{ minutes: number; expires: boolean }>(
        `SELECT ttl_minutes AS minutes, expires_at > now() + interval '4 minutes' AS expires
         FROM threads WHERE thread_id = $1`,
        [wanted[0]],
      );
      expect(ttl.rows[0]).toEqual({ minutes: 5, expires: true });
      // A batch whose statement fails: each creation is tried alone and fails or succeeds alone.
      calls.length = 0;
      const failing = await Promise.allSettled([
        batcher.load({ thread_id: 'not-a-uuid', metadata: {}, ttl: undefined }),
        batcher.load({ thread_id: crypto.randomUUID(), metadata: { ok: true }, ttl: undefined }),
      ]);
      expect(calls).toEqual(['many 2', 'one', 'one']);
      expect(failing[0].status).toBe('rejected');
      expect(failing[1]).toMatchObject({ status: 'fulfilled', value: { metadata: { ok: true } } });
    } finally {
      await pool.end();
    }
  });
});

describe('thread search, count and prune', () => {
  it('filters by metadata, values, status and ids; sorts, pages and selects', async () => {
    const tag = crypto.randomUUID();
    const a = await rt.client.threads.create({ metadata: { tag, n: 1 } });
    const b = await seededThread({ tag, n: 2 });
    const c = await rt.client.threads.create({ metadata: { tag, n: 3 } });

    const newest = await rt.client.threads.search({ metadata: { tag } });
    expect(newest.map((t) => t.thread_id)).toEqual([c.thread_id, b.thread_id, a.thread_id]);
    const oldest = await rt.client.threads.search({
      metadata: { tag },
      sortBy: 'created_at',
      sortOrder: 'asc',
      limit: 2,
    });
    expect(oldest.map((t) => t.thread_id)).toEqual([a.thread_id, b.thread_id]);
    const page2 = await rt.client.threads.search({ metadata: { tag }, limit: 2, offset: 2 });
    expect(page2.map((t) => t.thread_id)).toEqual([a.thread_id]);

    const byValues = await rt.client.threads.search({
      metadata: { tag },
      values: { messages: [{ content: 'hello' }] },
    });
    expect(byValues.map((t) => t.thread_id)).toEqual([b.thread_id]);
    const byIds = await rt.client.threads.search({ ids: [a.thread_id, c.thread_id] });
    expect(byIds.map((t) => t.thread_id).sort()).toEqual([a.thread_id, c.thread_id].sort());
    expect(await rt.client.threads.search({ metadata: { tag }, status: 'busy' })).toEqual([]);

    const selected = await rt.client.threads.search({
      metadata: { tag },
      select: ['thread_id', 'status'],
      limit: 1,
    });
    expect(selected).toEqual([{ thread_id: c.thread_id, status: 'idle' }]);

    expect(await rt.client.threads.count({ metadata: { tag } })).toBe(3);
    expect(await rt.client.threads.count({ metadata: { tag }, status: 'idle' })).toBe(3);

    const more = await rt.http('/threads/search', {
      method: 'POST',
      json: { metadata: { tag }, limit: 2 },
    });
    expect(more.headers.get('x-pagination-next')).toBe('2');
  });

  it('searches by containment in one statement, for a rare value and for a common one', async () => {
    const counted = countingPool(new pg.Pool({ connectionString: rt.db.url, max: 2 }));
    try {
      const store = new ThreadStore(counted.pool);
      // Past the 1000 matches below which a search sorts its matches instead of walking an index.
      const [common, rare] = [crypto.randomUUID(), crypto.randomUUID()];
      const made = (tag: string, n: number) =>
        Array.from({ length: n }, () => ({
          thread_id: crypto.randomUUID(),
          metadata: { tag },
          ttl: undefined,
        }));
      const [many, few] = [made(common, 1003), made(rare, 4)];
      await store.insertMany([...many, ...few]);
      // One statement, so they share created_at: the id orders them.
      const desc = (ts: { thread_id: string }[]) =>
        ts
          .map((t) => t.thread_id)
          .sort()
          .reverse();
      const page = { limit: 2, offset: 1, sortBy: 'created_at', sortOrder: 'desc' } as const;
      for (const [tag, threads] of [
        [common, many],
        [rare, few],
      ] as const) {
        const before = counted.queries();
        const byMetadata = await store.search({ ...page, metadata: { tag } });
        const byAuth = await store.search({ ...page, auth: { tag }, select: ['thread_id'] });
        expect(counted.queries() - before).toBe(2);
        expect(byMetadata.rows.map((r) => r.thread_id)).toEqual(desc(threads).slice(1, 3));
        expect(byMetadata.rows[0]).toMatchObject({ metadata: { tag }, status: 'idle' });
        expect(byMetadata.hasMore).toBe(true);
        expect(byAuth.rows).toEqual(
          desc(threads)
            .slice(1, 3)
            .map((thread_id) => ({ thread_id })),
        );
        const last = await store.search({ ...page, offset: threads.length - 1, auth: { tag } });
        expect(last.rows.map((r) => r.thread_id)).toEqual(desc(threads).slice(-1));
        expect(last.hasMore).toBe(false);
      }
    } finally {
      await counted.pool.end();
    }
  });

  it('an owner filter selects what containment would, walking the owner index newest first', async () => {
    const counted = countingPool(new pg.Pool({ connectionString: rt.db.url, max: 2 }));
    try {
      const store = new ThreadStore(counted.pool);
      const [tag, alice] = [crypto.randomUUID(), `alice-${crypto.randomUUID()}`];
      // Owner values a scalar equality must not confuse: the same text in an array or object,
      // a number and its text, true, null, no owner at all.
      const owners: unknown[] = [alice, alice, [alice], { name: alice }, 'bob', 1, '1', true, null];
      const made: Parameters<ThreadStore['insertMany']>[0] = owners.map((owner, n) => ({
        thread_id: crypto.randomUUID(),
        metadata: { tag, owner, n, ...(n === 1 ? { team: 'x' } : {}) },
        ttl: undefined,
      }));
      made.push({
        thread_id: crypto.randomUUID(),
        metadata: { tag, n: 99 },
        ttl: undefined,
      });
      await store.insertMany(made);
      const patterns: Record<string, unknown>[] = [
        compileFilter({ owner: alice }),
        compileFilter({ owner: { $eq: alice } }),
        compileFilter({ owner: { $contains: alice } }),
        compileFilter({ owner: alice, team: 'x' }),
        { owner: { name: alice } },
        { owner: 1 },
        { owner: '1' },
        { owner: true },
        { owner: null },
        { owner: 'nobody' },
      ];
      const page = { limit: 50, offset: 0, sortBy: 'created_at', sortOrder: 'desc' } as const;
      for (const pattern of patterns) {
        // What JSON containment selects is the reference.
        const { rows } = await counted.pool.query<{ thread_id: string }>(
          `SELECT thread_id FROM threads WHERE metadata @> $1::jsonb AND metadata @> $2::jsonb
           ORDER BY created_at DESC, thread_id DESC`,
          [JSON.stringify({ tag }), JSON.stringify(pattern)],
        );
        const expected = rows.map((r) => r.thread_id);
        const byAuth = await store.search({ ...page, metadata: { tag }, auth: pattern });
        const byMetadata = await store.search({ ...page, metadata: { tag, ...pattern } });
        const counts = [
          await store.count({ metadata: { tag }, auth: pattern }),
          await store.count({ metadata: { ...pattern, tag } }),
        ];
        expect([pattern, byAuth.rows.map((r) => r.thread_id)]).toEqual([pattern, expected]);
        expect([pattern, byMetadata.rows.map((r) => r.thread_id)]).toEqual([pattern, expected]);
        expect([pattern, counts]).toEqual([pattern, [expected.length, expected.length]]);
      }
      expect(
        (await store.search({ ...page, auth: { owner: alice } })).rows.map((r) => r.thread_id),
      ).toEqual(
        made
          .slice(0, 2)
          .map((t) => t.thread_id)
          .sort()
          .reverse(),
      );

      // One owner among others: the page is read off the owner index, newest first, not sorted.
      const many = Array.from({ length: 400 }, (_, n) => ({
        thread_id: crypto.randomUUID(),
        metadata: { owner: n % 4 ? `other-${tag}` : alice },
        ttl: undefined,
      }));
      await store.insertMany(many);
      await counted.pool.query('ANALYZE threads');
      await store.search({ ...page, limit: 10, auth: { owner: alice } });
      const sent = counted.last();
      const plan = await counted.pool.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (COSTS OFF) ${sent?.text ?? ''}`,
        sent?.values,
      );
      const lines = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(lines).toContain('Index Scan Backward using threads_owner_idx');
      expect(lines).not.toMatch(/Sort/);
    } finally {
      await counted.pool.end();
    }
  });

  it('prunes threads by deletion or down to the latest checkpoint', async () => {
    const keep = await seededThread();
    const drop = await rt.client.threads.create({});
    const kept = await rt.http('/threads/prune', {
      method: 'POST',
      json: { thread_ids: [keep.thread_id], strategy: 'keep_latest' },
    });
    expect(await kept.json()).toEqual({ pruned_count: 1 });
    const history = await rt.client.threads.getHistory(keep.thread_id);
    expect(history).toHaveLength(1);
    expect((history[0]?.values as Values).messages).toHaveLength(2);

    const dropped = await rt.http('/threads/prune', {
      method: 'POST',
      json: { thread_ids: [drop.thread_id] },
    });
    expect(await dropped.json()).toEqual({ pruned_count: 1 });
    await expect(rt.client.threads.get(drop.thread_id)).rejects.toThrow(/404/);
  });
});

describe('thread state', () => {
  it('returns a snapshot with every field of the spec', async () => {
    const thread = await seededThread();
    const state = await rt.client.threads.getState<Values>(thread.thread_id);
    expect(state.values.messages.map((m) => m.content)).toEqual(['hello', 'echo: hello']);
    expect(state.next).toEqual([]);
    expect(state.tasks).toEqual([]);
    expect(state.metadata).toMatchObject({
      thread_id: thread.thread_id,
      graph_id: 'echo',
      source: 'update',
      step: 1,
      parents: {},
      writes: { echo: { messages: [{ role: 'assistant', content: 'echo: hello' }] } },
    });
    expect(state.metadata?.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
    expect(state.checkpoint).toMatchObject({ thread_id: thread.thread_id, checkpoint_ns: '' });
    expect(state.parent_checkpoint).toMatchObject({
      thread_id: thread.thread_id,
      checkpoint_ns: '',
    });
    const raw = (await (await rt.http(`/threads/${thread.thread_id}/state`)).json()) as Record<
      string,
      unknown
    >;
    expect(raw.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
    expect(raw.parent_checkpoint_id).toBe(state.parent_checkpoint?.checkpoint_id);
    expect(new Date(String(raw.created_at)).getTime()).toBeGreaterThan(0);
  });

  it('returns an empty state for a thread that has none', async () => {
    const thread = await rt.client.threads.create({});
    const state = await rt.client.threads.getState(thread.thread_id);
    expect(state.values).toEqual({});
    expect(state.next).toEqual([]);
  });

  it('reads the state at a checkpoint, by id and by checkpoint object', async () => {
    const thread = await seededThread();
    const latest = await rt.client.threads.getState<Values>(thread.thread_id);
    const parentId = latest.parent_checkpoint?.checkpoint_id ?? '';
    const byId = await rt.client.threads.getState<Values>(thread.thread_id, parentId);
    expect(byId.values.messages.map((m) => m.content)).toEqual(['hello']);
    expect(byId.metadata?.step).toBe(0);
    const byObject = await rt.client.threads.getState<Values>(thread.thread_id, {
      checkpoint_id: parentId,
      checkpoint_ns: '',
    } as never);
    expect(byObject.checkpoint.checkpoint_id).toBe(parentId);
    const unknown = await rt.http(`/threads/${thread.thread_id}/state/${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
  });

  it('updates state as a node, and forks from an earlier checkpoint', async () => {
    const thread = await seededThread();
    const result = await rt.client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: 'user', content: 'more' }] },
      asNode: 'echo',
    });
    const latest = await rt.client.threads.getState<Values>(thread.thread_id);
    expect(result.configurable?.checkpoint_id).toBe(latest.checkpoint.checkpoint_id);
    const raw = await rt.http(`/threads/${thread.thread_id}/state`, {
      method: 'POST',
      json: { values: { messages: [] }, as_node: 'echo' },
    });
    const body = (await raw.json()) as {
      checkpoint: { checkpoint_id: string; thread_id: string };
      checkpoint_id: string;
    };
    expect(body.checkpoint.thread_id).toBe(thread.thread_id);
    expect(body.checkpoint_id).toBe(body.checkpoint.checkpoint_id);
    expect(body.checkpoint.checkpoint_id > String(latest.checkpoint.checkpoint_id)).toBe(true);
    expect(latest.values.messages.map((m) => m.content)).toEqual(['hello', 'echo: hello', 'more']);
    expect(latest.metadata?.writes).toEqual({
      echo: { messages: [{ role: 'user', content: 'more' }] },
    });
    expect(
      ((await rt.client.threads.get(thread.thread_id)).values as Values).messages,
    ).toHaveLength(3);

    // Fork from the first checkpoint. (A second update as the same node from one checkpoint
    // reuses that node's recorded writes in LangGraph, so the fork enters as the input.)
    const first = (await rt.client.threads.getHistory(thread.thread_id)).at(
      -1,
    ) as ThreadState<Values>;
    await rt.client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: 'user', content: 'fork' }] },
      asNode: '__start__',
      checkpointId: first.checkpoint.checkpoint_id ?? undefined,
    });
    const forked = await rt.client.threads.getState<Values>(thread.thread_id);
    expect(forked.values.messages.map((m) => m.content)).toEqual(['hello', 'fork']);
    expect(forked.next).toEqual(['echo']);
    expect(forked.parent_checkpoint?.checkpoint_id).toBe(first.checkpoint.checkpoint_id);
  });

  it('refuses state updates without a graph', async () => {
    const thread = await rt.client.threads.create({});
    const res = await rt.http(`/threads/${thread.thread_id}/state`, {
      method: 'POST',
      json: { values: {} },
    });
    expect(res.status).toBe(400);
  });
});

describe('thread history and copy', () => {
  it('lists snapshots newest first with limit, before and metadata filters', async () => {
    const thread = await seededThread();
    await rt.client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: 'user', content: 'x' }] },
      asNode: 'echo',
    });
    const history = await rt.client.threads.getHistory<Values>(thread.thread_id);
    expect(history.map((s) => s.metadata?.step)).toEqual([2, 1, 0]);
    for (const s of history) expect(s.checkpoint.checkpoint_id).toEqual(expect.any(String));
    expect(history[1]?.metadata?.writes).toEqual({
      echo: { messages: [{ role: 'assistant', content: 'echo: hello' }] },
    });

    const limited = await rt.client.threads.getHistory(thread.thread_id, { limit: 1 });
    expect(limited.map((s) => s.metadata?.step)).toEqual([2]);
    const before = await rt.client.threads.getHistory(thread.thread_id, {
      before: { configurable: { checkpoint_id: history[0]?.checkpoint.checkpoint_id } },
    });
    expect(before.map((s) => s.metadata?.step)).toEqual([1, 0]);
    const filtered = await rt.client.threads.getHistory(thread.thread_id, {
      metadata: { step: 1 },
    });
    expect(filtered.map((s) => s.metadata?.step)).toEqual([1]);

    const viaGet = (await (
      await rt.http(`/threads/${thread.thread_id}/history?limit=2`)
    ).json()) as unknown[];
    expect(viaGet).toHaveLength(2);
  });

  it('copies a thread into an independent one with the same history', async () => {
    const source = await seededThread({ owner: 'x' });
    const copy = await rt.client.threads.copy(source.thread_id);
    expect(copy.thread_id).not.toBe(source.thread_id);
    expect(copy.metadata).toEqual(source.metadata);
    expect(copy.values).toEqual(source.values);
    const sourceHistory = await rt.client.threads.getHistory(source.thread_id);
    const copyHistory = await rt.client.threads.getHistory(copy.thread_id);
    expect(copyHistory.map((s) => s.checkpoint.checkpoint_id)).toEqual(
      sourceHistory.map((s) => s.checkpoint.checkpoint_id),
    );
    expect(copyHistory[0]?.checkpoint.thread_id).toBe(copy.thread_id);

    await rt.client.threads.updateState(copy.thread_id, {
      values: { messages: [{ role: 'user', content: 'only copy' }] },
      asNode: 'echo',
    });
    expect(await rt.client.threads.getHistory(source.thread_id)).toHaveLength(sourceHistory.length);
    expect(await rt.client.threads.getHistory(copy.thread_id)).toHaveLength(
      sourceHistory.length + 1,
    );
    await rt.client.threads.delete(source.thread_id);
    expect((await rt.client.threads.getState<Values>(copy.thread_id)).values.messages).toHaveLength(
      3,
    );
  });
});

describe('thread errors', () => {
  it('answers malformed ids with 422 and unknown ids with 404', async () => {
    const malformed = await rt.http('/threads/123/state');
    expect(malformed.status).toBe(422);
    expect(await malformed.json()).toEqual({
      detail: [
        {
          loc: ['path', 'thread_id'],
          msg: 'Invalid thread ID: must be a UUID',
          type: 'invalid_format',
        },
      ],
    });
    const id = crypto.randomUUID();
    for (const [method, path] of [
      ['GET', `/threads/${id}`],
      ['GET', `/threads/${id}/state`],
      ['PATCH', `/threads/${id}`],
      ['DELETE', `/threads/${id}`],
      ['POST', `/threads/${id}/copy`],
    ] as const) {
      const res = await rt.http(path, { method, ...(method === 'PATCH' ? { json: {} } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.json()).toEqual({ detail: `Thread with ID ${id} not found` });
    }
  });

  it('rejects bad bodies with 422 and a loc for each problem', async () => {
    const res = await rt.http('/threads/search', {
      method: 'POST',
      json: { status: 'sleeping', limit: 0 },
    });
    expect(res.status).toBe(422);
    const { detail } = (await res.json()) as { detail: { loc: unknown[] }[] };
    expect(detail.map((d) => d.loc)).toEqual(
      expect.arrayContaining([
        ['body', 'status'],
        ['body', 'limit'],
      ]),
    );
  });

  it('refuses supersteps without a graph and leaves no thread behind', async () => {
    const id = crypto.randomUUID();
    const res = await rt.http('/threads', {
      method: 'POST',
      json: { thread_id: id, supersteps: [{ updates: [{ values: {}, as_node: '__start__' }] }] },
    });
    expect(res.status).toBe(400);
    // The answer says where the graph goes: a graph_id beside the body's fields is not read.
    expect(((await res.json()) as { detail: string }).detail).toContain('metadata.graph_id');
    expect((await rt.http(`/threads/${id}`)).status).toBe(404);
    const bad = await rt.http('/threads', {
      method: 'POST',
      json: {
        thread_id: id,
        metadata: { graph_id: 'echo' },
        supersteps: [{ updates: [{ values: {}, as_node: 'nope' }] }],
      },
    });
    expect(bad.status).toBe(400);
    expect((await rt.http(`/threads/${id}`)).status).toBe(404);
  });
});
