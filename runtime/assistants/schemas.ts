import { z } from 'zod';
import { GraphConfig } from '../graphs/index.js';

const JsonObject = z.record(z.string(), z.unknown());

export const AssistantConfig = GraphConfig;

export const ASSISTANT_FIELDS = [
  'assistant_id',
  'graph_id',
  'name',
  'description',
  'config',
  'context',
  'created_at',
  'updated_at',
  'metadata',
  'version',
] as const;

export const ASSISTANT_SORT_FIELDS = [
  'assistant_id',
  'graph_id',
  'name',
  'created_at',
  'updated_at',
] as const;

export const Assistant = z
  .object({
    assistant_id: z.uuid(),
    graph_id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    config: AssistantConfig,
    context: JsonObject,
    metadata: JsonObject,
    version: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Assistant' });

export const AssistantIdParams = z.object({ assistant_id: z.string().min(1) });

export const AssistantCreate = z.object({
  assistant_id: z.uuid().nullish(),
  graph_id: z.string().min(1),
  config: AssistantConfig.nullish(),
  context: JsonObject.nullish(),
  metadata: JsonObject.nullish(),
  if_exists: z.enum(['raise', 'do_nothing']).nullish(),
  name: z.string().nullish(),
  description: z.string().nullish(),
});

export const AssistantPatch = z.object({
  graph_id: z.string().min(1).nullish(),
  config: AssistantConfig.nullish(),
  context: JsonObject.nullish(),
  metadata: JsonObject.nullish(),
  name: z.string().nullish(),
  description: z.string().nullish(),
});

export const AssistantSearch = z.object({
  metadata: JsonObject.nullish(),
  graph_id: z.string().nullish(),
  name: z.string().nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
  sort_by: z.enum(ASSISTANT_SORT_FIELDS).nullish(),
  sort_order: z.enum(['asc', 'desc']).nullish(),
  select: z.array(z.enum(ASSISTANT_FIELDS)).nullish(),
});

export const AssistantCount = z.object({
  metadata: JsonObject.nullish(),
  graph_id: z.string().nullish(),
  name: z.string().nullish(),
});

export const AssistantVersionsQuery = z.object({
  metadata: JsonObject.nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
});

// Versions are PostgreSQL integers.
export const AssistantLatest = z.object({
  version: z
    .number()
    .int()
    .min(1)
    .max(2 ** 31 - 1),
});

export const AssistantDeleteQuery = z.object({
  delete_threads: z.enum(['true', 'false', '1', '0']).optional(),
});

const XRAY_MESSAGE = 'Expected true, false or a depth (a whole number)';
export const GraphQuery = z.object({
  xray: z
    .union([z.enum(['true', 'false']), z.string().regex(/^\d+$/, XRAY_MESSAGE)], {
      error: XRAY_MESSAGE,
    })
    .optional(),
});

export const SubgraphsQuery = z.object({ recurse: z.enum(['true', 'false', '1', '0']).optional() });
export const SubgraphsParams = AssistantIdParams.extend({ namespace: z.string().optional() });

export type AssistantRecord = z.infer<typeof Assistant>;
export type AssistantCreateBody = z.infer<typeof AssistantCreate>;
export type AssistantPatchBody = z.infer<typeof AssistantPatch>;
export type AssistantSearchBody = z.infer<typeof AssistantSearch>;
export type AssistantCountBody = z.infer<typeof AssistantCount>;
export type AssistantField = (typeof ASSISTANT_FIELDS)[number];
