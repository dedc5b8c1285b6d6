// Between A2A messages and the graph: parts become one LangChain message in `messages` (data
// parts merge into the input), and the graph's messages come back as A2A messages.
import { RpcCode, RpcError, invalidParams } from './jsonrpc.js';
import type { Message } from './schemas.js';
import type { A2aMessage, OutPart } from './wire.js';

/** A message as it appears in serialized graph state: `{type, content, id, ...}`. */
export interface StateMessage {
  type?: unknown;
  content?: unknown;
  id?: unknown;
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((block: unknown) =>
        typeof block === 'object' &&
        block !== null &&
        'text' in block &&
        typeof block.text === 'string'
          ? block.text
          : '',
      )
      .join('');
  }
  return content == null ? '' : JSON.stringify(content);
}

function rejectFiles(message: Message): void {
  if (message.parts.some((p) => p.kind === 'file'))
    throw new RpcError(
      RpcCode.CONTENT_TYPE_NOT_SUPPORTED,
      'File parts are not supported; send text parts (and data parts for structured input)',
    );
}

/**
 * The graph input for a new task: the text parts as one human (or AI, for role `agent`)
 * message whose id is the A2A messageId, plus every data part's keys at the top level.
 */
export function graphInput(message: Message, inputKeys: string[] | null): Record<string, unknown> {
  rejectFiles(message);
  const texts = message.parts.flatMap((p) => (p.kind === 'text' ? [p.text] : []));
  const input: Record<string, unknown> = {};
  for (const part of message.parts) if (part.kind === 'data') Object.assign(input, part.data);
  if (texts.length) {
    if (inputKeys && !inputKeys.includes('messages')) {
      throw invalidParams(
        `This assistant's graph has no "messages" key in its input, so text parts cannot be delivered. ` +
          `Its input keys are: ${inputKeys.length ? inputKeys.join(', ') : '(none)'}. ` +
          'Send a data part with those keys instead.',
      );
    }
    input.messages = [
      {
        type: message.role === 'agent' ? 'ai' : 'human',
        content: texts.length === 1 ? texts[0] : texts.map((text) => ({ type: 'text', text })),
        id: message.messageId,
      },
    ];
  }
  return input;
}

/** What a message answering an interrupt resumes the graph with: its data, else its text. */
export function resumeValue(message: Message): unknown {
  rejectFiles(message);
  const data = message.parts.find((p) => p.kind === 'data');
  if (data) return data.data;
  return message.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('\n');
}

export function messagesOf(values: unknown): StateMessage[] {
  if (typeof values !== 'object' || values === null) return [];
  const messages = (values as { messages?: unknown }).messages;
  return Array.isArray(messages) ? (messages as StateMessage[]) : [];
}

const isAi = (m: StateMessage) => m.type === 'ai' || m.type === 'AIMessageChunk';

export function lastAiMessage(values: unknown): StateMessage | undefined {
  return messagesOf(values).findLast((m) => isAi(m) && textOf(m.content) !== '');
}

export interface TaskIds {
  taskId: string;
  contextId: string;
}

export function agentMessage(parts: OutPart[], messageId: string, ids: TaskIds): A2aMessage {
  return { kind: 'message', role: 'agent', parts, messageId, ...ids };
}

/** Human and AI turns with text become A2A messages; tool traffic stays inside the graph. */
export function toA2aHistory(values: unknown, ids: TaskIds): A2aMessage[] {
  const history: A2aMessage[] = [];
  messagesOf(values).forEach((m, index) => {
    const text = textOf(m.content);
    const human = m.type === 'human';
    if ((!human && !isAi(m)) || text === '') return;
    history.push({
      kind: 'message',
      role: human ? 'user' : 'agent',
      parts: [{ kind: 'text', text }],
      messageId: typeof m.id === 'string' ? m.id : `${ids.taskId}-${index}`,
      ...ids,
    });
  });
  return history;
}

/** An interrupt's value as parts: readable text, plus the value itself when it is structured. */
export function interruptParts(interrupts: unknown[]): OutPart[] {
  const values = interrupts.map((i) =>
    typeof i === 'object' && i !== null && 'value' in i ? i.value : i,
  );
  const text = values
    .map((v) => {
      if (typeof v === 'string') return v;
      if (typeof v === 'object' && v !== null) {
        const strings = Object.values(v).filter((x): x is string => typeof x === 'string');
        if (strings.length) return strings.join('\n');
      }
      return JSON.stringify(v);
    })
    .join('\n');
  const structured = values.some((v) => typeof v === 'object' && v !== null);
  return [
    { kind: 'text', text: text || 'Input required' },
    ...(structured ? [{ kind: 'data' as const, data: { interrupts: values } }] : []),
  ];
}
