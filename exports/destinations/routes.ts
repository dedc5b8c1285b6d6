// HTTP of /api/v1/bulk-exports/destinations. The host app authenticates; `callerOf` names the
// workspace and permissions of the request's API key. All successes are 200, as LangSmith's.
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../../common/errors/index.js';
import {
  Destination,
  DestinationCreateRequest,
  DestinationIdParams,
  DestinationPatchRequest,
} from './schemas.js';
import type { Caller, DestinationService } from './service.js';

export const DESTINATIONS_PATH = '/api/v1/bulk-exports/destinations';

export interface DestinationRouteOptions {
  callerOf: (request: FastifyRequest) => Caller;
}

const tags = ['Bulk export destinations'];
const auth = errorResponses('UNAUTHORIZED', 'FORBIDDEN', 'VALIDATION');

export function destinationRoutes(
  service: DestinationService,
  { callerOf }: DestinationRouteOptions,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      DESTINATIONS_PATH,
      { schema: { tags, response: { 200: z.array(Destination), ...auth } } },
      (req) => service.list(callerOf(req)),
    );
    app.post(
      DESTINATIONS_PATH,
      {
        schema: {
          tags,
          body: DestinationCreateRequest,
          // 400: the test write failed (Access denied, Bucket is not valid, Key ID you provided
          // does not exist, Invalid endpoint); 503: the storage or the key ring is unavailable.
          response: {
            200: Destination,
            ...auth,
            ...errorResponses('BAD_REQUEST', 'UNAVAILABLE'),
          },
        },
      },
      (req) => service.create(callerOf(req), req.body),
    );
    app.get(
      `${DESTINATIONS_PATH}/:destination_id`,
      {
        schema: {
          tags,
          params: DestinationIdParams,
          response: { 200: Destination, ...auth, ...errorResponses('NOT_FOUND') },
        },
      },
      (req) => service.get(callerOf(req), req.params.destination_id),
    );
    app.patch(
      `${DESTINATIONS_PATH}/:destination_id`,
      {
        schema: {
          tags,
          params: DestinationIdParams,
          body: DestinationPatchRequest,
          // 403 also when the key lacks WORKSPACES_MANAGE.
          response: {
            200: Destination,
            ...auth,
            ...errorResponses('BAD_REQUEST', 'NOT_FOUND', 'UNAVAILABLE'),
          },
        },
      },
      (req) =>
        service.replaceCredentials(callerOf(req), req.params.destination_id, req.body.credentials),
    );
  };
}
