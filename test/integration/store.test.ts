// The store through the official JS SDK (`client.store.*`) and raw HTTP: CRUD, filtered and
// semantic search, namespaces, item TTL and its sweep, and graphs using the same store.
import { join } from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPool, withTransaction } from '../../common/db/index.js';
import { ItemStore } from '../../runtime/store/index.js';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT } from '../support/server.js';
import { embedText } from '../fixtures/store/embed.js';

const rt = useRuntime({ config: join(REPO_ROOT, 'test', 'fixtures', 'store', 'langgraph.json') });

/** A namespace no other test touches. */
const fresh = (label: string) => [label, crypto.randomUUID().slice(0, 8)];

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function cosine(a: string, b: string): number {
  const [x, y] = [embedText(a), embedText(b)];
  const dot = x.reduce((sum, v, i) => sum + v * (y[i] ?? 0), 0);
  return dot / (Math.hypot(...x) * Math.hypot(...y));
}

async function rowCount(sql: string, params: unknown[]): Promise<number> {
  const client = new pg.Client({ connectionString: rt.db.url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rowCount ?? 0;
  } finally {
    await client.end();
  }
}

describe('items', () => {
  it('puts, gets, replaces and deletes an item', async () => {
    const ns = fresh('crud');
    await rt.client.store.putItem(ns, 'k1', { text: 'first', n: 1 });
    const item = await rt.client.store.getItem(ns, 'k1');
    expect(item).toMatchObject({ namespace: ns, key: 'k1', value: { text: 'first', n: 1 } });
    expect(Date.parse(item?.createdAt ?? '')).not.toBeNaN();

    await new Promise((r) => setTimeout(r, 20));
    await rt.client.store.putItem(ns, 'k1', { text: 'second' });
    const replaced = await rt.client.store.getItem(ns, 'k1');
    expect(replaced?.value).toEqual({ text: 'second' });
    expect(replaced?.createdAt).toBe(item?.createdAt);
    expect(Date.parse(replaced?.updatedAt ?? '')).toBeGreaterThan(
      Date.parse(item?.updatedAt ?? ''),
    );

    await rt.client.store.deleteItem(ns, 'k1');
    expect(await rt.client.store.getItem(ns, 'k1')).toBeNull();
  });

  it('answers 200 null for a missing item and keeps namespaces apart', async () => {
    const ns = fresh('apart');
    await rt.client.store.putItem([...ns, 'a'], 'same', { v: 'a' });
    await rt.client.store.putItem([...ns, 'b'], 'same', { v: 'b' });
    expect((await rt.client.store.getItem([...ns, 'a'], 'same'))?.value).toEqual({ v: 'a' });
    expect((await rt.client.store.getItem([...ns, 'b'], 'same'))?.value).toEqual({ v: 'b' });
    const res = await rt.http(`/store/items?namespace=${ns.join('.')}.c&key=same`);
    expect(res.status).toBe(200);
    expect(await res.json()).toBeNull();
  });

  it('refuses bad input with the right status and a clear reason', async () => {
    const put = (json: unknown) => rt.http('/store/items', { method: 'PUT', json });
    const noNamespace = await put({ namespace: [], key: 'k', value: {} });
    expect(noNamespace.status).toBe(422);
    expect(JSON.stringify(await noNamespace.json())).toContain('Namespace is required');
    const dotted = await put({ namespace: ['a.b'], key: 'k', value: {} });
    expect(dotted.status).toBe(422);
    expect(JSON.stringify(await dotted.json())).toContain('periods');
    expect((await put({ namespace: ['a'], key: 'k', value: 'text' })).status).toBe(422);
    expect((await put({ namespace: ['a'], key: 'k', value: {}, ttl: -1 })).status).toBe(422);

    const noKey = await rt.http('/store/items?namespace=a');
    expect(noKey.status).toBe(400);
    expect(await noKey.json()).toEqual({ error: 'Key is required' });
    // Reads name a namespace, as writes must: the root and empty labels hold no item.
    for (const [query, reason] of [
      ['key=k', 'Namespace is required'],
      ['namespace=&key=k', 'Namespace labels cannot be empty'],
      ['namespace=a..b&key=k', 'Namespace labels cannot be empty'],
    ]) {
      const res = await rt.http(`/store/items?${query}`);
      expect(res.status, query).toBe(422);
      const body = (await res.json()) as { detail: { loc: string[]; msg: string }[] };
      expect(body.detail[0], query).toMatchObject({ loc: ['query', 'namespace'], msg: reason });
    }
    await expect(rt.client.store.getItem([], 'k')).rejects.toThrow(/422/);

    const badOperator = await rt.http('/store/items/search', {
      method: 'POST',
      json: { namespace_prefix: ['a'], filter: { n: { $near: 1 } } },
    });
    expect(badOperator.status).toBe(422);
    expect(JSON.stringify(await badOperator.json())).toContain('$near');
    await expect(rt.client.store.putItem(['a.b'], 'k', {})).rejects.toThrow(/periods/);
  });
});

describe('search', () => {
  it('finds items under a namespace prefix, filtered, newest first, paged', async () => {
    const ns = fresh('search');
    await rt.client.store.putItem([...ns, 'docs'], 'a', { kind: 'note', n: 1, tags: { x: 1 } });
    await rt.client.store.putItem([...ns, 'docs'], 'b', { kind: 'note', n: 5 });
    await rt.client.store.putItem([...ns, 'docs', 'deep'], 'c', { kind: 'task', n: 3 });
    // Shares the text prefix "search.<id>" but is not below the namespace.
    await rt.client.store.putItem([ns[0] ?? '', `${ns[1]}x`], 'd', { kind: 'note', n: 9 });

    const all = await rt.client.store.searchItems(ns);
    expect(all.items.map((i) => i.key)).toEqual(['c', 'b', 'a']);
    const notes = await rt.client.store.searchItems(ns, { filter: { kind: 'note' } });
    expect(notes.items.map((i) => i.key)).toEqual(['b', 'a']);
    const big = await rt.client.store.searchItems(ns, { filter: { n: { $gte: 3 } } });
    expect(big.items.map((i) => i.key).sort()).toEqual(['b', 'c']);
    const range = await rt.client.store.searchItems(ns, { filter: { n: { $gt: 1, $lt: 5 } } });
    expect(range.items.map((i) => i.key)).toEqual(['c']);
    const notNote = await rt.client.store.searchItems(ns, { filter: { kind: { $ne: 'note' } } });
    expect(notNote.items.map((i) => i.key)).toEqual(['c']);
    const nested = await rt.client.store.searchItems(ns, { filter: { 'tags.x': 1 } });
    expect(nested.items.map((i) => i.key)).toEqual(['a']);
    const page = await rt.client.store.searchItems(ns, { limit: 1, offset: 1 });
    expect(page.items.map((i) => i.key)).toEqual(['b']);
    const deep = await rt.client.store.searchItems([...ns, 'docs', 'deep']);
    expect(deep.items.map((i) => i.key)).toEqual(['c']);
    // Without a query there is nothing to score, but the field is there (the Python SDK's
    // SearchItem requires it).
    expect(all.items[0]).toHaveProperty('score', null);
  });

  it('ranks by meaning with the configured embedding function', async () => {
    const ns = fresh('semantic');
    await rt.client.store.putItem(ns, 'cats', { text: 'cats purr and sleep all day' });
    await rt.client.store.putItem(ns, 'rockets', { text: 'rockets launch into orbit' });
    await rt.client.store.putItem(ns, 'bread', { text: 'bakers knead bread dough' });
    // Not embedded: ranked after every embedded item.
    await rt.client.store.putItem(ns, 'plain', { text: 'cats cats cats' }, { index: false });

    const cats = await rt.client.store.searchItems(ns, { query: 'sleepy cats purr' });
    expect(cats.items[0]?.key).toBe('cats');
    expect(cats.items.at(-1)).toMatchObject({ key: 'plain', score: null });
    // The score is the cosine similarity of the query's and the text's embeddings.
    expect(cats.items[0]?.score).toBeCloseTo(
      cosine('sleepy cats purr', 'cats purr and sleep all day'),
      9,
    );
    const rockets = await rt.client.store.searchItems(ns, { query: 'launch rockets', limit: 1 });
    expect(rockets.items.map((i) => i.key)).toEqual(['rockets']);
    // Filters and the query combine.
    const filtered = await rt.client.store.searchItems(ns, {
      query: 'cats',
      filter: { text: 'bakers knead bread dough' },
    });
    expect(filtered.items.map((i) => i.key)).toEqual(['bread']);
  });

  it('re-embeds an item when it is replaced, using per-item fields when given', async () => {
    const ns = fresh('reindex');
    const value = { text: 'rockets launch', other: 'cats purr' };
    await rt.client.store.putItem(ns, 'x', value);
    const score = async () =>
      (await rt.client.store.searchItems(ns, { query: 'cats purr' })).items[0]?.score ?? 0;
    expect(await score()).toBeLessThan(0.9);
    await rt.client.store.putItem(ns, 'x', value, { index: ['other'] });
    expect(await score()).toBeCloseTo(1, 5);
  });
});

describe('vector scoring in SQL', () => {
  const unit = (v: number[]) => {
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
  const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * (b[i] ?? 0), 0);

  it('gives the exact cosine for vectors longer than one 100-dimension slice, and 0 for zero vectors', async () => {
    const pool = createPool({ url: rt.db.url, max: 2 });
    try {
      const items = new ItemStore(pool);
      const ns = fresh('vectors');
      const dims = 250;
      const vectors = Array.from({ length: 5 }, () =>
        unit(Array.from({ length: dims }, () => Math.random() - 0.5)),
      );
      const zero = new Array<number>(dims).fill(0);
      await withTransaction(pool, async (db) => {
        for (const [i, v] of [...vectors, zero].entries()) {
          await items.put(
            {
              namespace: ns,
              key: `v${i}`,
              value: { i },
              ttlMinutes: null,
              vectors: [{ field: '$', part: 0, embedding: v }],
            },
            db,
          );
        }
      });
      const query = unit(Array.from({ length: dims }, () => Math.random() - 0.5));
      const search = (vector: number[]) =>
        items.search({ prefix: ns, conditions: [], limit: 10, offset: 0, vector, refresh: false });

      const found = await search(query);
      // The zero vector scores 0, so it ranks above any negative cosine.
      const expected = [...vectors.map((v) => dot(v, query)), 0]
        .map((score, i) => ({ key: `v${i}`, score }))
        .sort((a, b) => b.score - a.score);
      expect(found.map((r) => r.key)).toEqual(expected.map((e) => e.key));
      found.forEach((r, i) => expect(r.score).toBeCloseTo(expected[i]?.score ?? NaN, 9));
      expect((await search(vectors[2] ?? []))[0]).toMatchObject({ key: 'v2' });
      expect((await search(vectors[2] ?? []))[0]?.score).toBeCloseTo(1, 12);
      for (const row of await search(zero)) expect(row.score).toBeCloseTo(0, 12);
    } finally {
      await pool.end();
    }
  });
});

describe('namespaces', () => {
  it('lists namespaces by prefix, suffix, wildcard and depth, paged', async () => {
    const [root, id] = fresh('nslist') as [string, string];
    for (const path of [
      [root, id, 'users', 'ada', 'prefs'],
      [root, id, 'users', 'bob', 'prefs'],
      [root, id, 'users', 'bob', 'notes'],
      [root, id, 'teams', 'core'],
    ]) {
      await rt.client.store.putItem(path, 'k', { v: 1 });
    }
    const list = (opts: Parameters<Client['store']['listNamespaces']>[0]) =>
      rt.client.store.listNamespaces(opts).then((r) => r.namespaces);

    expect(await list({ prefix: [root, id] })).toEqual([
      [root, id, 'teams', 'core'],
      [root, id, 'users', 'ada', 'prefs'],
      [root, id, 'users', 'bob', 'notes'],
      [root, id, 'users', 'bob', 'prefs'],
    ]);
    expect(await list({ prefix: [root, id], suffix: ['prefs'] })).toEqual([
      [root, id, 'users', 'ada', 'prefs'],
      [root, id, 'users', 'bob', 'prefs'],
    ]);
    expect(await list({ prefix: [root, id, '*', 'bob'] })).toEqual([
      [root, id, 'users', 'bob', 'notes'],
      [root, id, 'users', 'bob', 'prefs'],
    ]);
    expect(await list({ prefix: [root, id], maxDepth: 3 })).toEqual([
      [root, id, 'teams'],
      [root, id, 'users'],
    ]);
    expect(await list({ prefix: [root, id], limit: 2, offset: 1 })).toEqual([
      [root, id, 'users', 'ada', 'prefs'],
      [root, id, 'users', 'bob', 'notes'],
    ]);
    expect(await list({ prefix: [root, id], suffix: ['*', 'notes'] })).toEqual([
      [root, id, 'users', 'bob', 'notes'],
    ]);
  });
});

describe('item TTL', () => {
  it('hides an expired item, sweeps it from the table, and refreshes TTL on read', async () => {
    const ns = fresh('ttl');
    // 0.02 minutes = 1.2 s.
    await rt.client.store.putItem(ns, 'short', { v: 1 }, { ttl: 0.02 });
    await rt.client.store.putItem(ns, 'kept', { v: 2 }, { ttl: 0.02 });
    await rt.client.store.putItem(ns, 'forever', { v: 3 });
    expect((await rt.client.store.getItem(ns, 'short'))?.value).toEqual({ v: 1 });

    // Reading `kept` every 300 ms pushes its expiry back each time; `short` is never read again.
    const started = Date.now();
    while (Date.now() - started < 2_500) {
      await rt.client.store.getItem(ns, 'kept');
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(await rt.client.store.getItem(ns, 'short', { refreshTtl: false })).toBeNull();
    expect((await rt.client.store.getItem(ns, 'kept'))?.value).toEqual({ v: 2 });
    const found = await rt.client.store.searchItems(ns);
    expect(found.items.map((i) => i.key).sort()).toEqual(['forever', 'kept']);

    // The sweeper (every 0.6 s in this config) deletes the expired row itself.
    const left = await eventually(
      () => rowCount('SELECT 1 FROM store_items WHERE namespace = $1 AND key = $2', [ns, 'short']),
      (n) => n === 0,
    );
    expect(left).toBe(0);
  });

  it('does not refresh when the reader opts out', async () => {
    const ns = fresh('norefresh');
    await rt.client.store.putItem(ns, 'k', { v: 1 }, { ttl: 0.03 });
    const started = Date.now();
    while (Date.now() - started < 2_500) {
      await rt.client.store.getItem(ns, 'k', { refreshTtl: false });
      await rt.client.store.searchItems(ns, { refreshTtl: false });
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(await rt.client.store.getItem(ns, 'k')).toBeNull();
  });
});

describe('graphs share the store', () => {
  it('lets a node write and read the store the API serves, across threads', async () => {
    const user = `user-${crypto.randomUUID().slice(0, 8)}`;
    const client = new Client({
      apiUrl: rt.url,
      apiKey: null,
      defaultHeaders: { 'x-user-id': user },
    });
    await client.store.putItem(['memories', user], 'from-api', { fact: 'likes tea' });

    const first = await client.threads.create();
    const said = await client.runs.wait(first.thread_id, 'memory', {
      input: { messages: [{ role: 'user', content: 'remember lives in Lyon' }] },
    });
    const reply = (said as { messages: { content: string }[] }).messages.at(-1)?.content;
    expect(reply).toBe('I remember: likes tea; lives in Lyon');

    const written = await client.store.searchItems(['memories', user], {
      filter: { fact: 'lives in Lyon' },
    });
    expect(written.items).toHaveLength(1);

    // Another thread, same user: the memory is there; another user sees nothing.
    const second = await client.threads.create();
    const recalled = await client.runs.wait(second.thread_id, 'memory', {
      input: { messages: [{ role: 'user', content: 'what do you know?' }] },
    });
    expect((recalled as { messages: { content: string }[] }).messages.at(-1)?.content).toBe(
      'I remember: likes tea; lives in Lyon',
    );
    const stranger = await rt.client.runs.wait(null, 'memory', {
      input: { messages: [{ role: 'user', content: 'hello' }] },
      config: { configurable: { user_id: `${user}-other` } },
    });
    expect((stranger as { messages: { content: string }[] }).messages.at(-1)?.content).toBe(
      'I remember: nothing',
    );
  });
});
