// What the API tells clients about a graph: its drawing, JSON Schemas, and subgraphs.
import { messagesStateReducer } from '@langchain/langgraph';
import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getStateTypeSchema,
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

function attempt(fn: () => unknown): JsonSchema | null {
  try {
    const result = fn();
    return result && typeof result === 'object' ? (result as JsonSchema) : null;
  } catch {
    // Some zod types (custom, transforms) cannot be expressed as JSON Schema.
    return null;
  }
}

/** Graphs built from `Annotation` carry no types, only channels: describe their keys. */
function channelSchema(graph: AnyGraph): JsonSchema | null {
  const builder = (graph as unknown as { builder?: { channels?: Record<string, unknown> } })
    .builder;
  const channels = builder?.channels;
  if (!channels) return null;
  const properties: Record<string, JsonSchema> = {};
  for (const [key, channel] of Object.entries(channels)) {
    if (key.startsWith('__') || key.startsWith('branch:')) continue;
    const operator = (channel as { operator?: unknown }).operator;
    properties[key] =
      operator === messagesStateReducer ? { type: 'array', items: MESSAGE_SCHEMA } : {};
  }
  return { type: 'object', properties };
}

export function graphSchemas(graph: AnyGraph): GraphSchemas {
  const fallback = channelSchema(graph);
  const state = attempt(() => getStateTypeSchema(graph)) ?? fallback;
  const config = attempt(() => getConfigTypeSchema(graph));
  return {
    input_schema: attempt(() => getInputTypeSchema(graph)) ?? state,
    output_schema: attempt(() => getOutputTypeSchema(graph)) ?? state,
    state_schema: state,
    config_schema: config,
    context_schema: config,
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
