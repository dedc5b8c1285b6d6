// HTTP for A2A: the JSON-RPC endpoint per assistant (plain JSON answers, or SSE for the
// streaming methods) and the agent card. Protocol errors are JSON-RPC answers at HTTP 200.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { badRequest, errorResponses, notFound } from '../../common/errors/index.js';
import { agentCard } from './card.js';
import {
  RpcCode,
  RpcError,
  parseRequest,
  rpcFailure,
  rpcResult,
  type RpcId,
  type RpcRequest,
} from './jsonrpc.js';
import { MessageSendParams, TaskIdParams, TaskQueryParams, parseParams } from './schemas.js';
import type { A2aService } from './service.js';
import type { StreamResult } from './wire.js';

const tags = ['A2A'];
const HEARTBEAT_MS = 10_000;
const AssistantParams = z.object({ assistant_id: z.string().min(1) });
const CardQuery = z.object({ assistant_id: z.string().optional() });

const PUSH_METHODS = new Set([
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
]);

function asRpcError(err: unknown, request: FastifyRequest): RpcError {
  if (err instanceof RpcError) return err;
  request.log.error({ err }, 'A2A method failed');
  return new RpcError(RpcCode.INTERNAL_ERROR, 'Internal error');
}

/** Writes each result as one SSE `data:` line holding a whole JSON-RPC response. */
async function streamResults(
  request: FastifyRequest,
  reply: FastifyReply,
  id: RpcId,
  results: (signal: AbortSignal) => AsyncGenerator<StreamResult>,
): Promise<void> {
  const controller = new AbortController();
  // Errors before the first result (bad params, unknown task) are a plain JSON-RPC answer.
  let iterator: AsyncGenerator<StreamResult>;
  let first: IteratorResult<StreamResult>;
  try {
    iterator = results(controller.signal);
    first = await iterator.next();
  } catch (err) {
    return reply.send(rpcFailure(id, asRpcError(err, request)));
  }
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  const onClose = () => controller.abort();
  res.once('close', onClose);
  const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
  const write = (body: unknown) => res.write(`data: ${JSON.stringify(body)}\n\n`);
  try {
    if (!first.done) write(rpcResult(id, first.value));
    if (!first.done) for await (const result of iterator) write(rpcResult(id, result));
  } catch (err) {
    if (!controller.signal.aborted) write(rpcFailure(id, asRpcError(err, request)));
  } finally {
    clearInterval(heartbeat);
    res.off('close', onClose);
    res.end();
  }
}

export function a2aRoutes(
  service: A2aService,
  version: string,
  prefix: string,
): FastifyPluginAsyncZod {
  const endpointUrl = (request: FastifyRequest, assistantId: string) =>
    `${request.protocol}://${request.host}${prefix}/a2a/${encodeURIComponent(assistantId)}`;

  const card = async (request: FastifyRequest, assistantId: string | undefined) => {
    if (!assistantId) throw badRequest('Missing required query parameter: assistant_id');
    const assistant = await service.assistant(assistantId).catch((err: unknown) => {
      throw err instanceof RpcError ? notFound(`Assistant not found: ${assistantId}`) : err;
    });
    return agentCard(assistant, endpointUrl(request, assistantId), version);
  };

  const call = async (assistantId: string, request: RpcRequest): Promise<unknown> => {
    switch (request.method) {
      case 'message/send':
        return service.send(assistantId, parseParams(MessageSendParams, request.params));
      case 'tasks/get':
        return service.get(assistantId, parseParams(TaskQueryParams, request.params));
      case 'tasks/cancel':
        return service.cancel(assistantId, parseParams(TaskIdParams, request.params));
      default:
        if (PUSH_METHODS.has(request.method))
          throw new RpcError(
            RpcCode.PUSH_NOTIFICATION_NOT_SUPPORTED,
            'Push notifications are not supported by this agent',
          );
        throw new RpcError(RpcCode.METHOD_NOT_FOUND, `Method not found: ${request.method}`);
    }
  };

  return async (app) => {
    // JSON-RPC wants its own parse error, so this scope takes the body as text.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

    app.post(
      '/a2a/:assistant_id',
      {
        schema: {
          tags,
          params: AssistantParams,
          summary: 'A2A JSON-RPC 2.0 endpoint of an assistant',
          description:
            'Methods: message/send, message/stream (SSE), tasks/get, tasks/cancel, tasks/resubscribe (SSE).',
        },
      },
      async (req, reply) => {
        const parsed = parseRequest(typeof req.body === 'string' ? req.body : '');
        if (!parsed.ok) return rpcFailure(parsed.id, parsed.error);
        const { request } = parsed;
        const assistantId = req.params.assistant_id;
        if (request.method === 'message/stream' || request.method === 'tasks/resubscribe') {
          return streamResults(req, reply, request.id, (signal) => {
            if (request.method === 'message/stream')
              return service.stream(
                assistantId,
                parseParams(MessageSendParams, request.params),
                signal,
              );
            return service.resubscribe(
              assistantId,
              parseParams(TaskIdParams, request.params),
              signal,
            );
          });
        }
        try {
          return rpcResult(request.id, await call(assistantId, request));
        } catch (err) {
          return rpcFailure(request.id, asRpcError(err, req));
        }
      },
    );

    app.get(
      '/.well-known/agent-card.json',
      {
        schema: {
          tags,
          querystring: CardQuery,
          summary: 'Agent card of an assistant',
          response: { 200: z.unknown(), ...errorResponses('BAD_REQUEST', 'NOT_FOUND') },
        },
      },
      async (req) => card(req, req.query.assistant_id),
    );

    // The card next to its endpoint, so a client given only the endpoint URL finds it.
    app.get(
      '/a2a/:assistant_id/.well-known/agent-card.json',
      {
        schema: {
          tags,
          params: AssistantParams,
          summary: 'Agent card of an assistant',
          response: { 200: z.unknown(), ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) => card(req, req.params.assistant_id),
    );
  };
}
