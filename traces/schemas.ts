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

/**
 * LangSmith's feedback configs (a key's score type and categories) are not kept here: one given
 * is refused rather than ignored, so that nobody counts on its checks.
 */
const NoFeedbackConfig = z
  .null({ error: 'feedback configs are not supported by this trace store' })
  .optional();

/** A feedback score: a number, or a boolean, read as 1 or 0 (how it is stored). */
const Score = z.union([z.number(), z.boolean().transform(Number)]).nullish();
const FeedbackSource = z.looseObject({ type: z.string().nullish() }).nullish();
/** What a feedback says, however it arrives (created, updated, through a token). */
const FeedbackFields = {
  score: Score,
  value: Json,
  comment: Text.nullish(),
  correction: Json,
};

/**
 * The body of `client.createFeedback` (POST /feedback, or a multipart `feedback.<id>` part).
 * A run is required here: feedback on a project alone is not kept.
 */
export const FeedbackCreate = z.looseObject({
  id: Uuid.nullish(),
  run_id: Uuid,
  trace_id: Uuid.nullish(),
  session_id: Uuid.nullish(),
  key: Text.min(1),
  ...FeedbackFields,
  feedback_source: FeedbackSource,
  created_at: Time,
  feedback_config: NoFeedbackConfig,
});
export type FeedbackCreate = z.infer<typeof FeedbackCreate>;

export const FeedbackIdParams = z.object({ feedback_id: Uuid });

/** `client.updateFeedback`: the fields it sends, each optional. */
export const FeedbackUpdate = z.looseObject({
  ...FeedbackFields,
  feedback_config: NoFeedbackConfig,
});
export type FeedbackUpdate = z.infer<typeof FeedbackUpdate>;

const Many = <T extends z.ZodType>(item: T) =>
  z.union([item, z.array(item)]).transform((v) => (Array.isArray(v) ? v : [v]));

export const FeedbackQuery = z.object({
  run: Many(Uuid).optional(),
  key: Many(Text.min(1)).optional(),
  /** `feedback_source.type`: `api`, `model`, `app`… */
  source: Many(Text.min(1)).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});

const TokenCreate = z.looseObject({
  run_id: Uuid,
  feedback_key: Text.min(1),
  expires_in: z
    .object({
      // Bounded so that any sum stays a valid date (about 30 years at most).
      days: z.number().min(0).max(3650).optional(),
      hours: z.number().min(0).max(87600).optional(),
      minutes: z.number().min(0).max(5256000).optional(),
    })
    .nullish(),
  // Python's SDK may send a naive isoformat(): read as UTC, as run times are.
  expires_at: z.iso.datetime({ offset: true, local: true }).nullish(),
  feedback_config: NoFeedbackConfig,
});
export type TokenCreate = z.infer<typeof TokenCreate>;
/** `createPresignedFeedbackToken`'s body, or a list of them. */
export const TokenCreateBody = z.union([TokenCreate, z.array(TokenCreate).min(1).max(100)]);

export const TokenParams = z.object({ token: Uuid });

/** `listPresignedFeedbackTokens`: a run's tokens. */
export const TokenListQuery = z.object({
  run_id: Uuid,
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});

/** Feedback through a presigned token: the URL's query (GET) or a JSON body (POST). */
export const TokenFeedback = z.looseObject({
  ...FeedbackFields,
  metadata: z.record(z.string(), z.unknown()).nullish(),
});
export type TokenFeedback = z.infer<typeof TokenFeedback>;

/** The query of a token URL's GET: scores and JSON arrive as text. */
export const TokenFeedbackQuery = z.object({
  score: z
    .string()
    .transform((s, ctx) => {
      if (s === 'true' || s === 'false') return Number(s === 'true');
      const n = s.trim() === '' ? NaN : Number(s);
      if (Number.isFinite(n)) return n;
      ctx.addIssue({ code: 'custom', message: 'score must be a number or a boolean' });
      return z.NEVER;
    })
    .optional(),
  value: z.string().optional(),
  comment: Text.optional(),
  correction: z.string().optional(),
});
