// HTTP routes for assistants: parse, call the service, shape the reply. No SQL, no rules.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../../common/errors/index.js';
import {
  Assistant,
  AssistantCount,
  AssistantCreate,
  AssistantDeleteQuery,
  AssistantIdParams,
  AssistantLatest,
  AssistantPatch,
  AssistantSearch,
  AssistantVersionsQuery,
  GraphQuery,
  SubgraphsParams,
  SubgraphsQuery,
} from './schemas.js';
import { isoDates } from '../state/index.js';
import type { AssistantService } from './service.js';

/**
 * Sent by in-process callers that must answer at once (MCP's `tools/list`): schemas from
 * TypeScript types only if already read, else the channels' keys (see docs/graphs.md).
 */
const SCHEMA_TYPES_HEADER = 'x-graphdock-schema-types';

const tags = ['Assistants'];
const truthy = (v: string | undefined) => v === 'true' || v === '1';

function parseXray(value: string | undefined): boolean | number {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  return Number(value);
}

export function assistantRoutes(service: AssistantService): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/assistants',
      {
        schema: {
          tags,
          body: AssistantCreate,
          response: { 200: Assistant, ...errorResponses('NOT_FOUND', 'CONFLICT') },
        },
      },
      async (req) => isoDates(await service.create(req.body)),
    );

    app.post(
      '/assistants/search',
      {
        schema: {
          tags,
          body: AssistantSearch.optional(),
          response: { 200: z.array(Assistant.partial()) },
        },
      },
      async (req, reply) => {
        const body = req.body ?? {};
        const { rows, hasMore } = await service.search(body, req.authFilter);
        if (hasMore)
          void reply.header('X-Pagination-Next', String((body.offset ?? 0) + rows.length));
        return rows;
      },
    );

    app.post(
      '/assistants/count',
      { schema: { tags, body: AssistantCount.optional(), response: { 200: z.number() } } },
      (req) => service.count(req.body ?? {}, req.authFilter),
    );

    app.get(
      '/assistants/:assistant_id',
      {
        schema: {
          tags,
          params: AssistantIdParams,
          response: { 200: Assistant, ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) => isoDates(await service.get(req.params.assistant_id)),
    );

    app.patch(
      '/assistants/:assistant_id',
      {
        schema: {
          tags,
          params: AssistantIdParams,
          body: AssistantPatch.optional(),
          response: { 200: Assistant, ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) => isoDates(await service.patch(req.params.assistant_id, req.body ?? {})),
    );

    app.delete(
      '/assistants/:assistant_id',
      {
        schema: {
          tags,
          params: AssistantIdParams,
          querystring: AssistantDeleteQuery,
          response: { 200: z.array(z.string()), ...errorResponses('NOT_FOUND') },
        },
      },
      (req) => service.delete(req.params.assistant_id, truthy(req.query.delete_threads)),
    );

    app.get(
      '/assistants/:assistant_id/graph',
      {
        schema: {
          tags,
          params: AssistantIdParams,
          querystring: GraphQuery,
          response: { 200: z.unknown(), ...errorResponses('BAD_REQUEST', 'NOT_FOUND') },
        },
      },
      (req) => service.drawing(req.params.assistant_id, parseXray(req.query.xray)),
    );

    app.get(
      '/assistants/:assistant_id/schemas',
      {
        schema: {
          tags,
          params: AssistantIdParams,
          response: { 200: z.unknown(), ...errorResponses('NOT_FOUND') },
        },
      },
      (req) =>
        service.schemas(req.params.assistant_id, {
          waitForTypes: req.headers[SCHEMA_TYPES_HEADER] !== 'if-ready',
        }),
    );

    app.get(
      '/assistants/:assistant_id/subgraphs',
      {
        schema: {
          tags,
          params: AssistantIdParams,
          querystring: SubgraphsQuery,
          response: { 200: z.unknown(), ...errorResponses('NOT_FOUND') },
        },
      },
      (req) => service.subgraphs(req.params.assistant_id, undefined, truthy(req.query.recurse)),
    );

    app.get(
      '/assistants/:assistant_id/subgraphs/:namespace',
      {
        schema: {
          tags,
          params: SubgraphsParams,
          querystring: SubgraphsQuery,
          response: { 200: z.unknown(), ...errorResponses('NOT_FOUND') },
        },
      },
      (req) =>
        service.subgraphs(req.params.assistant_id, req.params.namespace, truthy(req.query.recurse)),
    );

    app.post(
      '/assistants/:assistant_id/versions',
      {
        schema: {
          tags,
          params: AssistantIdParams,
          body: AssistantVersionsQuery.optional(),
          response: { 200: z.unknown(), ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) =>
        (await service.versions(req.params.assistant_id, req.body ?? {})).map(isoDates),
    );

    app.post(
      '/assistants/:assistant_id/latest',
      {
        schema: {
          tags,
          params: AssistantIdParams,
          body: AssistantLatest,
          response: { 200: Assistant, ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) => isoDates(await service.setLatest(req.params.assistant_id, req.body.version)),
    );
  };
}
