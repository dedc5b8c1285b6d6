import { z } from 'zod';
import { CHECKPOINT_ID_MESSAGE, CHECKPOINT_ID_PATTERN } from '../../common/ids/index.js';
import { queryList } from '../../common/json/index.js';
import { MAX_DELAY_SECONDS } from '../../common/limits/index.js';
import { CommandInput, GraphConfig } from '../graphs/index.js';
import { THREAD_STREAM_MODES } from './thread-stream.js';

const JsonObject = z.record(z.string(), z.unknown());
const Id = z.uuid().transform((id) => id.toLowerCase());
const CheckpointId = z.string().regex(CHECKPOINT_ID_PATTERN, CHECKPOINT_ID_MESSAGE);

export const RUN_STATUSES = [
  'pending',
  'running',
  'success',
  'error',
  'timeout',
  'interrupted',
] as const;
export const STREAM_MODES = [
  'values',
  'updates',
  'messages',
  'messages-tuple',
  'events',
  'custom',
  'debug',
  'tasks',
  'checkpoints',
] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

const StreamModeInput = z.union([z.enum(STREAM_MODES), z.array(z.enum(STREAM_MODES))], {
  // The union's own message would say only "Invalid input": name the modes instead.
  error: `Invalid stream mode: expected one of ${STREAM_MODES.map((m) => `"${m}"`).join(', ')}, or a list of them`,
});
const Breakpoints = z.union([z.literal('*'), z.array(z.string())], {
  error: 'Expected "*" or a list of node names',
});

export const RunCreate = z.object({
  assistant_id: z.string().min(1),
  input: z.unknown().optional(),
  command: CommandInput.nullish(),
  config: GraphConfig.nullish(),
  context: JsonObject.nullish(),
  metadata: JsonObject.nullish(),
  stream_mode: StreamModeInput.nullish(),
  stream_subgraphs: z.boolean().nullish(),
  stream_resumable: z.boolean().nullish(),
  interrupt_before: Breakpoints.nullish(),
  interrupt_after: Breakpoints.nullish(),
  checkpoint_id: CheckpointId.nullish(),
  checkpoint: z
    .object({
      checkpoint_id: CheckpointId.nullish(),
      checkpoint_ns: z.string().nullish(),
      checkpoint_map: JsonObject.nullish(),
    })
    .nullish(),
  multitask_strategy: z.enum(['reject', 'interrupt', 'rollback', 'enqueue']).nullish(),
  if_not_exists: z.enum(['reject', 'create']).nullish(),
  on_disconnect: z.enum(['cancel', 'continue']).nullish(),
  on_completion: z.enum(['delete', 'keep']).nullish(),
  after_seconds: z.number().min(0).max(MAX_DELAY_SECONDS).nullish(),
  // Any string: the webhooks context's validator names the URL rule a bad one breaks.
  webhook: z.string().nullish(),
  feedback_keys: z.array(z.string()).nullish(),
  durability: z.enum(['sync', 'async', 'exit']).nullish(),
  /** Refuse a resume answering no waiting interrupt: the run fails with UnknownInterruptError. */
  strict_resume: z.boolean().nullish(),
  /** The run's trace goes to this project (and dataset example) when the runtime traces. */
  langsmith_tracer: z
    .object({ project_name: z.string().min(1).nullish(), example_id: z.uuid().nullish() })
    .nullish(),
  /** Older spelling of `durability`: false means `exit`. */
  checkpoint_during: z.boolean().nullish(),
});
export type RunCreateBody = z.infer<typeof RunCreate>;

export const ThreadRunParams = z.object({ thread_id: Id });
export const RunParams = z.object({ thread_id: Id, run_id: Id });

/** The fields `select` may name on a run list (the SDKs' `RunSelectField`). */
export const RUN_FIELDS = [
  'run_id',
  'thread_id',
  'assistant_id',
  'created_at',
  'updated_at',
  'status',
  'metadata',
  'kwargs',
  'multitask_strategy',
] as const;
export type RunField = (typeof RUN_FIELDS)[number];

/** `queryList`, each value one of `values`. */
const queryEnum = <const T extends readonly [string, ...string[]]>(values: T) =>
  queryList().pipe(z.array(z.enum(values)));

export const RunListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).optional(),
  status: z.enum(RUN_STATUSES).optional(),
  select: queryEnum(RUN_FIELDS).optional(),
});

const Flag = z.enum(['true', 'false', '1', '0']).optional();
export const CancelQuery = z.object({
  wait: Flag,
  action: z.enum(['interrupt', 'rollback']).optional(),
});
export const JoinQuery = z.object({ cancel_on_disconnect: Flag });
/** A join of a run's stream may keep only some of its modes, as the Python server's does. */
export const JoinStreamQuery = JoinQuery.extend({
  stream_mode: queryEnum(STREAM_MODES).optional(),
});
export const truthy = (v: string | undefined) => v === 'true' || v === '1';

/** Thread stream modes, as one value, repeated values or a comma list (`stream_mode(s)`). */
const ThreadStreamModes = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((m) => m.split(',')).map((m) => m.trim()))
  .pipe(z.array(z.enum(THREAD_STREAM_MODES)));
export const ThreadStreamQuery = z.object({
  stream_mode: ThreadStreamModes.optional(),
  stream_modes: ThreadStreamModes.optional(),
});

export const RunBatch = z.array(RunCreate).min(1);

/** Either specific runs of one thread, or every run in a status; not both. */
export const BulkCancel = z.union(
  [
    z.strictObject({ thread_id: Id, run_ids: z.array(Id).min(1) }),
    z.strictObject({ status: z.enum(['pending', 'running', 'all']) }),
  ],
  { error: 'Give thread_id with run_ids (at least one), or status: "pending", "running" or "all"' },
);
export type BulkCancelBody = z.infer<typeof BulkCancel>;
