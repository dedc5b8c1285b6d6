// Wire schemas of the LangSmith-compatible trace endpoints (the SDKs' run create/update bodies,
// the run query, sessions). Unknown fields are accepted and ignored, as LangSmith does.
import { z } from 'zod';
import { storableString } from '../common/json/index.js';

const Uuid = z.uuid();
const Time = z.union([z.string(), z.number()]).nullish();
const Json = z.unknown().optional();
/**
 * A string the store matches on or keeps as a key (project names, filters, cursors). Run fields
 * that are data (names, errors, tags) may hold anything: they are stored encoded.
 */
const Text = storableString();

const RunFields = {
  name: z.string().nullish(),
  run_type: z.string().nullish(),
  start_time: Time,
  end_time: Time,
  inputs: Json,
  outputs: Json,
  error: z.unknown().optional(),
  extra: z.record(z.string(), z.unknown()).nullish(),
  events: z.array(z.unknown()).nullish(),
  tags: z.array(z.string()).nullish(),
  serialized: Json,
  trace_id: Uuid.nullish(),
  dotted_order: z
    .string()
    .regex(/^(\d{8}T\d{6,12}Z[0-9a-fA-F-]{36})(\.\d{8}T\d{6,12}Z[0-9a-fA-F-]{36})*$/)
    .nullish(),
  parent_run_id: Uuid.nullish(),
  session_name: Text.min(1).nullish(),
  session_id: Uuid.nullish(),
  reference_example_id: Uuid.nullish(),
  status: z.string().nullish(),
  trace_tier: z.string().nullish(),
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
  total_tokens: z.number().nullish(),
  prompt_cost: z.number().nullish(),
  completion_cost: z.number().nullish(),
  total_cost: z.number().nullish(),
  first_token_time: Time,
};

export const RunCreate = z.looseObject({ id: Uuid, ...RunFields });
export type RunCreate = z.infer<typeof RunCreate>;

export const RunUpdate = z.looseObject({ id: Uuid.optional(), ...RunFields });
export type RunUpdate = z.infer<typeof RunUpdate>;

export const RunBatch = z.looseObject({
  post: z.array(RunCreate).nullish(),
  patch: z.array(RunUpdate.extend({ id: Uuid })).nullish(),
});

export const RunIdParams = z.object({ run_id: Uuid });

const UuidList = z.union([Uuid, z.array(Uuid)]).transform((v) => (Array.isArray(v) ? v : [v]));

export const RunQueryBody = z.looseObject({
  id: UuidList.nullish(),
  session: UuidList.nullish(),
  trace: Uuid.nullish(),
  parent_run: Uuid.nullish(),
  run_type: Text.nullish(),
  is_root: z.boolean().nullish(),
  error: z.boolean().nullish(),
  start_time: Text.nullish(),
  end_time: Text.nullish(),
  filter: Text.nullish(),
  /** Graphdock extension: runs whose metadata names this thread. */
  thread_id: Text.nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  cursor: Text.nullish(),
  order: z.enum(['asc', 'desc']).nullish(),
  select: z.array(Text).nullish(),
  trace_filter: Text.nullish(),
  tree_filter: Text.nullish(),
});
export type RunQueryBody = z.infer<typeof RunQueryBody>;

export const SessionIdParams = z.object({ session_id: Uuid });

export const SessionQuery = z.object({
  name: Text.optional(),
  name_contains: Text.optional(),
  id: z.union([Uuid, z.array(Uuid)]).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
  include_stats: Text.optional(),
});

export const SessionCreate = z.looseObject({
  name: Text.min(1),
  id: Uuid.nullish(),
  description: Text.nullish(),
  extra: z.record(z.string(), z.unknown()).nullish(),
});

export const UpsertQuery = z.object({ upsert: z.enum(['true', 'false']).optional() });

export const ThreadParams = z.object({ thread_id: Text.min(1) });
export const ThreadQuery = z.object({ session_id: Uuid.optional() });

export const Retention = z.object({ ttl_days: z.number().int().min(1).max(3650) });
