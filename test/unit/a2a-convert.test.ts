// A2A message <-> graph mapping, JSON-RPC envelope parsing and the default assistant, without a server.
import { describe, expect, it } from 'vitest';
import { notFound } from '../../common/errors/index.js';
import {
  graphInput,
  interruptParts,
  resumeValue,
  toA2aHistory,
} from '../../runtime/a2a/convert.js';
import { resolveDefaultAssistant } from '../../runtime/a2a/default-assistant.js';
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
    // No id: parsed, so that the method and params are checked before the request is refused.
    const notification = parseRequest('{"jsonrpc":"2.0","method":"tasks/get"}');
    expect(notification.ok && notification.request.id).toBeUndefined();
    expect(code('{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}')).toEqual([
      RpcCode.INVALID_REQUEST,
      1,
    ]);
    expect(code('{"jsonrpc":"2.0","id":null,"method":"x"}')).toBe('ok');
    // The method is kept on a refused envelope, for streaming methods to answer over SSE.
    const refused = parseRequest('{"jsonrpc":"1.0","id":2,"method":"message/stream"}');
    expect(!refused.ok && refused.method).toBe('message/stream');
  });
});

describe('resolveDefaultAssistant', () => {
  const known = new Set(['echo', 'agent', '6f1c3a34-0f0e-4c61-9d2f-0e7c1d5b8a11']);
  const find = (id: string) =>
    known.has(id) ? Promise.resolve({}) : Promise.reject(notFound('Assistant not found'));

  it('takes the setting when it names a graph or an assistant, else the only graph', async () => {
    expect(await resolveDefaultAssistant('agent', ['echo', 'agent'], find)).toEqual({
      assistantId: 'agent',
    });
    const uuid = '6f1c3a34-0f0e-4c61-9d2f-0e7c1d5b8a11';
    expect(await resolveDefaultAssistant(uuid, ['echo'], find)).toEqual({ assistantId: uuid });
    expect(await resolveDefaultAssistant(undefined, ['echo'], find)).toEqual({
      assistantId: 'echo',
    });
  });

  it('has none with several graphs and no setting, and says how to choose', async () => {
    const none = await resolveDefaultAssistant(undefined, ['echo', 'agent'], find);
    expect(none).toEqual({ missing: expect.stringContaining('(echo, agent)') as unknown });
    expect('missing' in none && none.missing).toContain('GRAPHDOCK_A2A_DEFAULT_ASSISTANT');
  });

  it('refuses a setting that names nothing, listing the graphs', async () => {
    await expect(resolveDefaultAssistant('nope', ['echo', 'agent'], find)).rejects.toThrow(
      'GRAPHDOCK_A2A_DEFAULT_ASSISTANT="nope" names no assistant: use an assistant UUID or one of the graph ids (echo, agent)',
    );
  });
});
