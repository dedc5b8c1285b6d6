// Inputs PostgreSQL cannot take as they are, against a real server and database: NUL characters
// and lone surrogates (kept exactly in what a graph sees, a 422 naming the field elsewhere),
// huge TTLs, and JSON nested deeper than the limit. None of them may be a 500 (docs/limits.md).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, MAX_TTL_MINUTES } from '../../common/limits/index.js';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT } from '../support/server.js';

const rt = useRuntime({ config: join(REPO_ROOT, 'test', 'fixtures', 'store', 'langgraph.json') });

const NUL = 'a\u0000b';
const LONE = 'x\ud800y';
/** Strings the storage encoding must not confuse with its own marks (U+FDD0) or escapes. */
const TRICKY = [
  NUL,
  LONE,
  '\udc00z',
  '\ufdd0',
  '\ufdd0\ufdd0d800',
  '\ufdd00000',
  'back\\u0000slash',
];
const TEXT = TRICKY.join('|');

type Json = Record<string, unknown>;

async function send(method: string, path: string, body?: unknown, raw?: string) {
  const res = await rt.http(path, {
    method,
    ...(raw !== undefined
      ? { body: raw, headers: { 'content-type': 'application/json' } }
      : body !== undefined
        ? { json: body }
        : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as unknown };
}

const userInput = (content: unknown) => ({ messages: [{ role: 'user', content }] });
const lastContent = (values: unknown) =>
  ((values as { messages: { content: unknown }[] }).messages.at(-1) ?? {}).content;

async function threadWithRun(): Promise<string> {
  const { thread_id } = await rt.client.threads.create();
  await rt.client.runs.wait(thread_id, 'echo', { input: userInput('hi') });
  return thread_id;
}

describe('values a graph sees keep NUL, lone surrogates and U+FDD0 exactly', () => {
  it('run input, the state the graph writes, the run record and the stored stream', async () => {
    const { thread_id } = await rt.client.threads.create();
    const input = {
      messages: [{ role: 'user', content: TEXT, additional_kwargs: { [NUL]: LONE } }],
    };
    const run = await rt.client.runs.create(thread_id, 'echo', {
      input,
      streamMode: ['values'],
      streamResumable: true,
    });
    await rt.client.runs.join(thread_id, run.run_id);

    const state = await rt.client.threads.getState(thread_id);
    const messages = (state.values as { messages: Json[] }).messages;
    expect(messages[0]).toMatchObject({ content: TEXT, additional_kwargs: { [NUL]: LONE } });
    expect(messages[1]?.content).toBe(`echo: ${TEXT}`);
    expect(lastContent((await rt.client.threads.get(thread_id)).values)).toBe(`echo: ${TEXT}`);
    const [history] = await rt.client.threads.getHistory(thread_id, { limit: 1 });
    expect(lastContent(history?.values)).toBe(`echo: ${TEXT}`);

    const stored = await send('GET', `/threads/${thread_id}/runs/${run.run_id}`);
    expect((stored.body as { kwargs: { input: unknown } }).kwargs.input).toEqual(input);

    // Replayed from the event log in the database, not from memory.
    const values: unknown[] = [];
    for await (const part of rt.client.runs.joinStream(thread_id, run.run_id, {
      lastEventId: '-1',
    }))
      if (part.event === 'values') values.push(part.data);
    expect(values.length).toBeGreaterThan(0);
    expect(lastContent(values.at(-1))).toBe(`echo: ${TEXT}`);
  });

  it('state updates, store items, cron payloads and assistant config and context', async () => {
    const threadId = await threadWithRun();
    await rt.client.threads.updateState(threadId, {
      values: { messages: [{ role: 'user', content: TEXT, id: 'hostile' }] },
      asNode: 'echo',
    });
    expect(lastContent((await rt.client.threads.getState(threadId)).values)).toBe(TEXT);
    const seeded = await rt.client.threads.create({
      graphId: 'echo',
      supersteps: [{ updates: [{ values: userInput(TEXT), asNode: '__start__' }] }],
    });
    expect(lastContent(seeded.values)).toBe(TEXT);

    const namespace = ['hostile', randomUUID().slice(0, 8)];
    const value = { text: TEXT, [TEXT]: [NUL, { [LONE]: '\ufdd0' }], marker: '\ufdd0' };
    await rt.client.store.putItem(namespace, 'item', value);
    expect((await rt.client.store.getItem(namespace, 'item'))?.value).toEqual(value);
    // A filter is stored-side encoded too, so it still matches a value holding U+FDD0.
    const found = await rt.client.store.searchItems(namespace, { filter: { marker: '\ufdd0' } });
    expect(found.items.map((i) => i.key)).toEqual(['item']);

    const cron = await send('POST', '/runs/crons', {
      assistant_id: 'echo',
      schedule: '0 0 1 1 *',
      input: userInput(TEXT),
    });
    expect(cron.status).toBe(200);
    const crons = await send('POST', '/runs/crons/search', { limit: 100 });
    const mine = (crons.body as { cron_id: string; payload: Json }[]).find(
      (c) => c.cron_id === (cron.body as { cron_id: string }).cron_id,
    );
    expect(mine?.payload.input).toEqual(userInput(TEXT));

    const assistant = await rt.client.assistants.create({
      graphId: 'echo',
      config: { configurable: { text: TEXT } },
      context: { [TEXT]: LONE },
    });
    const read = await rt.client.assistants.get(assistant.assistant_id);
    expect(read.config.configurable).toEqual({ text: TEXT });
    expect(read.context).toEqual({ [TEXT]: LONE });
  });

  it('A2A text parts reach the graph and come back unchanged', async () => {
    const res = await send('POST', '/a2a/echo', {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: {
        message: { role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text: TEXT }] },
      },
    });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).not.toContain('"error"');
    const texts = JSON.stringify(res.body);
    expect(texts).toContain(JSON.stringify(`echo: ${TEXT}`).slice(1, -1));
  });
});

describe('strings the database cannot hold elsewhere', () => {
  it('are a 422 naming the field, in the body, the path and the query', async () => {
    const threadId = await threadWithRun();
    const run = { assistant_id: 'echo', input: userInput('x') };
    const cases: [string, string, unknown, (string | number)[]][] = [
      ['POST', '/threads', { metadata: { k: NUL } }, ['body', 'metadata', 'k']],
      ['POST', '/threads', { metadata: { [NUL]: 1 } }, ['body', 'metadata', NUL]],
      ['PATCH', `/threads/${threadId}`, { metadata: { k: LONE } }, ['body', 'metadata', 'k']],
      ['POST', '/threads/search', { values: { k: NUL } }, ['body', 'values', 'k']],
      ['POST', '/threads/count', { metadata: { k: LONE } }, ['body', 'metadata', 'k']],
      ['POST', `/threads/${threadId}/history`, { metadata: { k: NUL } }, ['body', 'metadata', 'k']],
      ['POST', `/threads/${threadId}/state`, { values: {}, as_node: NUL }, ['body', 'as_node']],
      ['POST', '/assistants', { graph_id: 'echo', name: NUL }, ['body', 'name']],
      ['POST', '/assistants/search', { metadata: { k: LONE } }, ['body', 'metadata', 'k']],
      [
        'POST',
        `/threads/${threadId}/runs/wait`,
        { ...run, metadata: { k: NUL } },
        ['body', 'metadata', 'k'],
      ],
      ['POST', '/runs/batch', [{ ...run, metadata: { k: LONE } }], ['body', 0, 'metadata', 'k']],
      // Inside carried members, what ends up in text columns: the checkpoint address, node names.
      [
        'POST',
        '/runs/wait',
        { ...run, config: { configurable: { checkpoint_id: NUL } } },
        ['body', 'config', 'configurable', 'checkpoint_id'],
      ],
      [
        'POST',
        `/threads/${threadId}/runs/wait`,
        { assistant_id: 'echo', command: { goto: NUL } },
        ['body', 'command', 'goto'],
      ],
      [
        'POST',
        '/runs/crons',
        { assistant_id: 'echo', schedule: '0 0 1 1 *', metadata: { k: NUL } },
        ['body', 'metadata', 'k'],
      ],
      [
        'PUT',
        '/store/items',
        { namespace: ['a', NUL], key: 'k', value: {} },
        ['body', 'namespace', 1],
      ],
      ['PUT', '/store/items', { namespace: ['a'], key: LONE, value: {} }, ['body', 'key']],
      [
        'POST',
        '/store/items/search',
        { namespace_prefix: ['a'], filter: { f: NUL } },
        ['body', 'filter', 'f'],
      ],
      [
        'GET',
        `/store/items?namespace=a&key=${encodeURIComponent(NUL)}`,
        undefined,
        ['query', 'key'],
      ],
      [
        'GET',
        `/threads/${threadId}/state/${encodeURIComponent(NUL)}`,
        undefined,
        ['path', 'checkpoint_id'],
      ],
    ];
    for (const [method, path, body, loc] of cases) {
      const res = await send(method, path, body);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 422 });
      expect((res.body as { detail: unknown[] }).detail).toContainEqual(
        expect.objectContaining({ loc, type: 'string_unstorable' }),
      );
    }
    // Nothing was written by the refused create.
    expect(await rt.client.threads.count({ metadata: { k: 'a' } })).toBe(0);
  });

  it('are -32602 naming the member over A2A', async () => {
    const res = await send('POST', '/a2a/echo', {
      jsonrpc: '2.0',
      id: 7,
      method: 'message/send',
      params: { message: { role: 'user', messageId: NUL, parts: [{ kind: 'text', text: 'x' }] } },
    });
    expect(res.body).toMatchObject({ id: 7, error: { code: -32602 } });
    expect(JSON.stringify(res.body)).toContain('params.message.messageId');
  });
});

describe('numbers beyond the documented bounds', () => {
  it('a ttl beyond 100 years is a 422 for threads and store items; the bound itself is accepted', async () => {
    const threadId = (await rt.client.threads.create()).thread_id;
    for (const ttl of [5e307, 6e16, MAX_TTL_MINUTES + 1]) {
      for (const [method, path, body] of [
        ['POST', '/threads', { ttl }],
        ['POST', '/threads', { ttl: { ttl, strategy: 'delete' } }],
        ['PATCH', `/threads/${threadId}`, { ttl }],
        ['PUT', '/store/items', { namespace: ['ttl'], key: 'k', value: {}, ttl }],
      ] as const) {
        const res = await send(method, path, body);
        expect({ path, ttl, status: res.status }).toEqual({ path, ttl, status: 422 });
        expect(JSON.stringify(res.body)).toContain('"ttl"');
      }
    }
    expect((await send('POST', '/threads', { ttl: MAX_TTL_MINUTES })).status).toBe(200);
    expect((await send('PATCH', `/threads/${threadId}`, { ttl: MAX_TTL_MINUTES })).status).toBe(
      200,
    );
    const put = { namespace: ['ttl'], key: 'k', value: {}, ttl: MAX_TTL_MINUTES };
    expect((await send('PUT', '/store/items', put)).status).toBe(204);
  });

  it('a run delayed beyond the bound is a 422, and so is an assistant version beyond int4', async () => {
    const threadId = (await rt.client.threads.create()).thread_id;
    const late = await send('POST', `/threads/${threadId}/runs`, {
      assistant_id: 'echo',
      after_seconds: 6e16,
    });
    expect(late.status).toBe(422);
    expect(JSON.stringify(late.body)).toContain('after_seconds');
    const assistant = await rt.client.assistants.create({ graphId: 'echo' });
    const latest = await send('POST', `/assistants/${assistant.assistant_id}/latest`, {
      version: 2 ** 31,
    });
    expect(latest.status).toBe(422);
    expect(JSON.stringify(latest.body)).toContain('version');
  });
});

describe('JSON nested deeper than the limit', () => {
  const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

  it('is a 422 before any work is done, and up to the limit works end to end', async () => {
    const threadId = (await rt.client.threads.create()).thread_id;
    for (const raw of [
      `{"metadata":{"k":${nested(10_000)}}}`,
      `{"metadata":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`,
    ]) {
      const res = await send('POST', '/threads', undefined, raw);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [expect.objectContaining({ loc: ['body'], type: 'json_too_deep' })],
      });
    }
    const run = `{"assistant_id":"echo","input":{"messages":[{"role":"user","content":${nested(10_000)}}]}}`;
    expect((await send('POST', `/threads/${threadId}/runs/wait`, undefined, run)).status).toBe(422);
    expect(await rt.client.runs.list(threadId)).toEqual([]);

    // The body, the value and MAX_JSON_DEPTH - 2 arrays: exactly at the limit.
    const key = randomUUID();
    const atLimit = `{"namespace":["deep"],"key":"${key}","value":{"v":${nested(MAX_JSON_DEPTH - 2)}}}`;
    expect((await send('PUT', '/store/items', undefined, atLimit)).status).toBe(204);
    const item = await rt.client.store.getItem(['deep'], key);
    expect(JSON.stringify(item?.value)).toBe(`{"v":${nested(MAX_JSON_DEPTH - 2)}}`);
    const over = `{"namespace":["deep"],"key":"${key}","value":{"v":${nested(MAX_JSON_DEPTH - 1)}}}`;
    expect((await send('PUT', '/store/items', undefined, over)).status).toBe(422);

    // A run's input as deep as the limit allows goes through the graph and the checkpointer.
    const deepKwargs = `{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"deep","additional_kwargs":{"d":${nested(MAX_JSON_DEPTH - 6)}}}]}}`;
    const ok = await send('POST', `/threads/${threadId}/runs/wait`, undefined, deepKwargs);
    expect(ok.status).toBe(200);
    expect(lastContent(ok.body)).toBe('echo: deep');
  });

  it('is -32600 over A2A', async () => {
    const raw = `{"jsonrpc":"2.0","id":3,"method":"message/send","params":{"message":{"role":"user","messageId":"m","parts":[{"kind":"data","data":{"d":${nested(10_000)}}}]}}}`;
    const res = await send('POST', '/a2a/echo', undefined, raw);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ error: { code: -32600 } });
  });
});

describe('every operation with hostile values', () => {
  const DEEP = '__deep__';
  const deepText = '['.repeat(10_000) + ']'.repeat(10_000);
  /** NUL and a lone surrogate cannot be percent-encoded as UTF-8; the surrogate's bytes stand in. */
  const inUrl = (v: string) => (v === LONE ? 'x%ED%A0%80y' : encodeURIComponent(v));

  async function answer(method: string, path: string, body: unknown) {
    const text =
      body === undefined ? undefined : JSON.stringify(body).replaceAll(`"${DEEP}"`, deepText);
    const res = await rt.http(path, {
      method,
      ...(text === undefined
        ? {}
        : { body: text, headers: { 'content-type': 'application/json' } }),
    });
    return { status: res.status, text: await res.text() };
  }

  it('never answers 5xx (or -32603 over A2A)', { timeout: 180_000 }, async () => {
    const thread = await threadWithRun();
    const assistant = (await rt.client.assistants.create({ graphId: 'echo' })).assistant_id;
    const cron = (await rt.client.crons.create('echo', { schedule: '0 0 1 1 *' })).cron_id;
    const run = (await rt.client.runs.list(thread))[0]?.run_id ?? '';
    const runBody = (extra: Json) => ({ assistant_id: 'echo', input: userInput('x'), ...extra });
    const rpc = (method: string, params: Json) => ({ jsonrpc: '2.0', id: 1, method, params });
    const message = (extra: Json) => ({
      message: {
        role: 'user',
        messageId: randomUUID(),
        parts: [{ kind: 'text', text: 'x' }],
        ...extra,
      },
    });
    const operations: ((v: string) => [string, string, unknown?])[] = [
      (v) => [
        'POST',
        '/assistants',
        { graph_id: 'echo', name: v, metadata: { [v]: v }, config: { configurable: { v } } },
      ],
      (v) => ['POST', '/assistants', { graph_id: v, description: v, context: { v } }],
      (v) => ['POST', '/assistants/search', { metadata: { v }, graph_id: v, name: v }],
      (v) => ['POST', '/assistants/count', { metadata: { v }, name: v }],
      (v) => ['GET', `/assistants/${inUrl(v)}`],
      (v) => [
        'PATCH',
        `/assistants/${assistant}`,
        { name: v, metadata: { v }, config: { configurable: { v } } },
      ],
      (v) => ['DELETE', `/assistants/${inUrl(v)}`],
      (v) => ['GET', `/assistants/${inUrl(v)}/graph`],
      (v) => ['GET', `/assistants/${inUrl(v)}/schemas`],
      (v) => ['GET', `/assistants/${inUrl(v)}/subgraphs`],
      (v) => ['GET', `/assistants/${assistant}/subgraphs/${inUrl(v)}`],
      (v) => ['POST', `/assistants/${assistant}/versions`, { metadata: { v } }],
      (v) => ['POST', `/assistants/${inUrl(v)}/latest`, { version: 1 }],
      (v) => ['POST', '/threads', { metadata: { [v]: v } }],
      (v) => [
        'POST',
        '/threads',
        {
          thread_id: randomUUID(),
          supersteps: [{ updates: [{ values: userInput(v), as_node: v }] }],
        },
      ],
      (v) => ['POST', '/threads/search', { metadata: { v }, values: { v } }],
      (v) => ['POST', '/threads/count', { metadata: { v }, values: { v } }],
      (v) => ['POST', '/threads/prune', { thread_ids: [v] }],
      (v) => ['GET', `/threads/${inUrl(v)}`],
      (v) => ['PATCH', `/threads/${thread}`, { metadata: { v } }],
      (v) => ['DELETE', `/threads/${inUrl(v)}`],
      (v) => ['POST', `/threads/${inUrl(v)}/copy`],
      (v) => ['GET', `/threads/${thread}/state?subgraphs=${inUrl(v)}`],
      (v) => ['POST', `/threads/${thread}/state`, { values: userInput(v), as_node: 'echo' }],
      (v) => ['POST', `/threads/${thread}/state`, { values: {}, as_node: v, checkpoint_id: v }],
      (v) => ['GET', `/threads/${thread}/state/${inUrl(v)}`],
      (v) => [
        'POST',
        `/threads/${thread}/state/checkpoint`,
        { checkpoint: { checkpoint_id: v, checkpoint_ns: v } },
      ],
      (v) => [
        'POST',
        `/threads/${thread}/history`,
        { metadata: { v }, before: v, checkpoint: { checkpoint_id: v } },
      ],
      (v) => ['GET', `/threads/${thread}/history?before=${inUrl(v)}`],
      (v) => ['POST', `/threads/${thread}/runs`, runBody({ input: userInput(v), metadata: { v } })],
      (v) => [
        'POST',
        `/threads/${thread}/runs`,
        runBody({ checkpoint_id: v, webhook: `http://example.com/${v}` }),
      ],
      (v) => ['GET', `/threads/${thread}/runs?status=${inUrl(v)}`],
      (v) => [
        'POST',
        `/threads/${thread}/runs/wait`,
        runBody({ input: userInput(v), config: { configurable: { v } }, context: { v } }),
      ],
      (v) => [
        'POST',
        `/threads/${thread}/runs/wait`,
        { assistant_id: 'echo', command: { resume: v, update: userInput(v) } },
      ],
      (v) => [
        'POST',
        `/threads/${thread}/runs/wait`,
        runBody({ interrupt_before: [v], feedback_keys: [v] }),
      ],
      (v) => ['POST', `/threads/${thread}/runs/stream`, runBody({ input: userInput(v) })],
      (v) => ['GET', `/threads/${thread}/runs/${inUrl(v)}`],
      (v) => ['DELETE', `/threads/${thread}/runs/${inUrl(v)}`],
      (v) => ['GET', `/threads/${thread}/runs/${run}/join?cancel_on_disconnect=${inUrl(v)}`],
      (v) => ['GET', `/threads/${thread}/runs/${inUrl(v)}/stream`],
      (v) => ['GET', `/threads/${thread}/stream?stream_mode=${inUrl(v)}`],
      (v) => ['POST', `/threads/${thread}/runs/${inUrl(v)}/cancel`],
      (v) => ['POST', '/runs', runBody({ input: userInput(v) })],
      (v) => ['POST', '/runs/batch', [runBody({ input: userInput(v), metadata: { v } })]],
      (v) => ['POST', '/runs/cancel', { thread_id: thread, run_ids: [v] }],
      (v) => ['POST', '/runs/wait', runBody({ input: userInput(v), metadata: { v } })],
      (v) => ['POST', '/runs/stream', runBody({ input: userInput(v) })],
      (v) => ['GET', `/runs/${inUrl(v)}/stream`],
      (v) => ['GET', `/threads/${thread}/runs/${inUrl(v)}/webhooks`],
      (v) => ['GET', `/runs/${inUrl(v)}/webhooks`],
      (v) => [
        'POST',
        '/runs/crons',
        { assistant_id: 'echo', schedule: '0 0 1 1 *', input: userInput(v), metadata: { v } },
      ],
      (v) => ['POST', '/runs/crons', { assistant_id: 'echo', schedule: v, timezone: v }],
      (v) => [
        'POST',
        `/threads/${thread}/runs/crons`,
        { assistant_id: 'echo', schedule: '0 0 1 1 *', input: userInput(v) },
      ],
      (v) => ['POST', '/runs/crons/search', { assistant_id: v, metadata: { v } }],
      (v) => ['POST', '/runs/crons/count', { assistant_id: v }],
      (v) => ['GET', `/runs/crons/${inUrl(v)}`],
      (v) => ['PATCH', `/runs/crons/${cron}`, { metadata: { v }, input: userInput(v) }],
      (v) => ['DELETE', `/runs/crons/${inUrl(v)}`],
      (v) => ['PUT', '/store/items', { namespace: ['sweep'], key: 'k', value: { [v]: v } }],
      (v) => ['PUT', '/store/items', { namespace: ['sweep', v], key: v, value: {}, index: [v] }],
      (v) => ['GET', `/store/items?namespace=${inUrl(v)}&key=${inUrl(v)}`],
      (v) => ['DELETE', '/store/items', { namespace: [v], key: v }],
      (v) => [
        'POST',
        '/store/items/search',
        { namespace_prefix: [v], filter: { [v]: { $gt: v } }, query: v },
      ],
      (v) => ['POST', '/store/namespaces', { prefix: [v], suffix: [v] }],
      (v) => [
        'POST',
        `/a2a/${assistant}`,
        rpc('message/send', {
          message: {
            role: 'user',
            messageId: randomUUID(),
            parts: [
              { kind: 'text', text: v },
              { kind: 'data', data: { v } },
            ],
          },
        }),
      ],
      (v) => [
        'POST',
        `/a2a/${assistant}`,
        rpc('message/send', message({ messageId: v, contextId: v, metadata: { v } })),
      ],
      (v) => ['POST', `/a2a/${assistant}`, rpc('tasks/get', { id: v })],
      (v) => ['POST', `/a2a/${inUrl(v)}`, rpc('tasks/cancel', { id: v })],
      (v) => ['GET', `/.well-known/agent-card.json?assistant_id=${inUrl(v)}`],
      (v) => ['GET', `/a2a/${inUrl(v)}/.well-known/agent-card.json`],
    ];
    const failures: string[] = [];
    for (const operation of operations) {
      for (const value of [NUL, LONE, '\ufdd0', DEEP]) {
        const [method, path, body] = operation(value);
        if (value === DEEP && body === undefined) continue;
        const res = await answer(method, path, body);
        if (res.status >= 500 || res.text.includes('-32603'))
          failures.push(
            `${method} ${path} ${JSON.stringify(value)}: ${res.status} ${res.text.slice(0, 120)}`,
          );
      }
    }
    expect(failures).toEqual([]);
  });
});
