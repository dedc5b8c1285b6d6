// The checkpoint serializer: LangGraph's own, with a faster way to read back the common case.
// Its reader revives a checkpoint with a promise for every array and object, and each chat
// message through `load()`, which stringifies and parses it again and looks its class up by name.
// A thread's history is read on every run, so for a long thread that is most of the read. Values
// holding nothing but plain JSON and chat messages are revived here in one synchronous walk, with
// the same classes and constructor arguments `load()` would use; anything else takes the original
// path. Written bytes are unchanged.
import * as messages from '@langchain/core/messages';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';

/** The message classes revived here, by the last element of their serialized id. */
const MESSAGE_CLASSES = [
  'AIMessage',
  'AIMessageChunk',
  'ChatMessage',
  'ChatMessageChunk',
  'FunctionMessage',
  'FunctionMessageChunk',
  'HumanMessage',
  'HumanMessageChunk',
  'RemoveMessage',
  'SystemMessage',
  'SystemMessageChunk',
  'ToolMessage',
  'ToolMessageChunk',
] as const;

type MessageClass = new (fields: Record<string, unknown>) => object;

interface Builder {
  build: MessageClass;
  /** Serialized key -> constructor argument, as `load()` maps them (aliases, else camelCase). */
  keys: Map<string, string>;
  aliases: Record<string, string>;
}

const BUILDERS = new Map<string, Builder>();
for (const name of MESSAGE_CLASSES) {
  const build = (messages as unknown as Record<string, MessageClass | undefined>)[name];
  if (typeof build === 'function')
    BUILDERS.set(name, { build, keys: new Map(), aliases: invertedAliases(build) });
}

/** `load()`'s inverted `lc_aliases` of a class and its ancestors. */
function invertedAliases(build: MessageClass): Record<string, string> {
  const aliases: Record<string, string> = {};
  for (
    let current: unknown = build;
    typeof current === 'function' && current.prototype !== undefined;
    current = Object.getPrototypeOf(current)
  ) {
    Object.assign(aliases, Reflect.get(current.prototype as object, 'lc_aliases') ?? {});
  }
  return Object.fromEntries(Object.entries(aliases).map(([key, alias]) => [alias, key]));
}

/** `load()`'s camelCase for constructor arguments. */
function camelCase(key: string): string {
  const trimmed = key.trim();
  if (!/[-_\s]/.test(trimmed)) return trimmed;
  return trimmed
    .replace(/[-_\s]+/g, '_')
    .toLowerCase()
    .replace(/_+([a-z0-9])/g, (_, char: string) => char.toUpperCase());
}

function argumentName(builder: Builder, key: string): string {
  let name = builder.keys.get(key);
  if (name === undefined) {
    name = builder.aliases[key] || camelCase(key);
    builder.keys.set(key, name);
  }
  return name;
}

/** The builder for a serialized chat message this walk can revive; undefined otherwise. */
function messageBuilder(record: Record<string, unknown>): Builder | undefined {
  const id = record.id;
  if (
    record.lc !== 1 ||
    record.type !== 'constructor' ||
    !Array.isArray(id) ||
    id.length !== 3 ||
    id[0] !== 'langchain_core' ||
    id[1] !== 'messages' ||
    typeof record.kwargs !== 'object' ||
    record.kwargs === null ||
    Array.isArray(record.kwargs)
  )
    return undefined;
  return BUILDERS.get(String(id[2]));
}

/** The writer's mark for `undefined`: `{"lc": 2, "type": "undefined"}`. */
function isUndefinedMark(record: Record<string, unknown>): boolean {
  return record.lc === 2 && record.type === 'undefined' && Object.keys(record).length === 2;
}

/**
 * Whether `value` holds only plain JSON, `undefined` marks and revivable messages: no other
 * LangChain record, no escaped value, no `__proto__` key, whose revival takes the original path.
 */
function revivableHere(value: unknown, insideMessage: boolean): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (Array.isArray(value)) return value.every((item) => revivableHere(item, insideMessage));
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, '__proto__') || Object.hasOwn(record, '__lc_escaped__')) return false;
  if (Object.hasOwn(record, 'lc')) {
    if (isUndefinedMark(record)) return true;
    if (insideMessage || !messageBuilder(record)) return false;
    return revivableHere(record.kwargs, true);
  }
  for (const key in record) if (!revivableHere(record[key], insideMessage)) return false;
  return true;
}

/**
 * A fresh copy of parsed JSON with its messages revived (only for `revivableHere` values). An
 * `undefined` mark becomes `undefined`, except in a message's arguments: the original reader
 * passes those through JSON once more, which drops such keys and turns such items into null.
 */
function revive(value: unknown, insideMessage = false): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value))
    return value.map((item: unknown) => {
      const revived = revive(item, insideMessage);
      return revived === undefined && insideMessage ? null : revived;
    });
  const record = value as Record<string, unknown>;
  if (isUndefinedMark(record)) return undefined;
  const builder = Object.hasOwn(record, 'lc') ? messageBuilder(record) : undefined;
  if (builder) {
    const kwargs = record.kwargs as Record<string, unknown>;
    const fields: Record<string, unknown> = {};
    for (const key in kwargs) {
      const revived = revive(kwargs[key], true);
      if (revived !== undefined) fields[argumentName(builder, key)] = revived;
    }
    const message = new builder.build(fields);
    // As `load()` does: the class answers to its serialized name.
    Object.defineProperty(message.constructor, 'name', {
      value: String((record.id as unknown[])[2]),
    });
    return message;
  }
  const out: Record<string, unknown> = {};
  for (const key in record) {
    const revived = revive(record[key], insideMessage);
    if (revived !== undefined || !insideMessage) out[key] = revived;
  }
  return out;
}

export class CheckpointSerde extends JsonPlusSerializer {
  protected override async _loads(data: string): Promise<unknown> {
    const parsed: unknown = JSON.parse(data);
    return revivableHere(parsed, false) ? revive(parsed) : super._loads(data);
  }
}
