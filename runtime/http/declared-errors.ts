// Declares on every route the error answers that come from the HTTP layer rather than from the
// route itself, so the OpenAPI document lists them: 422 for input that breaks the route's schema
// or a body that is not JSON, 413 for a body over the limit, 400 and 414 for a path the router
// cannot decode or whose parameter is over its length limit, 401 without a valid API key (when
// keys are configured) or refused by the project's `authenticate`, 403 refused by its `on`
// handlers (`auth.path`), 503 when the control plane that checks keys cannot answer for a key;
// none of these three on the open paths (/ok, UI assets).
// What a route raises itself (404, 409, ...) it declares in its own schema.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ErrorBody } from '../../common/errors/index.js';
import { isUiAsset } from '../ui/index.js';
import { OPEN_PATHS } from './auth.js';

/** Methods whose requests fastify reads a body for. */
const WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function declareHttpErrors(app: FastifyInstance, mountPrefix: string): void {
  const open = new Set([...OPEN_PATHS].map((p) => `${mountPrefix}${p}`));
  app.addHook('onRoute', (route) => {
    const schema = route.schema ?? {};
    if (schema.hide) return;
    const methods = [route.method].flat();
    const readsBody = methods.some((m) => WITH_BODY.has(m));
    const validates = Boolean(schema.body ?? schema.querystring ?? schema.params ?? schema.headers);
    const own = (schema.response ?? {}) as Record<string, unknown>;
    const errors: Record<number, z.ZodType> = {};
    // Without a declared success, the document would list only errors: any JSON, undescribed.
    if (!Object.keys(own).some((status) => status.startsWith('2'))) errors[200] = z.unknown();
    const unauthenticated =
      open.has(route.url) || methods.every((m) => isUiAsset(m, route.url, mountPrefix));
    if (!unauthenticated) {
      errors[401] = ErrorBody;
      errors[503] = ErrorBody;
      errors[403] = ErrorBody;
    }
    // The router turns down a path that does not decode, or a path parameter over its length
    // limit, before the route sees it.
    if (route.url.includes('/:')) {
      errors[400] = ErrorBody;
      errors[414] = ErrorBody;
    }
    if (readsBody) errors[413] = ErrorBody;
    if (validates || readsBody) errors[422] = ErrorBody;
    // The route's own declarations win.
    route.schema = { ...schema, response: { ...errors, ...own } };
  });
}
