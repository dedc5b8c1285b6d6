// Debugging: the webhook deliveries of a run, with every attempt.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../../common/errors/index.js';
import type { WebhookDeliveries } from './deliveries.js';
import { RunIdParams, ThreadRunParams, WebhookDelivery } from './schemas.js';

const tags = ['Webhooks'];

export function webhookRoutes(deliveries: WebhookDeliveries): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/threads/:thread_id/runs/:run_id/webhooks',
      {
        schema: {
          tags,
          params: ThreadRunParams,
          response: { 200: z.array(WebhookDelivery), ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) => deliveries.list(req.params.run_id, req.params.thread_id),
    );
    app.get(
      '/runs/:run_id/webhooks',
      {
        schema: {
          tags,
          params: RunIdParams,
          response: { 200: z.array(WebhookDelivery), ...errorResponses('NOT_FOUND') },
        },
      },
      async (req) => deliveries.list(req.params.run_id),
    );
  };
}
