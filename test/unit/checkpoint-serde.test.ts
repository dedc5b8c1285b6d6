// The checkpoint serializer reads back exactly what LangGraph's own would: same values, same
// classes, for the values its faster walk takes and for those it hands to the original reader.
import {
  AIMessage,
  AIMessageChunk,
  ChatMessage,
  HumanMessage,
  RemoveMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
} from '@langchain/core/messages';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import { describe, expect, it, vi } from 'vitest';
import { CheckpointSerde } from '../../runtime/checkpoints/serde.js';

const original = new JsonPlusSerializer();
const ours = new CheckpointSerde();

const messages = (): BaseMessage[] => [
  new HumanMessage({ content: 'hi', id: 'h1', name: 'ann', additional_kwargs: { x: 1 } }),
  new HumanMessage({
    content: [
      { type: 'text', text: 'look' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } },
    ],
  }),
  new AIMessage({
    content: '',
    id: 'a1',
    tool_calls: [{ id: 'c1', name: 'add', args: { a: 1, b: [2, 3] }, type: 'tool_call' }],
    invalid_tool_calls: [
      { id: 'c2', name: 'bad', args: '{', error: 'parse', type: 'invalid_tool_call' },
    ],
    usage_metadata: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
    response_metadata: { model_name: 'fake', finish_reason: 'stop' },
  }),
  new AIMessageChunk({
    content: 'par',
    id: 'k1',
    tool_call_chunks: [{ name: 'add', args: '{"a"', index: 0 }],
  }),
  new SystemMessage({ content: 'be brief' }),
  new ToolMessage({
    content: '5',
    tool_call_id: 'c1',
    name: 'add',
    artifact: { raw: [5] },
    status: 'success',
  }),
  new ChatMessage({ content: 'custom', role: 'critic' }),
  new RemoveMessage({ id: 'h1' }),
];

const corpus: [string, () => unknown][] = [
  ['a history of messages', () => ({ messages: messages() })],
  [
    'messages nested in plain values',
    () => ({ a: [{ b: messages().slice(0, 2) }], n: 1, s: 'x', t: true, z: null }),
  ],
  ['plain JSON only', () => ({ list: [1, 'two', { three: [3] }], empty: {}, none: null })],
  ['a bare message', () => new AIMessage({ content: 'alone', id: 'x' })],
  [
    'undefined beside plain values',
    () => ({ gone: undefined, arr: [undefined, 1], deep: { x: undefined } }),
  ],
  ['primitives', () => 'just a string'],
  ['numbers', () => 42],
  // These take the original reader (records other than messages).
  [
    'a Set beside messages',
    () => ({ seen: new Set(['a', 'b']), messages: messages().slice(0, 1) }),
  ],
  [
    'a Map and undefined',
    () => ({ map: new Map([['k', 1]]), gone: undefined, arr: [undefined, 1] }),
  ],
  ['an Error and a RegExp', () => ({ err: new Error('boom'), re: /a+b/gi })],
  ['user data that looks like a record', () => ({ data: { lc: 1, type: 'secret', id: ['X'] } })],
  [
    'a message whose kwargs hold a record',
    () => ({
      messages: [new HumanMessage({ content: 'x', additional_kwargs: { inner: new Set([1]) } })],
    }),
  ],
  [
    'a value that contains itself',
    () => {
      const loop: Record<string, unknown> = { messages: messages().slice(0, 1) };
      loop.self = loop;
      return loop;
    },
  ],
  ['a __proto__ key', () => JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as unknown],
];

async function readBoth(value: unknown) {
  const [type, bytes] = await original.dumpsTyped(value);
  const [ourType, ourBytes] = await ours.dumpsTyped(value);
  expect(ourType).toBe(type);
  expect(Buffer.from(ourBytes).equals(Buffer.from(bytes))).toBe(true);
  const theirs: unknown = await original.loadsTyped(type, bytes);
  const mine: unknown = await ours.loadsTyped(type, bytes);
  return [theirs, mine] as const;
}

function classesOf(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return typeof value;
  if (Array.isArray(value)) return value.map(classesOf);
  const out: Record<string, unknown> = { __class: value.constructor?.name };
  for (const [key, v] of Object.entries(value)) out[key] = classesOf(v);
  return out;
}

describe('CheckpointSerde', () => {
  it.each(corpus)('reads back %s as LangGraph does', async (_name, make) => {
    const [theirs, mine] = await readBoth(make());
    expect(mine).toEqual(theirs);
    expect(classesOf(mine)).toEqual(classesOf(theirs));
    expect(Object.getPrototypeOf(mine)).toEqual(Object.getPrototypeOf(theirs));
  });

  it('revives messages that serialise, and behave, as the originals', async () => {
    const [theirs, mine] = await readBoth({ messages: messages() });
    const a = (theirs as { messages: BaseMessage[] }).messages;
    const b = (mine as { messages: BaseMessage[] }).messages;
    expect(b.map((m) => m.constructor.name)).toEqual(a.map((m) => m.constructor.name));
    for (const [i, m] of b.entries()) {
      expect(m).toBeInstanceOf(a[i]!.constructor);
      expect(JSON.stringify(m)).toBe(JSON.stringify(a[i]));
      expect(m.getType()).toBe(a[i]!.getType());
    }
    expect((b[2] as AIMessage).tool_calls).toEqual((a[2] as AIMessage).tool_calls);
    expect((b[5] as ToolMessage).tool_call_id).toBe('c1');
  });

  it('walks messages and plain JSON itself, and hands anything else to the original reader', async () => {
    const originalLoads = vi.spyOn(
      JsonPlusSerializer.prototype as unknown as { _loads: (data: string) => Promise<unknown> },
      '_loads',
    );
    try {
      const read = async (value: unknown) => {
        const [type, bytes] = await original.dumpsTyped(value);
        originalLoads.mockClear();
        await ours.loadsTyped(type, bytes);
        return originalLoads.mock.calls.length;
      };
      expect(await read({ messages: messages(), n: [1, { m: 'x' }] })).toBe(0);
      expect(await read({ gone: undefined, arr: [undefined] })).toBe(0);
      expect(await read({ seen: new Set([1]) })).toBe(1);
    } finally {
      originalLoads.mockRestore();
    }
  });

  it('leaves a revived value independent of the bytes it came from', async () => {
    const [type, bytes] = await original.dumpsTyped({ messages: messages().slice(0, 1) });
    const first = (await ours.loadsTyped(type, bytes)) as { messages: HumanMessage[] };
    first.messages[0]!.content = 'changed';
    const second = (await ours.loadsTyped(type, bytes)) as { messages: HumanMessage[] };
    expect(second.messages[0]!.content).toBe('hi');
  });
});
