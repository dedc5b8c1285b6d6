// The one place where errors become HTTP responses: `{"detail": ...}` like the official server.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { DATABASE_UNAVAILABLE, isUnavailable } from '../../common/db/index.js';
import { AppError, validationIssues } from '../../common/errors/index.js';

export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof AppError) {
    if (error.headers) void reply.headers(error.headers);
    return reply.code(error.status).send({ detail: error.detail });
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    return reply.code(422).send({ detail: validationIssues(error) });
  }
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError) {
    return reply
      .code(422)
      .send({ detail: [{ loc: ['body'], msg: 'Invalid JSON body', type: 'json_invalid' }] });
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return reply.code(413).send({ detail: 'Request body is too large' });
  }
  // A restart or failover of PostgreSQL: the SDKs retry a 503, and Retry-After says when.
  if (isUnavailable(error)) {
    request.log.warn({ err: error }, 'request refused: database unavailable');
    return reply.code(503).header('retry-after', '1').send({ detail: DATABASE_UNAVAILABLE });
  }
  const status =
    error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  if (status >= 500) {
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send({ detail: 'Internal server error' });
  }
  return reply.code(status).send({ detail: error.message });
}

/**
 * The router's own refusals, before any route: a path that does not decode (400) or a path
 * parameter over the length limit (414). Same body as every other error.
 */
export function frameworkErrorHandler(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  void reply.code(error.statusCode ?? 400).send({ detail: error.message });
}

/** The methods a path may be served with; OPTIONS is left out, as CORS answers it for every path. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split('?')[0] ?? '';
  // A path that exists with other methods is 405 with the methods it has, as HTTP asks.
  const allowed = METHODS.filter((method) => request.server.findRoute({ method, url: path }));
  if (allowed.length > 0) {
    return reply
      .code(405)
      .header('Allow', allowed.join(', '))
      .send({ detail: 'Method Not Allowed' });
  }
  return reply.code(404).send({ detail: `Not found: ${request.method} ${path}` });
}
