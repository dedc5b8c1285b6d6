// HTTP routes for runs, thread-scoped and stateless. Parse, call the service, shape the reply.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../../common/errors/index.js';
import { MAX_INT4 } from '../../common/limits/index.js';
import type { RunEventLog } from './event-log.js';
import {
  BulkCancel,
  CancelQuery,
  JoinQuery,
  JoinStreamQuery,
  RunCreate,
  RunListQuery,
  RunBatch,
  RunParams,
  ThreadRunParams,
  ThreadStreamQuery,
  truthy,
  type RunCreateBody,
  type RunField,
} from './schemas.js';
import { runBody, type RunService } from './service.js';
import { streamRunEvents, writeSse } from './sse.js';
import type { RunRow } from './store.js';
import { parseThreadEventId } from './thread-stream.js';

const tags = ['Runs'];
/** A run record, or the run's output: JSON, not described further here. */
const json = z.unknown();
const events = {
  description: 'Server-sent events',
  content: { 'text/event-stream': { schema: z.string() } },
};
const none = (description: string) => z.undefined().describe(description);
const created = { 200: json, ...errorResponses('NOT_FOUND', 'CONFLICT', 'BAD_REQUEST') };
const createdStreaming = { 200: events, ...errorResponses('NOT_FOUND', 'CONFLICT', 'BAD_REQUEST') };
const stateless = { 200: json, ...errorResponses('NOT_FOUND', 'BAD_REQUEST') };
const statelessStreaming = { 200: events, ...errorResponses('NOT_FOUND', 'BAD_REQUEST') };
const found = { 200: json, ...errorResponses('NOT_FOUND') };
const streamFound = { 200: events, ...errorResponses('NOT_FOUND') };
// A wait for a run's end answers 503 when the server stops first (the run goes on elsewhere).
const waited = { ...created, ...errorResponses('UNAVAILABLE') };
const statelessWaited = { ...stateless, ...errorResponses('UNAVAILABLE') };
const joined = { ...found, ...errorResponses('UNAVAILABLE') };
/** The caller of wait and stream follows the run it creates, so it may start on this process. */
const HERE = { startHere: true };
/** The caller of wait sees only the run's end. */
const HERE_END_ONLY = { startHere: true, endOnly: true };

function runPath(run: RunRow, stateless: boolean) {
  return stateless ? `/runs/${run.run_id}` : `/threads/${run.thread_id}/runs/${run.run_id}`;
}

/** The run with only the fields `select` names, in the order the run has them. */
function pickFields(run: ReturnType<typeof runBody>, select: readonly RunField[]) {
  return Object.fromEntries(
    Object.entries(run).filter(([key]) => select.includes(key as RunField)),
  );
}

function lastEventId(request: FastifyRequest): number {
  const header = request.headers['last-event-id'];
  const value = Number(Array.isArray(header) ? header[0] : header);
  // Event numbers are PostgreSQL integers: an id past the largest has nothing after it either.
  return Number.isInteger(value) && value >= 0 ? Math.min(value, MAX_INT4) : -1;
}

export function runRoutes(service: RunService, events: RunEventLog): FastifyPluginAsyncZod {
  const stream = (
    request: FastifyRequest,
    reply: FastifyReply,
    run: RunRow,
    body: RunCreateBody | undefined,
    stateless: boolean,
    created = false,
    modes?: readonly string[],
  ) =>
    streamRunEvents(request, reply, events, {
      runId: run.run_id,
      afterSeq: lastEventId(request),
      created,
      modes,
      headers: {
        'Content-Location': runPath(run, stateless),
        Location: `${runPath(run, stateless)}/stream`,
      },
      ...(body?.on_disconnect === 'cancel'
        ? {
            onDisconnect: () =>
              void service.cancel(run.thread_id, [run.run_id], 'interrupt').catch(() => undefined),
          }
        : {}),
    });

  const wait = async (reply: FastifyReply, run: RunRow, stateless: boolean, created = false) => {
    void reply.header('Content-Location', runPath(run, stateless));
    void reply.header('Location', `${runPath(run, stateless)}/join`);
    return service.result(run, undefined, created);
  };

  return async (app) => {
    app.post(
      '/threads/:thread_id/runs',
      { schema: { tags, params: ThreadRunParams, body: RunCreate, response: created } },
      async (req, reply) => {
        const run = await service.create(req.params.thread_id, req.body, req.headers, {
          threadFilter: req.authFilter,
        });
        void reply.header('Content-Location', runPath(run, false));
        return runBody(run);
      },
    );

    app.post(
      '/threads/:thread_id/runs/wait',
      { schema: { tags, params: ThreadRunParams, body: RunCreate, response: waited } },
      async (req, reply) =>
        wait(
          reply,
          await service.create(req.params.thread_id, req.body, req.headers, {
            ...HERE_END_ONLY,
            threadFilter: req.authFilter,
          }),
          false,
          true,
        ),
    );

    app.post(
      '/threads/:thread_id/runs/stream',
      { schema: { tags, params: ThreadRunParams, body: RunCreate, response: createdStreaming } },
      async (req, reply) =>
        stream(
          req,
          reply,
          await service.create(req.params.thread_id, req.body, req.headers, {
            ...HERE,
            threadFilter: req.authFilter,
          }),
          req.body,
          false,
          true,
        ),
    );

    app.get(
      '/threads/:thread_id/runs',
      { schema: { tags, params: ThreadRunParams, querystring: RunListQuery, response: found } },
      async (req) => {
        const runs = (await service.list(req.params.thread_id, req.query)).map(runBody);
        const select = req.query.select;
        return select?.length ? runs.map((run) => pickFields(run, select)) : runs;
      },
    );

    app.get(
      '/threads/:thread_id/runs/:run_id',
      { schema: { tags, params: RunParams, response: found } },
      async (req) => runBody(await service.get(req.params.thread_id, req.params.run_id)),
    );

    app.delete(
      '/threads/:thread_id/runs/:run_id',
      {
        schema: {
          tags,
          params: RunParams,
          response: { 204: none('Deleted'), ...errorResponses('NOT_FOUND', 'CONFLICT') },
        },
      },
      async (req, reply) => {
        await service.delete(req.params.thread_id, req.params.run_id);
        return reply.code(204).send();
      },
    );

    app.get(
      '/threads/:thread_id/runs/:run_id/join',
      { schema: { tags, params: RunParams, querystring: JoinQuery, response: joined } },
      async (req, reply) =>
        wait(reply, await service.get(req.params.thread_id, req.params.run_id), false),
    );

    app.get(
      '/threads/:thread_id/runs/:run_id/stream',
      {
        schema: { tags, params: RunParams, querystring: JoinStreamQuery, response: streamFound },
      },
      async (req, reply) => {
        const run = await service.get(req.params.thread_id, req.params.run_id);
        return stream(
          req,
          reply,
          run,
          truthy(req.query.cancel_on_disconnect)
            ? ({ on_disconnect: 'cancel' } as RunCreateBody)
            : undefined,
          false,
          false,
          req.query.stream_mode,
        );
      },
    );

    app.get(
      '/threads/:thread_id/stream',
      {
        schema: {
          tags,
          params: ThreadRunParams,
          querystring: ThreadStreamQuery,
          response: streamFound,
        },
      },
      async (req, reply) => {
        const header = req.headers['last-event-id'];
        const source = await service.streamThread(
          req.params.thread_id,
          req.query.stream_mode ?? req.query.stream_modes ?? ['run_modes'],
          parseThreadEventId(Array.isArray(header) ? header[0] : header),
        );
        return writeSse(req, reply, source, {
          headers: { Location: `/threads/${req.params.thread_id}/stream` },
        });
      },
    );

    app.post(
      '/threads/:thread_id/runs/:run_id/cancel',
      {
        schema: {
          tags,
          params: RunParams,
          querystring: CancelQuery,
          response: {
            202: none('Cancellation requested'),
            204: none('Cancelled, with `wait`'),
            ...errorResponses('NOT_FOUND', 'UNAVAILABLE'),
          },
        },
      },
      async (req, reply) => {
        const [run] = await service.cancel(
          req.params.thread_id,
          [req.params.run_id],
          req.query.action ?? 'interrupt',
        );
        if (truthy(req.query.wait) && run) {
          await service.result(run);
          return reply.code(204).send();
        }
        return reply.code(202).send();
      },
    );

    app.post(
      '/runs',
      { schema: { tags, body: RunCreate, response: stateless } },
      async (req, reply) => {
        const run = await service.create(undefined, req.body, req.headers);
        void reply.header('Content-Location', runPath(run, true));
        return runBody(run);
      },
    );

    app.post(
      '/runs/batch',
      { schema: { tags, body: RunBatch, response: stateless } },
      async (req) => {
        return (await service.createBatch(req.body, req.headers)).map(runBody);
      },
    );

    app.post(
      '/runs/cancel',
      {
        schema: {
          tags,
          body: BulkCancel,
          querystring: CancelQuery.pick({ action: true }),
          response: { 204: none('Cancellation requested'), ...errorResponses('NOT_FOUND') },
        },
      },
      async (req, reply) => {
        await service.cancelMany(req.body, req.query.action ?? 'interrupt');
        return reply.code(204).send();
      },
    );

    app.post(
      '/runs/wait',
      { schema: { tags, body: RunCreate, response: statelessWaited } },
      async (req, reply) =>
        wait(
          reply,
          await service.create(undefined, req.body, req.headers, HERE_END_ONLY),
          true,
          true,
        ),
    );

    app.post(
      '/runs/stream',
      { schema: { tags, body: RunCreate, response: statelessStreaming } },
      async (req, reply) =>
        stream(
          req,
          reply,
          await service.create(undefined, req.body, req.headers, HERE),
          req.body,
          true,
          true,
        ),
    );

    app.get(
      '/runs/:run_id/stream',
      { schema: { tags, params: z.object({ run_id: z.uuid() }), response: streamFound } },
      async (req, reply) =>
        streamRunEvents(req, reply, events, {
          runId: req.params.run_id.toLowerCase(),
          afterSeq: lastEventId(req),
          headers: {},
        }),
    );
  };
}
