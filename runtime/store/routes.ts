// HTTP routes for the store: parse, call the service, shape the reply.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../../common/errors/index.js';
import {
  Item,
  SearchItem,
  StoreDelete,
  StoreGetQuery,
  StoreNamespaces,
  StorePut,
  StoreSearch,
} from './schemas.js';
import type { StoreService } from './service.js';
import type { ItemRow } from './store.js';

const tags = ['Store'];

/** A search's items carry `score` (null unless the search had a query), as the Python server's. */
function itemBody(row: ItemRow, withScore = false) {
  return {
    namespace: row.namespace,
    key: row.key,
    value: row.value,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...(withScore ? { score: row.score ?? null } : {}),
  };
}

export function storeRoutes(service: StoreService): FastifyPluginAsyncZod {
  return async (app) => {
    const stored = z.undefined().describe('Stored');
    app.put(
      '/store/items',
      {
        schema: {
          tags,
          body: StorePut,
          response: { 204: stored, ...errorResponses('BAD_REQUEST') },
        },
      },
      async (req, reply) => {
        const { namespace, key, value, index, ttl } = req.body;
        await service.put(namespace, key, value, { index, ttl });
        return reply.code(204).send();
      },
    );

    app.get(
      '/store/items',
      {
        schema: {
          tags,
          querystring: StoreGetQuery,
          response: { 200: Item.nullable(), 400: z.object({ error: z.string() }) },
        },
      },
      async (req, reply) => {
        const { key, namespace, refresh_ttl } = req.query;
        // The official server's wording and shape for this one error.
        if (!key) return reply.code(400).send({ error: 'Key is required' });
        const labels = namespace.split('.');
        const refresh = refresh_ttl === undefined ? undefined : ['true', '1'].includes(refresh_ttl);
        const row = await service.get(labels, key, refresh);
        return row ? itemBody(row) : null;
      },
    );

    app.delete(
      '/store/items',
      {
        schema: {
          tags,
          body: StoreDelete,
          response: { 204: z.undefined().describe('Deleted'), ...errorResponses('BAD_REQUEST') },
        },
      },
      async (req, reply) => {
        await service.delete(req.body.namespace, req.body.key);
        return reply.code(204).send();
      },
    );

    app.post(
      '/store/items/search',
      {
        schema: {
          tags,
          body: StoreSearch.optional(),
          response: {
            200: z.object({ items: z.array(SearchItem) }),
            ...errorResponses('BAD_REQUEST'),
          },
        },
      },
      async (req) => {
        const body = StoreSearch.parse(req.body ?? {});
        const rows = await service.search(body.namespace_prefix, {
          filter: body.filter,
          limit: body.limit,
          offset: body.offset,
          query: body.query,
          refreshTtl: body.refresh_ttl,
        });
        return { items: rows.map((row) => itemBody(row, true)) };
      },
    );

    app.post(
      '/store/namespaces',
      {
        schema: {
          tags,
          body: StoreNamespaces.optional(),
          response: { 200: z.object({ namespaces: z.array(z.array(z.string())) }) },
        },
      },
      async (req) => {
        const body = StoreNamespaces.parse(req.body ?? {});
        return {
          namespaces: await service.listNamespaces({
            prefix: body.prefix,
            suffix: body.suffix,
            maxDepth: body.max_depth,
            limit: body.limit,
            offset: body.offset,
          }),
        };
      },
    );
  };
}
