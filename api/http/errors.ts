// Errors of the control-plane API as FastAPI writes them: `{"detail": "..."}`, and 422 with
// `{"detail": [{loc, msg, type}]}`.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { DATABASE_UNAVAILABLE, isUnavailable } from '../../common/db/index.js';
import { AppError, validationIssues, type ValidationEntry } from '../../common/errors/index.js';
import { KubeApiError } from '../kube/index.js';

/** FastAPI's wording for a missing field, so clients written against it read the same text. */
function describe(entry: ValidationEntry): { msg: string; type: string } {
  const message = entry.message ?? 'Invalid value';
  if (entry.keyword === 'invalid_type' && /received undefined$/.test(message))
    return { msg: 'Field required', type: 'missing' };
  return { msg: message, type: entry.keyword || 'value_error' };
}

/**
 * A Kubernetes 403: the api's own service account lacks a permission (typically a namespace the
 * chart gave it no Role in). Not an outage: the same request keeps failing until RBAC changes.
 */
export function forbiddenDetail(error: KubeApiError): string {
  const action = error.action;
  if (!action)
    return `The control plane's Kubernetes service account was refused: ${error.message}`;
  const where = action.namespace ? `in namespace '${action.namespace}'` : 'cluster-wide';
  return (
    `The control plane's Kubernetes service account may not ${action.verb} ${action.resource} ${where} ` +
    `(missing RBAC permission: ${action.verb} ${action.resource}${action.namespace ? ` in ${action.namespace}` : ''}). ` +
    `Use a namespace the control plane is installed for (the chart's watchNamespaces) or grant that permission.`
  );
}

/** Failures of the Kubernetes API become answers a client can act on. */
function kubeReply(error: KubeApiError, request: FastifyRequest, reply: FastifyReply) {
  if (error.status === 409) return reply.code(409).send({ detail: error.message });
  if (error.status === 403) {
    request.log.warn({ action: error.action, message: error.message }, 'Kubernetes RBAC refused');
    return reply.code(403).send({ detail: forbiddenDetail(error) });
  }
  if (error.status === 400 || error.status === 422)
    return reply.code(400).send({ detail: error.message });
  request.log.error(
    { err: error, status: error.status, reason: error.reason },
    'Kubernetes API request failed',
  );
  return reply.code(503).send({ detail: 'The Kubernetes API is unavailable' });
}

export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof AppError) return reply.code(error.status).send({ detail: error.detail });
  if (error instanceof KubeApiError) return kubeReply(error, request, reply);
  if (hasZodFastifySchemaValidationErrors(error))
    return reply.code(422).send({ detail: validationIssues(error, describe) });
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError)
    return reply
      .code(422)
      .send({ detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] });
  // A restart or failover of PostgreSQL: clients (and the LangSmith SDKs sending traces) retry.
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

export function notFoundHandler(_request: FastifyRequest, reply: FastifyReply) {
  return reply.code(404).send({ detail: 'Not Found' });
}
