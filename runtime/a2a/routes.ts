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
  notificationRefused,
  parseRequest,
  rpcFailure,
  rpcResult,
  type RpcId,
} from './jsonrpc.js';
import { MessageSendParams, TaskIdParams, TaskQueryParams, parseParams } from './schemas.js';
import type { A2aService } from './service.js';
import type { StreamResult } from './wire.js';
import type { RunAuthExtras } from '../auth/index.js';
import { hookHeaders } from '../runs/index.js';

const tags = ['A2A'];
const HEARTBEAT_MS = 10_000;
const AssistantParams = z.object({ assistant_id: z.string().min(1) });
const CardQuery = z.object({ assistant_id: z.string().optional() });

/** Methods answered over SSE, their errors included (the official client reads nothing else). */
const STREAM_METHODS = new Set(['message/stream', 'tasks/resubscribe']);

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

type Results = (signal: AbortSignal) => AsyncGenerator<StreamResult>;

/** A method call checked and bound to its params, not yet started. */
type Call = { stream: false; run: () => Promise<unknown> } | { stream: true; run: Results };

/**
 * Writes each result as one SSE `data:` line holding a whole JSON-RPC response. An error before
 * the first result (unknown task, a task that takes no input) is the stream's one event, at
 * HTTP 200 like every JSON-RPC error: the official client only reads SSE from these methods.
 */
async function streamResults(
  request: FastifyRequest,
  reply: FastifyReply,
  id: RpcId,
  results: Results,
): Promise<void> {
  const controller = new AbortController();
  let head:
    { iterator: AsyncGenerator<StreamResult>; first: IteratorResult<StreamResult> } | RpcError;
  try {
    const iterator = results(controller.signal);
    head = { iterator, first: await iterator.next() };
  } catch (err) {
    head = asRpcError(err, request);
  }
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    ...hookHeaders(reply),
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
    if (head instanceof RpcError) write(rpcFailure(id, head));
    else if (!head.first.done) {
      write(rpcResult(id, head.first.value));
      for await (const result of head.iterator) write(rpcResult(id, result));
    }
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

  const card = async (request: FastifyRequest, requested: string | undefined) => {
    let assistantId = requested;
    if (!assistantId) {
      const fallback = service.defaultAssistant;
      if ('missing' in fallback) throw badRequest(fallback.missing);
      assistantId = fallback.assistantId;
    }
    const assistant = await service.assistant(assistantId).catch((err: unknown) => {
      throw err instanceof RpcError ? notFound(`Assistant not found: ${assistantId}`) : err;
    });
    return agentCard(assistant, endpointUrl(request, assistantId), version);
  };

  /** Checks the method (-32601, -32003) and its params (-32602); nothing runs yet. */
  const bind = (
    assistantId: string,
    method: string,
    params: unknown,
    auth: RunAuthExtras | undefined,
  ): Call => {
    switch (method) {
      case 'message/send': {
        const checked = parseParams(MessageSendParams, params);
        return { stream: false, run: () => service.send(assistantId, checked, auth) };
      }
      case 'message/stream': {
        const checked = parseParams(MessageSendParams, params);
        return {
          stream: true,
          run: (signal) => service.stream(assistantId, checked, signal, auth),
        };
      }
      case 'tasks/get': {
        const checked = parseParams(TaskQueryParams, params);
        return { stream: false, run: () => service.get(assistantId, checked) };
      }
      case 'tasks/cancel': {
        const checked = parseParams(TaskIdParams, params);
        return { stream: false, run: () => service.cancel(assistantId, checked) };
      }
      case 'tasks/resubscribe': {
        const checked = parseParams(TaskIdParams, params);
        return {
          stream: true,
          run: (signal) => service.resubscribe(assistantId, checked, signal),
        };
      }
      default:
        if (PUSH_METHODS.has(method))
          throw new RpcError(
            RpcCode.PUSH_NOTIFICATION_NOT_SUPPORTED,
            'Push notifications are not supported by this agent',
          );
        throw new RpcError(RpcCode.METHOD_NOT_FOUND, `Method not found: ${method}`);
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
          // 404: a task or context the caller's auth filter hides (`auth.path`).
          response: { 200: z.unknown(), ...errorResponses('NOT_FOUND') },
        },
      },
      async (req, reply) => {
        const parsed = parseRequest(typeof req.body === 'string' ? req.body : '');
        const method = parsed.ok ? parsed.request.method : parsed.method;
        const id: RpcId = parsed.ok ? (parsed.request.id ?? null) : parsed.id;
        let call: Call;
        try {
          if (!parsed.ok) throw parsed.error;
          call = bind(
            req.params.assistant_id,
            parsed.request.method,
            parsed.request.params,
            req.authRun,
          );
          // Refused only now, so that a bad method or bad params say so even without an id.
          if (parsed.request.id === undefined) throw notificationRefused();
        } catch (err) {
          const error = asRpcError(err, req);
          if (method !== undefined && STREAM_METHODS.has(method))
            return streamResults(req, reply, id, () => {
              throw error;
            });
          return rpcFailure(id, error);
        }
        if (call.stream) return streamResults(req, reply, id, call.run);
        try {
          return rpcResult(id, await call.run());
        } catch (err) {
          return rpcFailure(id, asRpcError(err, req));
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
          description:
            'Without assistant_id: the default assistant (GRAPHDOCK_A2A_DEFAULT_ASSISTANT, else the only graph).',
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
