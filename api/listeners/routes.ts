// HTTP routes of /v2/listeners.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { principalOf } from '../auth/index.js';
import { Detail, page, Pagination, ValidationErrorBody } from '../shared/index.js';
import {
  Listener,
  ListenerCreateRequest,
  ListenerIdParams,
  ListenerPatchRequest,
} from './schemas.js';
import type { ListenerService } from './service.js';

const tags = ['Listeners (v2)'];
const errors = { 403: Detail, 404: Detail, 422: ValidationErrorBody };

export function listenerRoutes(service: ListenerService): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/v2/listeners',
      {
        schema: {
          tags,
          querystring: Pagination,
          response: { 200: page(Listener), 422: ValidationErrorBody },
        },
      },
      (req) => service.list(principalOf(req), req.query),
    );
    app.post(
      '/v2/listeners',
      {
        schema: {
          tags,
          body: ListenerCreateRequest,
          response: { 201: Listener, 403: Detail, 409: Detail, 422: ValidationErrorBody },
        },
      },
      async (req, reply) => reply.code(201).send(await service.create(principalOf(req), req.body)),
    );
    app.get(
      '/v2/listeners/:listener_id',
      { schema: { tags, params: ListenerIdParams, response: { 200: Listener, ...errors } } },
      (req) => service.get(principalOf(req), req.params.listener_id),
    );
    app.patch(
      '/v2/listeners/:listener_id',
      {
        schema: {
          tags,
          params: ListenerIdParams,
          body: ListenerPatchRequest,
          // 409: the PATCH would drop a namespace that deployments of this listener run in.
          response: { 200: Listener, 409: Detail, ...errors },
        },
      },
      (req) => service.patch(principalOf(req), req.params.listener_id, req.body),
    );
    app.put(
      '/v2/listeners/:listener_id',
      {
        schema: {
          tags,
          params: ListenerIdParams,
          // The create body: a full replacement; compute_type and compute_id must stay as they are.
          body: ListenerCreateRequest,
          response: { 200: Listener, 409: Detail, ...errors },
        },
      },
      (req) => service.replace(principalOf(req), req.params.listener_id, req.body),
    );
    app.delete(
      '/v2/listeners/:listener_id',
      {
        schema: {
          tags,
          params: ListenerIdParams,
          // 409: deployments still use the listener.
          response: { 204: z.null(), 409: Detail, ...errors },
        },
      },
      async (req, reply) => {
        await service.delete(principalOf(req), req.params.listener_id);
        return reply.code(204).send(null);
      },
    );
  };
}
