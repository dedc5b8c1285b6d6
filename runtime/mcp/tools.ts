// Assistants as MCP tools, as the official server lists them: a tool name made of the
// assistant's name, its graph's input schema (message lists shown to the model as one string),
// and the run's output as the tool's text.
import { isJsonObject } from '../../common/json/index.js';

/** MCP tool names: ASCII letters, digits, `_`, `-` and `.`, 1 to 128 characters. */
const MAX_NAME = 128;

/** The tool name of an assistant: whitespace runs become `_`, other characters are dropped. */
export function toolName(assistantName: string): string {
  return assistantName
    .trim()
    .replace(/\s+/g, '_')
    .replace(/[^A-Za-z0-9_.-]/g, '')
    .slice(0, MAX_NAME);
}

/** LangChain message classes and their parts, as the schema extraction names their definitions. */
const MESSAGE_TYPES = new Set(
  ['AI', 'Human', 'Chat', 'System', 'Function', 'Tool'].flatMap((k) => [
    `${k}Message`,
    `${k}MessageChunk`,
  ]),
);
const MESSAGE_PARTS = [
  'ToolCall',
  'ToolCallChunk',
  'InvalidToolCall',
  'UsageMetadata',
  'InputTokenDetails',
  'OutputTokenDetails',
];

type Schema = Record<string, unknown>;

/** A message as Graphdock's schema extraction describes one inline: `content`, `type`, ... */
function isInlineMessage(item: Schema): boolean {
  const props = isJsonObject(item.properties) ? item.properties : {};
  return (
    'content' in props &&
    'type' in props &&
    Array.isArray(item.required) &&
    item.required.includes('content')
  );
}

/** Whether a property is a list of LangChain messages (`$ref`s to their definitions, or inline). */
function isMessageList(prop: unknown, defsKey: string | undefined): boolean {
  if (!isJsonObject(prop) || prop.type !== 'array' || !isJsonObject(prop.items)) return false;
  if (isInlineMessage(prop.items)) return true;
  const prefix = `#/${defsKey ?? '$defs'}/`;
  // From TypeScript types: one `$ref` to `BaseMessage<...>` (see runtime/graphs/typed-schemas).
  const ref = prop.items.$ref;
  if (typeof ref === 'string' && ref.startsWith(prefix))
    return /^BaseMessage(?:<|$)/.test(ref.slice(prefix.length));
  const choices = prop.items.oneOf ?? prop.items.anyOf ?? [];
  return (Array.isArray(choices) ? choices : []).some(
    (c) =>
      isJsonObject(c) &&
      typeof c.$ref === 'string' &&
      c.$ref.startsWith(prefix) &&
      MESSAGE_TYPES.has(c.$ref.slice(prefix.length)),
  );
}

/**
 * The input schema a model sees: a message list is asked for as one string (the user's message)
 * and the LangChain definitions go, as on the official server; `type: object` as MCP requires.
 */
export function toolInputSchema(input: unknown): Schema {
  const schema: Schema = isJsonObject(input) ? structuredClone(input) : {};
  const defsKey = isJsonObject(schema.$defs)
    ? '$defs'
    : isJsonObject(schema.definitions)
      ? 'definitions'
      : undefined;
  const defs = defsKey ? (schema[defsKey] as Schema) : undefined;
  if (defsKey && defs && Object.keys(defs).some((k) => MESSAGE_TYPES.has(k))) {
    for (const k of [...MESSAGE_TYPES, ...MESSAGE_PARTS]) delete defs[k];
    if (Object.keys(defs).length === 0) delete schema[defsKey];
  }
  const props = isJsonObject(schema.properties) ? schema.properties : {};
  const replaced: unknown[] = [];
  for (const [key, prop] of Object.entries(props))
    if (isMessageList(prop, defsKey)) {
      replaced.push(prop);
      props[key] = {
        type: 'string',
        title: (isJsonObject(prop) && prop.title) || key,
        description: 'The user message to send to the agent.',
      };
    }
  if (replaced.length && defsKey) dropDefinitionsOf(replaced, schema, defsKey);
  schema.type ??= 'object';
  return schema;
}

/**
 * Removes the definitions that only the replaced message lists used (with types read from
 * TypeScript, `BaseMessage` and everything it refers to).
 */
function dropDefinitionsOf(replaced: unknown[], schema: Schema, defsKey: string): void {
  const defs = schema[defsKey];
  if (!isJsonObject(defs)) return;
  const prefix = `#/${defsKey}/`;
  const reachable = (from: unknown): Set<string> => {
    const refsIn = (value: unknown): string[] =>
      [...JSON.stringify(value ?? null).matchAll(/"\$ref":"([^"]*)"/g)]
        .map((m) => m[1]!)
        .filter((ref) => ref.startsWith(prefix))
        .map((ref) => ref.slice(prefix.length));
    const seen = new Set<string>();
    const pending = refsIn(from);
    for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
      if (seen.has(name)) continue;
      seen.add(name);
      pending.push(...refsIn(defs[name]));
    }
    return seen;
  };
  const kept = reachable({ ...schema, [defsKey]: undefined });
  for (const name of reachable(replaced)) if (!kept.has(name)) delete defs[name];
  if (Object.keys(defs).length === 0) delete schema[defsKey];
}

export interface ToolAssistant {
  assistant_id: string;
  name: string;
  description?: string | null;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: Schema;
  annotations: Record<string, boolean>;
}

/**
 * Assistants whose tool names collide: the first keeps the name, the others are not listed. Nor
 * is an assistant whose name leaves no tool name (empty, or no ASCII letter or digit in it):
 * MCP names have at least one character.
 */
export function uniqueByToolName<T extends ToolAssistant>(
  assistants: T[],
): { kept: Array<{ assistant: T; name: string }>; dropped: T[] } {
  const seen = new Set<string>();
  const kept: Array<{ assistant: T; name: string }> = [];
  const dropped: T[] = [];
  for (const assistant of assistants) {
    const name = toolName(assistant.name);
    if (!name || seen.has(name)) dropped.push(assistant);
    else {
      seen.add(name);
      kept.push({ assistant, name });
    }
  }
  return { kept, dropped };
}

export function toolOf(assistant: ToolAssistant, name: string, inputSchema: unknown): Tool {
  return {
    name,
    title: assistant.name,
    description: assistant.description || `Tool based on the ${assistant.name} assistant`,
    inputSchema: toolInputSchema(inputSchema),
    // Running a graph may do anything, as far as the caller can tell.
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    },
  };
}
