// Wire shapes of /api/v1/bulk-exports (LangSmith's BulkExport* schemas).
import { z } from 'zod';
import { storableString } from '../common/json/index.js';
import { EXPORT_STATUSES } from './model.js';

const time = z.iso.datetime({ offset: true, local: true });

export const ExportCreate = z.object({
  bulk_export_destination_id: z.uuid(),
  session_id: z.uuid(),
  /** Inclusive, compared with each run's start_time. */
  start_time: time,
  /** Exclusive; required unless `interval_hours` makes the export a schedule. */
  end_time: time.nullish(),
  /** LangSmith's run filter language (the part the trace store serves); absent: every run. */
  filter: storableString().max(10_000).nullish(),
  format: z.literal('Parquet').default('Parquet'),
  format_version: z.enum(['v1', 'v2_beta']).nullish(),
  compression: z.enum(['none', 'gzip', 'snappy', 'zstd', 'zstandard']).default('gzip'),
  /** A new export every this many hours, each after its window's end plus a grace period. */
  interval_hours: z.number().int().min(1).max(168).nullish(),
  /** A subset of the exportable fields; absent: all of them. */
  export_fields: z.array(z.string()).min(1).nullish(),
});
export type ExportCreate = z.infer<typeof ExportCreate>;

export const ExportUpdate = z.object({ status: z.literal('Cancelled') });

export const BulkExport = z.object({
  id: z.uuid(),
  tenant_id: z.uuid(),
  bulk_export_destination_id: z.uuid(),
  session_id: z.uuid(),
  start_time: z.string(),
  end_time: z.string().nullable(),
  filter: z.string().nullable(),
  format: z.literal('Parquet'),
  compression: z.string(),
  interval_hours: z.number().nullable(),
  export_fields: z.array(z.string()).nullable(),
  status: z.enum(EXPORT_STATUSES),
  source_bulk_export_id: z.uuid().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
});
export type BulkExport = z.infer<typeof BulkExport>;

export const BulkExportRun = z.object({
  id: z.uuid(),
  bulk_export_id: z.uuid(),
  status: z.enum(EXPORT_STATUSES),
  retry_number: z.number(),
  /** The error of each failed attempt, keyed `retry_<n>`. */
  errors: z.record(z.string(), z.string()).nullable(),
  start_time: z.string(),
  end_time: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  metadata: z.object({
    prefix: z.string(),
    start_time: z.string(),
    end_time: z.string(),
    execution_backend: z.string().nullable(),
    result: z.object({
      rows_written: z.number(),
      exported_files: z.array(z.string()),
      export_path: z.string(),
      latest_cursor: z.string().nullable(),
      pending_upload: z
        .object({ file_path: z.string(), from_cursor: z.string().nullable() })
        .nullable(),
    }),
  }),
});
export type BulkExportRun = z.infer<typeof BulkExportRun>;

export const ExportIdParams = z.object({ bulk_export_id: z.uuid() });
export const RunIdParams = z.object({ bulk_export_id: z.uuid(), run_id: z.uuid() });
export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});
export const SourceQuery = z.object({ source_bulk_export_id: z.uuid() });
