// Errors of the control-plane API as FastAPI writes them: `{"detail": "..."}`, and 422 with
// `{"detail": [{loc, msg, type}]}`.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, type ValidationIssue } from '../../common/errors/index.js';

const LOCATION: Record<string, string> = {
  body: 'body',
  params: 'path',
  querystring: 'query',
  headers: 'header',
};

interface ZodIssueLike {
  code?: string;
  input?: unknown;
  path?: PropertyKey[];
  message?: string;
}

/** FastAPI's wording for the common cases, so clients written against it read the same text. */
function describe(issue: ZodIssueLike, fallback: string): { msg: string; type: string } {
  if (issue.code === 'invalid_type' && issue.input === undefined)
    return { msg: 'Field required', type: 'missing' };
  if (issue.code === 'unrecognized_keys') return { msg: fallback, type: 'extra_forbidden' };
  return { msg: fallback, type: issue.code ?? 'value_error' };
}

function validationIssues(
  error: FastifyError & {
    validation: { instancePath: string; message?: string; params?: { issue?: ZodIssueLike } }[];
  },
): ValidationIssue[] {
  const where = LOCATION[error.validationContext ?? 'body'] ?? 'body';
  return error.validation.map((v) => {
    const path = v.instancePath
      .split('/')
      .filter(Boolean)
      .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
    return {
      loc: [where, ...path],
      ...describe(v.params?.issue ?? {}, v.message ?? 'Invalid value'),
    };
  });
}

export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof AppError) return reply.code(error.status).send({ detail: error.detail });
  if (hasZodFastifySchemaValidationErrors(error))
    return reply.code(422).send({ detail: validationIssues(error) });
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError)
    return reply
      .code(422)
      .send({ detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] });
  const status =
    error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  if (status >= 500) {
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send({ detail: 'Internal server error' });
  }
  return reply.code(status).send({ detail: error.message });
}

export function notFoundHandler(_request: FastifyRequest, reply: FastifyReply) {
  return reply.code(404).send({ detail: 'Not Found' });
}
