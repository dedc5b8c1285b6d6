// HTTP of /api/v1/bulk-exports (exports and their runs). The host app authenticates;
// `tenantOf` names the caller's workspace (X-Tenant-Id). Successes answer 200, as LangSmith's.
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../common/errors/index.js';
import {
  BulkExport,
  BulkExportRun,
  ExportCreate,
  ExportIdParams,
  ExportUpdate,
  ListQuery,
  RunIdParams,
  SourceQuery,
} from './schemas.js';
import type { ExportService } from './service.js';

export const EXPORTS_PREFIX = '/api/v1/bulk-exports';

export function exportRoutes(
  service: ExportService,
  tenantOf: (request: FastifyRequest) => string,
): FastifyPluginAsyncZod {
  return async (app) => {
    const tags = ['Bulk exports'];
    app.post(
      EXPORTS_PREFIX,
      {
        schema: {
          tags,
          summary: 'Create a bulk export',
          body: ExportCreate,
          response: { 200: BulkExport, ...errorResponses('NOT_FOUND', 'VALIDATION') },
        },
      },
      (req) => service.create(tenantOf(req), req.body),
    );
    app.get(
      EXPORTS_PREFIX,
      {
        schema: {
          tags,
          summary: "List the workspace's bulk exports",
          querystring: ListQuery,
          response: { 200: z.array(BulkExport) },
        },
      },
      (req) => service.list(tenantOf(req), req.query.limit, req.query.offset),
    );
    app.get(
      `${EXPORTS_PREFIX}/runs`,
      {
        schema: {
          tags,
          summary: 'Runs of the exports a scheduled export spawned',
          querystring: SourceQuery,
          response: { 200: z.array(BulkExportRun) },
        },
      },
      (req) => service.runsOfSource(tenantOf(req), req.query.source_bulk_export_id),
    );
    app.get(
      `${EXPORTS_PREFIX}/:bulk_export_id`,
      {
        schema: {
          tags,
          summary: 'Get a bulk export',
          params: ExportIdParams,
          response: { 200: BulkExport, ...errorResponses('NOT_FOUND') },
        },
      },
      (req) => service.get(tenantOf(req), req.params.bulk_export_id),
    );
    app.patch(
      `${EXPORTS_PREFIX}/:bulk_export_id`,
      {
        schema: {
          tags,
          summary: 'Cancel a bulk export ({"status": "Cancelled"})',
          params: ExportIdParams,
          body: ExportUpdate,
          response: { 200: BulkExport, ...errorResponses('NOT_FOUND', 'CONFLICT', 'VALIDATION') },
        },
      },
      (req) => service.cancel(tenantOf(req), req.params.bulk_export_id),
    );
    app.get(
      `${EXPORTS_PREFIX}/:bulk_export_id/runs`,
      {
        schema: {
          tags,
          summary: "A bulk export's runs (one per day) with their progress",
          params: ExportIdParams,
          response: { 200: z.array(BulkExportRun), ...errorResponses('NOT_FOUND') },
        },
      },
      (req) => service.runs(tenantOf(req), req.params.bulk_export_id),
    );
    app.get(
      `${EXPORTS_PREFIX}/:bulk_export_id/runs/:run_id`,
      {
        schema: {
          tags,
          summary: 'One run of a bulk export',
          params: RunIdParams,
          response: { 200: BulkExportRun, ...errorResponses('NOT_FOUND') },
        },
      },
      (req) => service.run(tenantOf(req), req.params.bulk_export_id, req.params.run_id),
    );
  };
}
