// HTTP routes for crons. Parse, call the service, shape the reply.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../../common/errors/index.js';
import {
  Cron,
  CronCount,
  CronCreate,
  CronParams,
  CronPatch,
  CronSearch,
  ThreadCronParams,
} from './schemas.js';
import { cronBody, type CronService } from './service.js';

const tags = ['Crons'];

export function cronRoutes(service: CronService): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/runs/crons',
      {
        schema: { tags, body: CronCreate, response: { 200: Cron, ...errorResponses('NOT_FOUND') } },
      },
      async (req) => cronBody(await service.create(undefined, req.body)),
    );

    app.post(
      '/threads/:thread_id/runs/crons',
      {
        schema: {
          tags,
          params: ThreadCronParams,
          body: CronCreate,
          response: { 200: Cron, ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) => cronBody(await service.create(req.params.thread_id, req.body)),
    );

    app.post(
      '/runs/crons/search',
      { schema: { tags, body: CronSearch.optional(), response: { 200: z.array(Cron.partial()) } } },
      async (req, reply) => {
        const body = req.body ?? {};
        const { rows, total } = await service.search(body, req.authFilter);
        const next = (body.offset ?? 0) + rows.length;
        void reply.header('X-Pagination-Total', String(total));
        if (next < total) void reply.header('X-Pagination-Next', String(next));
        return rows.map((r) => cronBody(r, body.select?.includes('now') ?? false));
      },
    );

    app.post(
      '/runs/crons/count',
      { schema: { tags, body: CronCount.optional(), response: { 200: z.number() } } },
      (req) => service.count(req.body ?? {}, req.authFilter),
    );

    app.get(
      '/runs/crons/:cron_id',
      {
        schema: {
          tags,
          params: CronParams,
          response: { 200: Cron, ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) => cronBody(await service.get(req.params.cron_id)),
    );

    app.patch(
      '/runs/crons/:cron_id',
      {
        schema: {
          tags,
          params: CronParams,
          body: CronPatch.optional(),
          response: { 200: Cron, ...errorResponses('BAD_REQUEST', 'NOT_FOUND') },
        },
      },
      async (req) => cronBody(await service.patch(req.params.cron_id, req.body ?? {})),
    );

    app.delete(
      '/runs/crons/:cron_id',
      {
        schema: {
          tags,
          params: CronParams,
          response: { 204: z.undefined().describe('Deleted'), ...errorResponses('NOT_FOUND') },
        },
      },
      async (req, reply) => {
        await service.delete(req.params.cron_id);
        return reply.code(204).send();
      },
    );
  };
}
