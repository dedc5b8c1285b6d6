// A2A message <-> graph mapping and JSON-RPC envelope parsing, without a server.
import { describe, expect, it } from 'vitest';
import {
  graphInput,
  interruptParts,
  resumeValue,
  toA2aHistory,
} from '../../runtime/a2a/convert.js';
import { RpcCode, RpcError, parseRequest } from '../../runtime/a2a/jsonrpc.js';
import type { Message } from '../../runtime/a2a/schemas.js';

const message = (parts: Message['parts'], role: Message['role'] = 'user'): Message => ({
  role,
  parts,
  messageId: 'm-1',
});

describe('graphInput', () => {
  it('makes one human message with the A2A messageId, content blocks for several parts', () => {
    expect(graphInput(message([{ kind: 'text', text: 'hi' }]), ['messages'])).toEqual({
      messages: [{ type: 'human', content: 'hi', id: 'm-1' }],
    });
    expect(
      graphInput(
        message(
          [
            { kind: 'text', text: 'a' },
            { kind: 'text', text: 'b' },
          ],
          'agent',
        ),
        ['messages'],
      ),
    ).toEqual({
      messages: [
        {
          type: 'ai',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
          id: 'm-1',
        },
      ],
    });
  });

  it('merges data parts into the input and needs a messages key only for text', () => {
    expect(graphInput(message([{ kind: 'data', data: { count: 1 } }]), ['count'])).toEqual({
      count: 1,
    });
    expect(() => graphInput(message([{ kind: 'text', text: 'x' }]), ['count'])).toThrow(
      expect.objectContaining({ code: RpcCode.INVALID_PARAMS }) as unknown,
    );
    // Unknown schema: let the graph decide.
    expect(graphInput(message([{ kind: 'text', text: 'x' }]), null)).toHaveProperty('messages');
  });

  it('refuses file parts with ContentTypeNotSupported', () => {
    const file = message([{ kind: 'file', file: { uri: 'https://x/y.png' } }]);
    expect(() => graphInput(file, ['messages'])).toThrow(RpcError);
    expect(() => resumeValue(file)).toThrow(
      expect.objectContaining({ code: RpcCode.CONTENT_TYPE_NOT_SUPPORTED }) as unknown,
    );
  });
});

describe('resume values and interrupts', () => {
  it('resumes with the data part if there is one, else the text', () => {
    expect(resumeValue(message([{ kind: 'text', text: 'yes' }]))).toBe('yes');
    expect(
      resumeValue(
        message([
          { kind: 'text', text: 'see data' },
          { kind: 'data', data: { approved: true } },
        ]),
      ),
    ).toEqual({ approved: true });
  });

  it('shows an interrupt as text, with a data part when the value is structured', () => {
    expect(interruptParts([{ id: 'i', value: 'Continue?' }])).toEqual([
      { kind: 'text', text: 'Continue?' },
    ]);
    expect(interruptParts([{ id: 'i', value: { question: 'Approve?', n: 1 } }])).toEqual([
      { kind: 'text', text: 'Approve?' },
      { kind: 'data', data: { interrupts: [{ question: 'Approve?', n: 1 }] } },
    ]);
  });

  it('keeps human and AI turns with text in the history, not tool traffic', () => {
    const history = toA2aHistory(
      {
        messages: [
          { type: 'human', content: 'add 1 and 2', id: 'h' },
          { type: 'ai', content: '', tool_calls: [{}] },
          { type: 'tool', content: '3' },
          { type: 'ai', content: [{ type: 'text', text: 'The answer is 3.' }], id: 'a' },
        ],
      },
      { taskId: 't', contextId: 'c' },
    );
    expect(history.map((m) => [m.role, m.messageId, m.parts])).toEqual([
      ['user', 'h', [{ kind: 'text', text: 'add 1 and 2' }]],
      ['agent', 'a', [{ kind: 'text', text: 'The answer is 3.' }]],
    ]);
  });
});

describe('parseRequest', () => {
  const code = (raw: string) => {
    const parsed = parseRequest(raw);
    return parsed.ok ? 'ok' : [parsed.error.code, parsed.id];
  };

  it('classifies envelopes', () => {
    expect(code('{')).toEqual([RpcCode.PARSE_ERROR, null]);
    expect(code('"text"')).toEqual([RpcCode.INVALID_REQUEST, null]);
    expect(code('{"jsonrpc":"2.0","id":"a"}')).toEqual([RpcCode.INVALID_REQUEST, 'a']);
    expect(code('{"jsonrpc":"2.0","method":"tasks/get"}')).toEqual([RpcCode.INVALID_REQUEST, null]);
    expect(code('{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}')).toEqual([
      RpcCode.INVALID_REQUEST,
      1,
    ]);
    expect(code('{"jsonrpc":"2.0","id":null,"method":"x"}')).toBe('ok');
  });
});
