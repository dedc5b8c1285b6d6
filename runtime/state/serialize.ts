// Turns graph state into the JSON the official servers send: LangChain messages become flat
// dicts with every field the Python server emits, so both SDKs read them unchanged.
import { isBaseMessage, isBaseMessageChunk, type BaseMessage } from '@langchain/core/messages';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const CLASS_TO_TYPE: Record<string, string> = {
  HumanMessage: 'human',
  AIMessage: 'ai',
  SystemMessage: 'system',
  ToolMessage: 'tool',
  FunctionMessage: 'function',
  ChatMessage: 'chat',
  RemoveMessage: 'remove',
};

function normaliseMessage(type: string, fields: Record<string, unknown>): Record<string, Json> {
  const out: Record<string, unknown> = {
    ...fields,
    content: fields.content ?? '',
    additional_kwargs: fields.additional_kwargs ?? {},
    response_metadata: fields.response_metadata ?? {},
    type,
    name: fields.name ?? null,
    id: fields.id ?? null,
    example: fields.example ?? false,
  };
  if (type === 'ai' || type === 'AIMessageChunk') {
    out.tool_calls = fields.tool_calls ?? [];
    out.invalid_tool_calls = fields.invalid_tool_calls ?? [];
    out.usage_metadata = fields.usage_metadata ?? null;
  }
  if (type === 'AIMessageChunk') out.tool_call_chunks = fields.tool_call_chunks ?? [];
  delete out.lc_kwargs;
  return toJson(out) as Record<string, Json>;
}

function messageType(message: BaseMessage): string {
  const type = message.getType();
  if (isBaseMessageChunk(message)) {
    const name = message.constructor.name;
    return name.endsWith('Chunk') ? name : `${type}`;
  }
  return type;
}

export function serializeMessage(message: BaseMessage): Record<string, Json> {
  const { data } = message.toDict();
  return normaliseMessage(messageType(message), data as unknown as Record<string, unknown>);
}

/** `{lc: 1, type: "constructor", id: [..., "AIMessage"], kwargs}`, as checkpointed task results hold. */
function fromLangchainSerialized(value: Record<string, unknown>): Record<string, Json> | undefined {
  if (value.lc !== 1 || value.type !== 'constructor' || !Array.isArray(value.id)) return undefined;
  const className = String(value.id.at(-1));
  const type = CLASS_TO_TYPE[className] ?? (className.endsWith('Chunk') ? className : undefined);
  if (!type) return undefined;
  return normaliseMessage(type, (value.kwargs ?? {}) as Record<string, unknown>);
}

/**
 * Serialised messages by identity, for one stream: a values event repeats every message of the
 * state, and serialising a message is LangChain's costliest step. Graph state is immutable by
 * LangGraph's contract, so a message object serialises the same each time it comes back.
 */
export type MessageMemo = WeakMap<object, Json>;

export function toJson(value: unknown, memo?: MessageMemo): Json {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'bigint':
      return Number(value);
    case 'function':
    case 'symbol':
    case 'undefined':
      return null;
    case 'object':
      break;
  }
  if (isBaseMessage(value)) {
    if (!memo) return serializeMessage(value);
    let json = memo.get(value);
    if (json === undefined) memo.set(value, (json = serializeMessage(value)));
    return json;
  }
  if (Array.isArray(value)) return value.map((item) => toJson(item, memo));
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Map) return toJson(Object.fromEntries(value));
  if (value instanceof Set) return toJson([...value]);
  const record = value as Record<string, unknown>;
  const message = fromLangchainSerialized(record);
  if (message) return message;
  const out: Record<string, Json> = {};
  for (const [key, v] of Object.entries(record)) {
    if (v !== undefined) out[key] = toJson(v, memo);
  }
  return out;
}
