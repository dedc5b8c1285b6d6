// /ok, /info and /metrics.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody } from '../../common/errors/index.js';
import type { Registry } from '../../common/metrics/index.js';

export interface MetaInfo {
  version: string;
  langgraphJsVersion: string;
}

export function metaRoutes(
  info: MetaInfo,
  registry: Registry,
  checkDb: () => Promise<void>,
  full: boolean,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/ok',
      {
        schema: {
          tags: ['System'],
          querystring: z.object({ check_db: z.enum(['0', '1']).optional() }),
          response: {
            200: z.object({ ok: z.boolean() }),
            500: ErrorBody.describe('With `check_db=1`, when the database does not answer'),
          },
        },
      },
      async (req, reply) => {
        // With `disable_meta`, /ok still answers but performs no checks.
        if (full && req.query.check_db === '1') {
          try {
            await checkDb();
          } catch {
            return reply.code(500).send({ detail: 'Database unavailable' });
          }
        }
        return { ok: true };
      },
    );

    if (!full) return;

    app.get('/info', { schema: { tags: ['System'] } }, async () => ({
      version: info.version,
      langgraph_js_version: info.langgraphJsVersion,
      context: 'js',
      flags: {
        assistants: true,
        crons: true,
        langsmith: false,
        langsmith_tracing_replicas: true,
        // Runs take `strict_resume` (the SDKs send it; servers that report it honour it).
        strict_resume: true,
      },
      host: { kind: 'self-hosted', project_id: null, revision_id: null, tenant_id: null },
    }));

    app.get(
      '/metrics',
      {
        schema: {
          tags: ['System'],
          querystring: z.object({ format: z.enum(['prometheus', 'json']).optional() }),
          response: {
            200: {
              description: 'Prometheus text, or with `format=json` the same metrics as JSON',
              content: {
                'text/plain': { schema: z.string() },
                'application/json': { schema: z.unknown() },
              },
            },
          },
        },
      },
      async (req, reply) => {
        if (req.query.format === 'json') return registry.getMetricsAsJSON();
        return reply.header('Content-Type', registry.contentType).send(await registry.metrics());
      },
    );
  };
}
