// HTTP routes of the thread protocol: commands, the SSE event stream, and its WebSocket.
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { WebSocket } from 'ws';
import type {} from '@fastify/websocket';
import { z } from 'zod';
import { badRequest, errorResponses } from '../../common/errors/index.js';
import { writeSse, type SseFrame } from '../runs/index.js';
import { ProtocolError, errorEnvelope, invalidArgument } from './errors.js';
import { matches, type EventFilter } from './filter.js';
import { CommandEnvelope, CommandReply, StreamBody, ThreadParams } from './schemas.js';
import type { ProtocolService } from './service.js';
import { openSession } from './socket.js';
import { encodeEvent, type EncodedEvent } from './thread-events.js';

const tags = ['Thread protocol'];
const events = {
  description: 'Server-sent events: `event` is the method, `data` the event, `id` its event_id',
  content: { 'text/event-stream': { schema: z.string() } },
};

async function* framesOf(
  source: AsyncIterable<EncodedEvent[]>,
  filter: EventFilter,
): AsyncGenerator<SseFrame[]> {
  for await (const batch of source) {
    const frames: SseFrame[] = [];
    for (const { event, paramsJson } of batch)
      if (matches(event, filter))
        frames.push({
          id: event.event_id,
          event: event.method,
          data: event,
          json: encodeEvent(event, paramsJson),
        });
    if (frames.length) yield frames;
  }
}

export function protocolRoutes(service: ProtocolService): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/threads/:thread_id/commands',
      {
        schema: {
          tags,
          summary: 'Send a thread protocol command',
          params: ThreadParams,
          body: CommandEnvelope,
          response: {
            200: CommandReply,
            400: CommandReply,
            ...errorResponses('NOT_FOUND', 'CONFLICT'),
          },
        },
        attachValidation: true,
      },
      async (req, reply) => {
        if (req.validationError) {
          // A malformed envelope: 400 with an error envelope (id unknown), as the Python server.
          return reply
            .code(400)
            .send(
              errorEnvelope(
                null,
                invalidArgument(`malformed command: ${req.validationError.message}`),
              ),
            );
        }
        try {
          return await service.command(req.params.thread_id, req.body, req.headers);
        } catch (err) {
          if (!(err instanceof ProtocolError)) throw err;
          return { ...errorEnvelope(req.body.id, err), meta: { thread_id: req.params.thread_id } };
        }
      },
    );

    app.post(
      '/threads/:thread_id/stream/events',
      {
        schema: {
          tags,
          summary: 'Stream the thread protocol events (SSE)',
          params: ThreadParams,
          body: StreamBody,
          response: { 200: events, ...errorResponses('BAD_REQUEST', 'NOT_FOUND') },
        },
        attachValidation: true,
      },
      async (req, reply) => {
        if (req.validationError) throw badRequest(req.validationError.message);
        const { thread_id } = req.params;
        const body = req.body;
        const start = service.replayCursor(body.since);
        return writeSse(
          req,
          reply,
          (signal) => framesOf(service.events(thread_id, start, signal), body),
          { headers: {} },
        );
      },
    );

    app.route({
      method: 'GET',
      url: '/threads/:thread_id/stream/events',
      schema: {
        tags,
        summary: 'Thread protocol over a WebSocket (commands in, replies and events out)',
        params: ThreadParams,
        response: {
          101: z.undefined().describe('Switching to the WebSocket protocol'),
          426: z.object({ detail: z.string() }).describe('Not a WebSocket upgrade'),
          ...errorResponses('NOT_FOUND'),
        },
      },
      wsHandler: (socket: WebSocket, req: FastifyRequest) => {
        const { thread_id } = req.params as z.infer<typeof ThreadParams>;
        openSession(service, thread_id, socket, req.raw.socket, req.headers, req.log);
      },
      handler: async (_req, reply) =>
        reply
          .code(426)
          .header('Upgrade', 'websocket')
          .send({ detail: 'Upgrade Required: this stream is served over a WebSocket.' }),
    });
  };
}
