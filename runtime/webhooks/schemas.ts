import { z } from 'zod';

const Id = z.uuid().transform((id) => id.toLowerCase());

export const ThreadRunParams = z.object({ thread_id: Id, run_id: Id });
export const RunIdParams = z.object({ run_id: Id });

export const WebhookAttempt = z.object({
  attempt: z.number().int(),
  started_at: z.string(),
  status_code: z.number().int().nullable(),
  latency_ms: z.number(),
  error: z.string().nullable(),
});

export const WebhookDelivery = z
  .object({
    webhook_id: z.string().describe('The `webhook-id` header value; stable across retries'),
    run_id: z.string(),
    thread_id: z.string(),
    url: z.string().describe('The destination, with query parameter values masked'),
    status: z.enum(['pending', 'delivering', 'delivered', 'failed']),
    attempt_count: z.number().int(),
    next_attempt_at: z.string().nullable(),
    last_error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    delivered_at: z.string().nullable(),
    attempts: z.array(WebhookAttempt),
  })
  .describe('A run-completion webhook and every attempt to deliver it');
