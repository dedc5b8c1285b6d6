// Turns graph state into the JSON the official servers send: LangChain messages become flat
// dicts with every field the Python server emits, so both SDKs read them unchanged.
import * as coreMessages from '@langchain/core/messages';
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
  const data =
    plainKwargs(message) ?? (message.toDict().data as unknown as Record<string, unknown>);
  return normaliseMessage(messageType(message), data);
}

/**
 * `toDict().data` of a core message class whose arguments are plain JSON-like values, built
 * directly: LangChain's `toJSON()` gathers aliases, secrets and attributes through the whole
 * prototype chain, and copies every value to escape it, for every message, every time. The
 * aliases are gathered once per class here; a value that would be escaped, shared with an
 * ancestor or is not plain data makes this answer undefined, and `toDict()` is used.
 */
export function plainKwargs(message: BaseMessage): Record<string, unknown> | undefined {
  const aliases = aliasesOf(message);
  if (!aliases) return undefined;
  const fields = message.lc_kwargs as Record<string, unknown>;
  const data: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    const value: unknown =
      key in message ? (message as unknown as Record<string, unknown>)[key] : fields[key];
    if (!isPlainData(value, [])) return undefined;
    data[aliases[key] || snakeCase(key)] = value;
  }
  return data;
}

const CORE_MESSAGE_CLASSES = new Set<unknown>(
  Object.values(coreMessages).filter((v) => typeof v === 'function'),
);
const ALIASES = new Map<unknown, Record<string, string> | null>();

/** The serialization aliases of a core message class; null for classes with secrets or attributes. */
function aliasesOf(message: BaseMessage): Record<string, string> | null {
  const type = message.constructor;
  let aliases = ALIASES.get(type);
  if (aliases === undefined) {
    aliases = null;
    if (CORE_MESSAGE_CLASSES.has(type)) {
      const found: Record<string, string> = {};
      let extra = 0;
      for (
        let proto: unknown = Object.getPrototypeOf(message);
        proto;
        proto = Object.getPrototypeOf(proto)
      ) {
        Object.assign(found, Reflect.get(proto, 'lc_aliases', message));
        const secrets: unknown = Reflect.get(proto, 'lc_secrets', message);
        const attributes: unknown = Reflect.get(proto, 'lc_attributes', message);
        extra += Object.keys(secrets ?? {}).length + Object.keys(attributes ?? {}).length;
      }
      if (extra === 0) aliases = found;
    }
    ALIASES.set(type, aliases);
  }
  return aliases;
}

const SNAKE = new Map<string, string>();

/** LangChain's snake_case for serialized keys. */
function snakeCase(key: string): string {
  let snake = SNAKE.get(key);
  if (snake === undefined) {
    snake = key
      .replace(/([A-Z]+)([A-Z][a-z0-9]+)/g, '$1_$2')
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .replace(/[-_\s]+/g, '_')
      .toLowerCase();
    if (SNAKE.size < 1000) SNAKE.set(key, snake);
  }
  return snake;
}

/**
 * Whether `toJSON()` would pass `value` through as it is: primitives, arrays and plain objects
 * only, none with an `lc` key (those are escaped) and none inside itself.
 */
function isPlainData(value: unknown, ancestors: object[]): boolean {
  if (typeof value !== 'object' || value === null) return typeof value !== 'function';
  if (ancestors.includes(value)) return false;
  if (Array.isArray(value)) {
    ancestors.push(value);
    const plain = value.every((item) => isPlainData(item, ancestors));
    ancestors.pop();
    return plain;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  if ('lc' in value || '__lc_escaped__' in value) return false;
  ancestors.push(value);
  let plain = true;
  for (const item of Object.values(value)) if (!(plain = isPlainData(item, ancestors))) break;
  ancestors.pop();
  return plain;
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
  return toJsonValue(value, memo, true);
}

/**
 * `honourToJson`: whether an object's own `toJSON()` says what it is (Date, Buffer, URL, decimal
 * and date-time classes), as `JSON.stringify` does, and as the official server's output, the
 * thread's checkpoints and its `GET .../state` do. It is called once per value: its result is
 * serialised without calling a `toJSON()` of its own again.
 */
function toJsonValue(value: unknown, memo: MessageMemo | undefined, honourToJson: boolean): Json {
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
  if (Array.isArray(value)) return value.map((item) => toJsonValue(item, memo, true));
  if (value instanceof Map) return toJsonValue(Object.fromEntries(value), memo, true);
  if (value instanceof Set) return toJsonValue([...value], memo, true);
  const record = value as Record<string, unknown>;
  if (honourToJson && typeof record.toJSON === 'function')
    return toJsonValue((record.toJSON as (key: string) => unknown)(''), memo, false);
  const message = fromLangchainSerialized(record);
  if (message) return message;
  const out: Record<string, Json> = {};
  for (const [key, v] of Object.entries(record)) {
    if (v !== undefined) out[key] = toJsonValue(v, memo, true);
  }
  return out;
}
