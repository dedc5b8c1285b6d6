// Every control-plane request acts as the workspace of its API key.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Principal, TenancyService } from '../tenancy/index.js';
import { AppError } from '../../common/errors/index.js';
import { isFeedbackTokenUse } from '../../traces/index.js';
import { TraceKeyVerifier } from './trace-keys.js';

const OPEN_PATHS = new Set(['/ok', '/openapi.json']);
/** The trace store's routes: the only ones a deployment's trace key may call. */
const TRACE_PREFIX = '/api/v1/';
const principals = new WeakMap<FastifyRequest, Principal>();

const header = (request: FastifyRequest, name: string) => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** The key of `Authorization: Bearer <key>` (the API's third security scheme), if sent. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
  return match?.[1];
}

export function registerAuth(
  app: FastifyInstance,
  tenancy: TenancyService,
  traceKeys?: TraceKeyVerifier,
): void {
  app.addHook('onRequest', async (request) => {
    const path = request.url.split('?')[0] ?? '';
    if (OPEN_PATHS.has(path) || path.startsWith('/docs') || request.method === 'OPTIONS') return;
    // A presigned feedback token is its own credential (the trace store checks it).
    if (isFeedbackTokenUse(request.method, path)) return;
    const key = header(request, 'x-api-key') ?? bearerToken(header(request, 'authorization'));
    const tenantId = header(request, 'x-tenant-id');
    if (traceKeys && TraceKeyVerifier.isTraceKey(key)) {
      if (!path.startsWith(TRACE_PREFIX))
        throw new AppError('FORBIDDEN', 'A deployment trace key only serves /api/v1');
      principals.set(request, await traceKeys.authenticate(key, tenantId));
      return;
    }
    principals.set(request, await tenancy.authenticate(key, tenantId));
  });
}

/** The caller of an authenticated route. */
export function principalOf(request: FastifyRequest): Principal {
  const principal = principals.get(request);
  if (!principal) throw new Error('route reached without authentication');
  return principal;
}
