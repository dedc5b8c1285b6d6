import { z } from 'zod';
import { StateSelect, StateSelectQuery } from './state-select.js';
import { CHECKPOINT_ID_MESSAGE, CHECKPOINT_ID_PATTERN } from '../../common/ids/index.js';
import { MAX_TTL_MINUTES } from '../../common/limits/index.js';
import { CommandInput } from '../graphs/index.js';
import { EXTRACTABLE_COLUMNS, MAX_EXTRACT_PATHS, extractRoot } from './extract.js';

const JsonObject = z.record(z.string(), z.unknown());
const ThreadId = z.uuid().transform((id) => id.toLowerCase());
/** A checkpoint that does not exist is answered 404 by the service; one that cannot exist, 422. */
const CheckpointId = z.string().regex(CHECKPOINT_ID_PATTERN, CHECKPOINT_ID_MESSAGE);

export const THREAD_STATUSES = ['idle', 'busy', 'interrupted', 'error'] as const;
export const THREAD_FIELDS = [
  'thread_id',
  'created_at',
  'updated_at',
  'state_updated_at',
  'metadata',
  'config',
  'status',
  'values',
  'interrupts',
  'error',
] as const;
export const THREAD_SORT_FIELDS = [
  'thread_id',
  'status',
  'created_at',
  'updated_at',
  'state_updated_at',
] as const;

export const Thread = z
  .object({
    thread_id: z.uuid(),
    created_at: z.string(),
    updated_at: z.string(),
    state_updated_at: z.string().nullable(),
    metadata: JsonObject,
    config: JsonObject,
    status: z.enum(THREAD_STATUSES),
    values: z.unknown(),
    interrupts: JsonObject,
    error: z.unknown().optional(),
    /** Thread search with `extract`: what each path led to. */
    extracted: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'Thread' });

// Lower-cased so that one thread never has checkpoints under two spellings of its id.
export const ThreadIdParams = z.object({
  thread_id: z
    .uuid({ message: 'Invalid thread ID: must be a UUID' })
    .transform((id) => id.toLowerCase()),
});
export const CheckpointParams = ThreadIdParams.extend({ checkpoint_id: z.string().min(1) });

const Minutes = z.number().positive().max(MAX_TTL_MINUTES);
const Ttl = z.union(
  [Minutes, z.object({ ttl: Minutes, strategy: z.enum(['delete', 'keep_latest']).nullish() })],
  { error: 'Expected minutes, or {"ttl": minutes, "strategy": "delete" or "keep_latest"}' },
);

export const Superstep = z.object({
  updates: z.array(
    z.object({
      values: z.unknown(),
      command: CommandInput.nullish(),
      as_node: z.string().min(1),
    }),
  ),
});

export const ThreadCreate = z.object({
  thread_id: ThreadId.nullish(),
  metadata: JsonObject.nullish(),
  if_exists: z.enum(['raise', 'do_nothing']).nullish(),
  ttl: Ttl.nullish(),
  supersteps: z.array(Superstep).nullish(),
});

export const ThreadPatch = z.object({ metadata: JsonObject.nullish(), ttl: Ttl.nullish() });

/** alias -> path; each thread found carries what the paths lead to under `extracted`. */
const Extract = z
  .record(
    z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'An extract key is an identifier: letters, digits, _')
      .refine((key) => !(THREAD_FIELDS as readonly string[]).includes(key), {
        message: `An extract key cannot be a thread field (${THREAD_FIELDS.join(', ')})`,
      }),
    z
      .string()
      .min(1)
      .refine((path) => (EXTRACTABLE_COLUMNS as readonly string[]).includes(extractRoot(path)), {
        message: `An extract path starts with one of: ${EXTRACTABLE_COLUMNS.join(', ')}`,
      }),
  )
  .refine((paths) => Object.keys(paths).length <= MAX_EXTRACT_PATHS, {
    message: `At most ${MAX_EXTRACT_PATHS} extract paths`,
  });

export const ThreadSearch = z.object({
  metadata: JsonObject.nullish(),
  values: JsonObject.nullish(),
  ids: z.array(ThreadId).nullish(),
  status: z.enum(THREAD_STATUSES).nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
  sort_by: z.enum(THREAD_SORT_FIELDS).nullish(),
  sort_order: z.enum(['asc', 'desc']).nullish(),
  select: z.array(z.enum(THREAD_FIELDS)).nullish(),
  extract: Extract.nullish(),
});

export const ThreadCount = z.object({
  metadata: JsonObject.nullish(),
  values: JsonObject.nullish(),
  status: z.enum(THREAD_STATUSES).nullish(),
});

export const CheckpointSelector = z.object({
  checkpoint_id: CheckpointId.nullish(),
  checkpoint_ns: z.string().nullish(),
  checkpoint_map: JsonObject.nullish(),
  thread_id: z.string().nullish(),
});

export const StateQuery = z.object({
  subgraphs: z.enum(['true', 'false', '1', '0']).optional(),
  select: StateSelectQuery.optional(),
});

export const StateCheckpointBody = z.object({
  checkpoint: CheckpointSelector,
  subgraphs: z.boolean().nullish(),
  select: StateSelect.nullish(),
});

export const StateUpdate = z.object({
  values: z.unknown().optional(),
  as_node: z.string().nullish(),
  checkpoint_id: CheckpointId.nullish(),
  checkpoint: CheckpointSelector.nullish(),
});

/**
 * `before` arrives as a checkpoint id, a checkpoint, or a RunnableConfig depending on the SDK. A
 * RunnableConfig is unwrapped first: as one more union member, a bad id in its `configurable`
 * was dropped with the rest of it, and the history read from the newest checkpoint.
 */
const BeforeSelector = z.union([
  CheckpointId,
  z.preprocess(
    (v) => (v !== null && typeof v === 'object' && 'configurable' in v ? v.configurable : v),
    CheckpointSelector,
  ),
]);

export const HistoryBody = z.object({
  limit: z.number().int().min(1).max(1000).nullish(),
  before: BeforeSelector.nullish(),
  metadata: JsonObject.nullish(),
  checkpoint: CheckpointSelector.nullish(),
  select: StateSelect.nullish(),
});

export const HistoryQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  before: CheckpointId.optional(),
});

export const ThreadGetQuery = z.object({
  include: z.union([z.string(), z.array(z.string())]).optional(),
});

export const PruneBody = z.object({
  thread_ids: z.array(ThreadId),
  strategy: z.enum(['delete', 'keep_latest']).default('delete'),
});

export type ThreadCreateBody = z.infer<typeof ThreadCreate>;
export type ThreadPatchBody = z.infer<typeof ThreadPatch>;
export type ThreadSearchBody = z.infer<typeof ThreadSearch>;
export type ThreadCountBody = z.infer<typeof ThreadCount>;
export type StateUpdateBody = z.infer<typeof StateUpdate>;
export type HistoryOptions = z.infer<typeof HistoryBody>;
export type CheckpointSelectorBody = z.infer<typeof CheckpointSelector>;
export type ThreadField = (typeof THREAD_FIELDS)[number];
export type ThreadStatus = (typeof THREAD_STATUSES)[number];
export type TtlInput = z.infer<typeof Ttl>;
