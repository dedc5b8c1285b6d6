import {
  AIMessage,
  AIMessageChunk,
  ChatMessage,
  HumanMessage,
  RemoveMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { serializeMessage, toJson } from '../../runtime/state/index.js';
import { plainKwargs } from '../../runtime/state/serialize.js';

describe('toJson', () => {
  it('turns messages into flat dicts with every field the official server emits', () => {
    const human = toJson(new HumanMessage({ content: 'hi', id: 'h1' }));
    expect(human).toEqual({
      content: 'hi',
      additional_kwargs: {},
      response_metadata: {},
      type: 'human',
      name: null,
      id: 'h1',
      example: false,
    });
    const ai = toJson(
      new AIMessage({
        content: '',
        id: 'a1',
        tool_calls: [{ id: 'c1', name: 'add', args: { a: 1 }, type: 'tool_call' }],
      }),
    ) as Record<string, unknown>;
    expect(ai).toMatchObject({ type: 'ai', usage_metadata: null, invalid_tool_calls: [] });
    expect(ai.tool_calls).toEqual([{ id: 'c1', name: 'add', args: { a: 1 }, type: 'tool_call' }]);
    expect(toJson(new ToolMessage({ content: '2', tool_call_id: 'c1' }))).toMatchObject({
      type: 'tool',
      tool_call_id: 'c1',
    });
    expect(toJson(new AIMessageChunk({ content: 'par' }))).toMatchObject({
      type: 'AIMessageChunk',
      content: 'par',
    });
  });

  it('converts LangChain-serialised constructors found in checkpointed task results', () => {
    const stored = JSON.parse(
      JSON.stringify(new AIMessage({ content: 'from a task', id: 'x' })),
    ) as unknown;
    expect(toJson({ messages: [stored] })).toEqual({
      messages: [
        expect.objectContaining({
          type: 'ai',
          content: 'from a task',
          id: 'x',
          name: null,
          example: false,
        }),
      ],
    });
  });

  it('keeps plain JSON, drops undefined and functions, and writes dates as ISO strings', () => {
    const when = new Date('2026-01-02T03:04:05.000Z');
    expect(
      toJson({ a: 1, b: [true, null, 'x'], c: undefined, d: () => 1, e: when, f: Number.NaN }),
    ).toEqual({
      a: 1,
      b: [true, null, 'x'],
      d: null,
      e: '2026-01-02T03:04:05.000Z',
      f: null,
    });
  });
  it("honours an object's own toJSON() once, as JSON.stringify does", () => {
    const inner = { toJSON: () => 'not called: a toJSON result is taken as it is' };
    const value = {
      url: new URL('https://example.com/a?b=1'),
      bytes: Buffer.from('hi'),
      price: { toJSON: () => '12.50' },
      wrapped: { toJSON: () => inner },
      never: new Date(Number.NaN),
      nested: [{ at: new Date('2026-01-02T03:04:05.000Z') }],
    };
    expect(toJson(value)).toMatchObject({
      url: 'https://example.com/a?b=1',
      bytes: { type: 'Buffer', data: [104, 105] },
      price: '12.50',
      wrapped: { toJSON: null },
      never: null,
      nested: [{ at: '2026-01-02T03:04:05.000Z' }],
    });
    const failing = {
      toJSON: () => {
        throw new Error('cannot');
      },
    };
    expect(() => toJson({ failing })).toThrow('cannot');
  });
});

describe('toJson with a message memo', () => {
  it('serialises each message object once and answers the same as without the memo', () => {
    const memo = new WeakMap<object, ReturnType<typeof toJson>>();
    const human = new HumanMessage({ content: 'hi', id: 'h1' });
    const ai = new AIMessage({ content: 'echo: hi', id: 'a1' });
    const first = toJson({ messages: [human] }, memo) as { messages: unknown[] };
    const second = toJson({ messages: [human, ai] }, memo) as { messages: unknown[] };
    expect(second).toEqual(toJson({ messages: [human, ai] }));
    expect(second.messages[0]).toBe(first.messages[0]);
    // An equal but different object is serialised on its own.
    const copy = new HumanMessage({ content: 'other', id: 'h1' });
    expect((toJson([copy], memo) as { content: string }[])[0]?.content).toBe('other');
  });
});

describe("a message's serialized fields", () => {
  const plain = [
    new HumanMessage({
      content: 'hi',
      id: 'h1',
      name: 'ann',
      additional_kwargs: { x: [1, { y: 2 }] },
    }),
    new HumanMessage({ content: [{ type: 'text', text: 'look' }] }),
    new AIMessage({
      content: '',
      id: 'a1',
      tool_calls: [{ id: 'c1', name: 'add', args: { a: 1 }, type: 'tool_call' }],
      usage_metadata: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
      response_metadata: { model_name: 'fake' },
    }),
    new AIMessageChunk({
      content: 'par',
      id: 'k1',
      tool_call_chunks: [{ name: 'add', args: '{', index: 0 }],
    }),
    new ToolMessage({
      content: '5',
      tool_call_id: 'c1',
      artifact: { raw: [5] },
      status: 'success',
    }),
    new SystemMessage({ content: 'be brief' }),
    new ChatMessage({ content: 'custom', role: 'critic' }),
    new RemoveMessage({ id: 'h1' }),
  ];

  it('are built directly, equal to what toDict gives, for plain messages', () => {
    for (const message of plain) {
      const fast = plainKwargs(message);
      expect(fast).toBeDefined();
      expect(fast).toEqual(message.toDict().data);
    }
    // A field changed after construction is read from the message, as toJSON reads it.
    const changed = new HumanMessage({ content: 'before', id: 'c' });
    changed.content = 'after';
    expect(plainKwargs(changed)).toEqual(changed.toDict().data);
    expect(serializeMessage(changed)).toMatchObject({ content: 'after', id: 'c' });
  });

  it('are left to toDict when a value would be escaped or is not plain data', () => {
    const lcLike = new HumanMessage({ content: 'x', additional_kwargs: { inner: { lc: 1 } } });
    const dated = new HumanMessage({ content: 'x', additional_kwargs: { at: new Date(0) } });
    const nested = new HumanMessage({
      content: 'x',
      additional_kwargs: { quoted: new AIMessage({ content: 'q' }) },
    });
    for (const message of [lcLike, dated, nested]) {
      expect(plainKwargs(message)).toBeUndefined();
      expect(serializeMessage(message).additional_kwargs).toEqual(
        toJson(message.toDict().data.additional_kwargs),
      );
    }
    // toDict escapes the record-like value, and the wire shows it as LangChain wrote it.
    expect(serializeMessage(lcLike).additional_kwargs).toEqual({
      inner: { __lc_escaped__: { lc: 1 } },
    });
  });
});
