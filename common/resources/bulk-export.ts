// BulkExport: one export whose day runs the operator executes as Kubernetes Jobs
// (`graphdock export-run <run id>`). The api writes the spec from its database (the source of
// truth of rows, cursors and files); the operator owns the Jobs and mirrors them into the status.
import { z } from 'zod';
import { immutable } from './cel.js';
import { Conditions } from './conditions.js';
import type { CustomResourceSource } from './crd.js';
import { BULK_EXPORT } from './meta.js';

export const BULK_EXPORT_PHASES = [
  'Pending',
  'Running',
  'Completed',
  'Failed',
  'Cancelled',
] as const;
export const EXPORT_JOB_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed'] as const;

export const BulkExportRunRef = z.object({
  id: z.uuid(),
  start_time: z.iso.datetime({ offset: true }),
  end_time: z.iso.datetime({ offset: true }),
});

export const BulkExportSpec = z.object({
  export_id: z.uuid().meta(immutable('export_id is immutable')),
  tenant_id: z.uuid().meta(immutable('tenant_id is immutable')),
  session_id: z.uuid(),
  destination_id: z.uuid(),
  /** Every day run of the export; a Job of a run already finished exits at once. */
  runs: z.array(BulkExportRunRef).max(4096),
  /** Pods per run (the first included), as the api's GRAPHDOCK_EXPORT_MAX_ATTEMPTS. */
  max_attempts: z.number().int().min(1).max(100),
  /** Set by the api when the export is cancelled: the operator deletes its running Jobs. */
  cancelled: z.boolean().optional(),
});
export type BulkExportSpec = z.infer<typeof BulkExportSpec>;

export const ExportJobStatus = z.object({
  id: z.uuid(),
  job: z.string().max(253),
  phase: z.enum(EXPORT_JOB_PHASES),
  /** Pods started for the run so far. */
  attempts: z.number().int().min(0),
  message: z.string().max(1024).optional(),
});
export type ExportJobStatus = z.infer<typeof ExportJobStatus>;

export const BulkExportStatus = z.object({
  observedGeneration: z.number().int().min(0).optional(),
  conditions: Conditions.optional(),
  phase: z.enum(BULK_EXPORT_PHASES).optional(),
  /** "<succeeded>/<runs>", for the printer column. */
  progress: z.string().max(32).optional(),
  succeeded: z.number().int().min(0).optional(),
  failed: z.number().int().min(0).optional(),
  active: z.number().int().min(0).optional(),
  runs: z
    .array(ExportJobStatus)
    .max(4096)
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['id'] })
    .optional(),
});
export type BulkExportStatus = z.infer<typeof BulkExportStatus>;

export const bulkExportResource: CustomResourceSource = {
  kind: BULK_EXPORT,
  spec: BulkExportSpec,
  status: BulkExportStatus,
  printerColumns: [
    { name: 'Export', type: 'string', jsonPath: '.spec.export_id' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Runs', type: 'string', jsonPath: '.status.progress' },
    { name: 'Active', type: 'integer', jsonPath: '.status.active' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};

/** One resource per export, named by its id. */
export function bulkExportResourceName(exportId: string): string {
  return `export-${exportId}`;
}
