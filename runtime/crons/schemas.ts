import { z } from 'zod';
import { RunCreate } from '../runs/index.js';

const JsonObject = z.record(z.string(), z.unknown());
const Id = z.uuid().transform((id) => id.toLowerCase());
const IsoDateTime = z.iso.datetime({ offset: true, local: true });

export const CRON_FIELDS = [
  'cron_id',
  'assistant_id',
  'thread_id',
  'on_run_completed',
  'end_time',
  'schedule',
  'timezone',
  'created_at',
  'updated_at',
  'payload',
  'user_id',
  'next_run_date',
  'metadata',
  'enabled',
] as const;
export type CronField = (typeof CRON_FIELDS)[number];
export const CRON_SORT_FIELDS = [
  'cron_id',
  'assistant_id',
  'thread_id',
  'next_run_date',
  'end_time',
  'created_at',
  'updated_at',
] as const;

/** The run each firing creates; stored as the cron's `payload`. */
const RunPayloadFields = {
  ...RunCreate.pick({
    input: true,
    command: true,
    config: true,
    context: true,
    interrupt_before: true,
    interrupt_after: true,
    stream_mode: true,
    stream_subgraphs: true,
    stream_resumable: true,
    durability: true,
  }).shape,
  // Checked by the cron service's own URL rule, so a plain string here.
  webhook: z.string().nullish(),
  checkpoint_during: z.boolean().nullish(),
};
export const PAYLOAD_KEYS = [
  ...Object.keys(RunPayloadFields),
  'multitask_strategy',
  'if_not_exists',
] as const;

export const CronCreate = z.object({
  assistant_id: z.string().min(1),
  schedule: z.string().min(1),
  timezone: z.string().min(1).nullish(),
  end_time: IsoDateTime.nullish(),
  enabled: z.boolean().nullish(),
  on_run_completed: z.enum(['delete', 'keep']).nullish(),
  metadata: JsonObject.nullish(),
  multitask_strategy: z.enum(['reject', 'interrupt', 'rollback', 'enqueue']).nullish(),
  if_not_exists: z.enum(['reject', 'create']).nullish(),
  ...RunPayloadFields,
});
export type CronCreateBody = z.infer<typeof CronCreate>;

export const CronPatch = z.object({
  schedule: z.string().min(1).optional(),
  timezone: z.string().min(1).nullish(),
  end_time: IsoDateTime.nullish(),
  enabled: z.boolean().optional(),
  on_run_completed: z.enum(['delete', 'keep']).optional(),
  metadata: JsonObject.optional(),
  ...RunPayloadFields,
});
export type CronPatchBody = z.infer<typeof CronPatch>;

export const CronSearch = z.object({
  assistant_id: z.string().min(1).nullish(),
  thread_id: Id.nullish(),
  enabled: z.boolean().nullish(),
  metadata: JsonObject.nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
  sort_by: z.enum(CRON_SORT_FIELDS).nullish(),
  sort_order: z.enum(['asc', 'desc']).nullish(),
  select: z.array(z.enum([...CRON_FIELDS, 'now'])).nullish(),
});
export type CronSearchBody = z.infer<typeof CronSearch>;

export const CronCount = CronSearch.pick({
  assistant_id: true,
  thread_id: true,
  enabled: true,
  metadata: true,
});
export type CronCountBody = z.infer<typeof CronCount>;

export const CronParams = z.object({ cron_id: Id });
export const ThreadCronParams = z.object({ thread_id: Id });

export const Cron = z
  .object({
    cron_id: z.uuid(),
    assistant_id: z.uuid(),
    thread_id: z.uuid().nullable(),
    on_run_completed: z.enum(['delete', 'keep']).nullable(),
    end_time: z.string().nullable(),
    schedule: z.string(),
    timezone: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    payload: JsonObject,
    user_id: z.string().nullable(),
    next_run_date: z.string().nullable(),
    metadata: JsonObject,
    enabled: z.boolean(),
  })
  .meta({ id: 'Cron' });
