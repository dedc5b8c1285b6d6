// HTTP routes for threads: parse, call the service, shape the reply. No SQL, no rules: reads of
// one thread pass on the caller's authorization filter (`req.authFilter`), which their own
// statement applies.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../../common/errors/index.js';
import {
  CheckpointParams,
  HistoryBody,
  HistoryQuery,
  PruneBody,
  StateCheckpointBody,
  StateQuery,
  StateUpdate,
  Thread,
  ThreadCount,
  ThreadCreate,
  ThreadGetQuery,
  ThreadIdParams,
  ThreadPatch,
  ThreadSearch,
} from './schemas.js';
import { threadBody, type ThreadService } from './service.js';
import { selectState } from './state-select.js';

const tags = ['Threads'];
const truthy = (v: string | undefined) => v === 'true' || v === '1';

export function threadRoutes(service: ThreadService): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/threads',
      {
        schema: {
          tags,
          body: ThreadCreate.optional(),
          response: { 200: Thread, ...errorResponses('BAD_REQUEST', 'NOT_FOUND', 'CONFLICT') },
        },
      },
      async (req) => threadBody(await service.create(req.body ?? {})),
    );

    app.post(
      '/threads/search',
      {
        schema: {
          tags,
          body: ThreadSearch.optional(),
          response: { 200: z.array(Thread.partial()) },
        },
      },
      async (req, reply) => {
        const body = req.body ?? {};
        const { rows, hasMore } = await service.search(body, req.authFilter);
        if (hasMore)
          void reply.header('X-Pagination-Next', String((body.offset ?? 0) + rows.length));
        return rows.map((r) => threadBody(r));
      },
    );

    app.post(
      '/threads/count',
      { schema: { tags, body: ThreadCount.optional(), response: { 200: z.number() } } },
      (req) => service.count(req.body ?? {}, req.authFilter),
    );

    app.post('/threads/prune', { schema: { tags, body: PruneBody } }, (req) =>
      service.prune(req.body.thread_ids, req.body.strategy),
    );

    app.get(
      '/threads/:thread_id',
      {
        schema: {
          tags,
          params: ThreadIdParams,
          querystring: ThreadGetQuery,
          response: { 200: Thread, ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) => {
        const include = [req.query.include ?? []].flat().flatMap((v) => v.split(','));
        return threadBody(
          await service.getRow(req.params.thread_id, req.authFilter),
          include.includes('ttl'),
        );
      },
    );

    app.patch(
      '/threads/:thread_id',
      {
        schema: {
          tags,
          params: ThreadIdParams,
          body: ThreadPatch.optional(),
          response: {
            200: Thread,
            204: z.undefined().describe('With `Prefer: return=minimal`'),
            ...errorResponses('NOT_FOUND'),
          },
        },
      },
      async (req, reply) => {
        const row = await service.patch(req.params.thread_id, req.body ?? {});
        if (req.headers.prefer === 'return=minimal') return reply.code(204).send();
        return threadBody(row);
      },
    );

    app.delete(
      '/threads/:thread_id',
      {
        schema: {
          tags,
          params: ThreadIdParams,
          response: { 204: z.undefined().describe('Deleted'), ...errorResponses('NOT_FOUND') },
        },
      },
      async (req, reply) => {
        await service.delete(req.params.thread_id);
        return reply.code(204).send();
      },
    );

    app.post(
      '/threads/:thread_id/copy',
      {
        schema: {
          tags,
          params: ThreadIdParams,
          response: { 200: Thread, ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) => threadBody(await service.copy(req.params.thread_id)),
    );

    app.get(
      '/threads/:thread_id/state',
      {
        schema: {
          tags,
          params: ThreadIdParams,
          querystring: StateQuery,
          response: { 200: z.unknown(), ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) =>
        selectState(
          await service.state(
            req.params.thread_id,
            { subgraphs: truthy(req.query.subgraphs) },
            req.authFilter,
          ),
          req.query.select,
        ),
    );

    app.post(
      '/threads/:thread_id/state',
      {
        schema: {
          tags,
          params: ThreadIdParams,
          body: StateUpdate,
          response: { 200: z.unknown(), ...errorResponses('BAD_REQUEST', 'NOT_FOUND', 'CONFLICT') },
        },
      },
      (req) => service.updateState(req.params.thread_id, req.body),
    );

    app.get(
      '/threads/:thread_id/state/:checkpoint_id',
      {
        schema: {
          tags,
          params: CheckpointParams,
          querystring: StateQuery,
          response: { 200: z.unknown(), ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) =>
        selectState(
          await service.state(
            req.params.thread_id,
            {
              subgraphs: truthy(req.query.subgraphs),
              checkpoint: { checkpoint_id: req.params.checkpoint_id },
            },
            req.authFilter,
          ),
          req.query.select,
        ),
    );

    app.post(
      '/threads/:thread_id/state/checkpoint',
      {
        schema: {
          tags,
          params: ThreadIdParams,
          body: StateCheckpointBody,
          response: { 200: z.unknown(), ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) =>
        selectState(
          await service.state(
            req.params.thread_id,
            { subgraphs: req.body.subgraphs ?? false, checkpoint: req.body.checkpoint },
            req.authFilter,
          ),
          req.body.select,
        ),
    );

    app.post(
      '/threads/:thread_id/history',
      {
        schema: {
          tags,
          params: ThreadIdParams,
          body: HistoryBody.optional(),
          response: { 200: z.unknown(), ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) =>
        (await service.history(req.params.thread_id, req.body ?? {}, req.authFilter)).map((state) =>
          selectState(state, req.body?.select),
        ),
    );

    app.get(
      '/threads/:thread_id/history',
      {
        schema: {
          tags,
          params: ThreadIdParams,
          querystring: HistoryQuery,
          response: { 200: z.unknown(), ...errorResponses('NOT_FOUND') },
        },
      },
      (req) =>
        service.history(
          req.params.thread_id,
          { limit: req.query.limit, before: req.query.before },
          req.authFilter,
        ),
    );
  };
}
