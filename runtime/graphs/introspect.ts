// What the API tells clients about a graph: its drawing, JSON Schemas, and subgraphs.
import { messagesStateReducer } from '@langchain/langgraph';
import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { isZodSchemaV3, isZodSchemaV4 } from '@langchain/core/utils/types';
import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getUpdateTypeSchema,
} from '@langchain/langgraph/zod/schema';
import type { AnyGraph } from './registry.js';

export type JsonSchema = Record<string, unknown>;

export interface GraphSchemas {
  input_schema: JsonSchema | null;
  output_schema: JsonSchema | null;
  state_schema: JsonSchema | null;
  config_schema: JsonSchema | null;
  context_schema: JsonSchema | null;
}

const MESSAGE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    type: { type: 'string' },
    content: {},
    id: { type: ['string', 'null'] },
    name: { type: ['string', 'null'] },
  },
  required: ['content'],
};

function attempt(fn: () => unknown): JsonSchema | undefined {
  try {
    const result = fn();
    return result && typeof result === 'object' ? (result as JsonSchema) : undefined;
  } catch {
    // Some zod types (custom, transforms) cannot be expressed as JSON Schema.
    return undefined;
  }
}

/** What a graph's builder keeps of the schemas it was declared with. */
interface BuilderSchemas {
  _schemaRuntimeDefinition?: unknown;
  _inputRuntimeDefinition?: unknown;
  _outputRuntimeDefinition?: unknown;
  _configRuntimeSchema?: unknown;
  /** The channels of the graph's input and output (its state's when it declares none). */
  _inputDefinition?: unknown;
  _outputDefinition?: unknown;
  channels?: Record<string, unknown>;
}

export interface Derived {
  state?: JsonSchema | undefined;
  input?: JsonSchema | undefined;
  output?: JsonSchema | undefined;
  config?: JsonSchema | undefined;
}

function builderOf(graph: AnyGraph): BuilderSchemas | undefined {
  return (graph as unknown as { builder?: BuilderSchemas }).builder;
}

interface StateSchemaLike {
  getJsonSchema(): JsonSchema;
  getInputJsonSchema(): JsonSchema;
}

function isStateSchema(value: unknown): value is StateSchemaLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { getJsonSchema?: unknown }).getJsonSchema === 'function' &&
    typeof (value as { getInputJsonSchema?: unknown }).getInputJsonSchema === 'function'
  );
}

/** The builder's marker for an input that is the state with every key optional. */
const PARTIAL_STATE = Symbol.for('langgraph.state.partial');

/** A state declared with `StateSchema` describes itself; it has no config schema. */
function fromStateSchema(builder: BuilderSchemas): Derived | undefined {
  const { _schemaRuntimeDefinition: state, _inputRuntimeDefinition: input } = builder;
  const output = builder._outputRuntimeDefinition;
  if (!isStateSchema(state) && !isStateSchema(input) && !isStateSchema(output)) return undefined;
  const derived: Derived = {
    state: isStateSchema(state) ? attempt(() => state.getJsonSchema()) : undefined,
    input: isStateSchema(input)
      ? attempt(() => input.getInputJsonSchema())
      : input === PARTIAL_STATE && isStateSchema(state)
        ? attempt(() => state.getInputJsonSchema())
        : undefined,
    output: isStateSchema(output) ? attempt(() => output.getJsonSchema()) : undefined,
  };
  return derived.state || derived.input || derived.output ? derived : undefined;
}

/** zod schemas, through LangGraph's registry (which knows reducers and `withLangGraph` extras). */
function fromZodRegistry(graph: AnyGraph): Derived | undefined {
  const derived: Derived = {
    // The state schema is the update's, every key optional, as the official server answers.
    state: attempt(() => getUpdateTypeSchema(graph)),
    input: attempt(() => getInputTypeSchema(graph)),
    output: attempt(() => getOutputTypeSchema(graph)),
    config: attempt(() => getConfigTypeSchema(graph)),
  };
  return Object.values(derived).some(Boolean) ? derived : undefined;
}

/** zod schemas the registry does not know, converted directly. */
function fromZod(builder: BuilderSchemas): Derived | undefined {
  const convert = (schema: unknown) =>
    isZodSchemaV4(schema) || isZodSchemaV3(schema)
      ? attempt(() => toJsonSchema(schema as Parameters<typeof toJsonSchema>[0]))
      : undefined;
  const state = convert(builder._schemaRuntimeDefinition);
  const derived: Derived = {
    state,
    input:
      convert(builder._inputRuntimeDefinition) ??
      (state ? { ...state, required: undefined } : undefined),
    output: convert(builder._outputRuntimeDefinition),
    config: convert(builder._configRuntimeSchema),
  };
  return Object.values(derived).some(Boolean) ? derived : undefined;
}

/**
 * Graphs built from `Annotation` carry no types at run time, only channels: describe the keys
 * (messages as a list of messages) of the state, or of the input or output the graph declares,
 * when their TypeScript types cannot be read.
 */
function channelSchema(
  builder: BuilderSchemas,
  part: 'state' | 'input' | 'output',
): JsonSchema | undefined {
  const channels = builder.channels;
  if (!channels) return undefined;
  const declared = part === 'input' ? builder._inputDefinition : builder._outputDefinition;
  const keys =
    part !== 'state' && typeof declared === 'object' && declared !== null
      ? Object.keys(declared)
      : Object.keys(channels);
  const properties: Record<string, JsonSchema> = {};
  for (const key of keys) {
    if (key.startsWith('__') || key.startsWith('branch:')) continue;
    const operator = (channels[key] as { operator?: unknown } | undefined)?.operator;
    properties[key] =
      operator === messagesStateReducer ? { type: 'array', items: MESSAGE_SCHEMA } : {};
  }
  return { type: 'object', properties };
}

/**
 * The schemas a graph carries at run time, in the official JS server's order: a `StateSchema`,
 * then zod through LangGraph's registry, then zod directly. Undefined for graphs declared only
 * with TypeScript types (`Annotation`, `entrypoint`, ...): see typed-schemas.ts.
 */
export function runtimeSchemas(graph: AnyGraph): Derived | undefined {
  const builder = builderOf(graph);
  return builder
    ? (fromStateSchema(builder) ?? fromZodRegistry(graph) ?? fromZod(builder))
    : undefined;
}

/** More than `{ type: 'object' }`: the official server answers that for a type it cannot see into. */
function describes(schema: JsonSchema | undefined): schema is JsonSchema {
  return !!schema && Object.keys(schema).some((key) => key !== 'type' && key !== '$schema');
}

/**
 * The JSON Schemas of a graph: those it carries at run time, else those of its TypeScript types
 * (`typed`), else its channels' keys; the context schema is the config schema (in LangGraph.js
 * the two are one). An empty typed state, input or output leaves the channels' keys in its place.
 */
export function graphSchemas(graph: AnyGraph, typed?: Derived): GraphSchemas {
  const derived = runtimeSchemas(graph);
  if (derived) {
    return {
      input_schema: derived.input ?? null,
      output_schema: derived.output ?? null,
      state_schema: derived.state ?? null,
      config_schema: derived.config ?? null,
      context_schema: derived.config ?? null,
    };
  }
  const builder = builderOf(graph);
  const channels = (part: 'state' | 'input' | 'output') =>
    (builder && channelSchema(builder, part)) ?? undefined;
  const pick = (schema: JsonSchema | undefined, part: 'state' | 'input' | 'output') =>
    (describes(schema) ? schema : (channels(part) ?? schema)) ?? null;
  return {
    input_schema: pick(typed?.input, 'input'),
    output_schema: pick(typed?.output, 'output'),
    state_schema: pick(typed?.state, 'state'),
    config_schema: typed?.config ?? null,
    context_schema: typed?.config ?? null,
  };
}

export async function graphDrawing(graph: AnyGraph, xray: boolean | number): Promise<unknown> {
  // `xray` is accepted by compiled graphs but missing from the RunnableConfig type.
  const drawable = await graph.getGraphAsync({ xray } as Parameters<AnyGraph['getGraphAsync']>[0]);
  return drawable.toJSON();
}

export async function subgraphSchemas(
  graph: AnyGraph,
  namespace: string | undefined,
  recurse: boolean,
): Promise<Record<string, GraphSchemas>> {
  const result: Record<string, GraphSchemas> = {};
  for await (const [ns, subgraph] of graph.getSubgraphsAsync(namespace, recurse)) {
    result[ns] = graphSchemas(subgraph as AnyGraph);
  }
  return result;
}
