// The A2A 0.3 shapes this endpoint reads, as zod schemas. Unknown members are tolerated (the
// protocol grows by adding optional fields); wrong types and missing required members are not.
import { z } from 'zod';
import { invalidParams } from './jsonrpc.js';

const JsonObject = z.record(z.string(), z.unknown());

const TextPart = z.object({
  kind: z.literal('text'),
  text: z.string(),
  metadata: JsonObject.optional(),
});
const FilePart = z.object({
  kind: z.literal('file'),
  file: JsonObject,
  metadata: JsonObject.optional(),
});
const DataPart = z.object({
  kind: z.literal('data'),
  data: JsonObject,
  metadata: JsonObject.optional(),
});
export const Part = z.discriminatedUnion('kind', [TextPart, FilePart, DataPart]);
export type Part = z.infer<typeof Part>;

export const Message = z.object({
  kind: z.literal('message').optional(),
  role: z.enum(['user', 'agent']),
  parts: z.array(Part).min(1, 'a message needs at least one part'),
  messageId: z.string().min(1),
  taskId: z.string().min(1).optional(),
  contextId: z.string().min(1).optional(),
  referenceTaskIds: z.array(z.string()).optional(),
  extensions: z.array(z.string()).optional(),
  metadata: JsonObject.optional(),
});
export type Message = z.infer<typeof Message>;

export const MessageSendParams = z.object({
  message: Message,
  configuration: z
    .object({
      acceptedOutputModes: z.array(z.string()).optional(),
      historyLength: z.number().int().nonnegative().optional(),
      blocking: z.boolean().optional(),
      pushNotificationConfig: JsonObject.optional(),
    })
    .optional(),
  metadata: JsonObject.optional(),
});
export type MessageSendParams = z.infer<typeof MessageSendParams>;

export const TaskQueryParams = z.object({
  id: z.string().min(1),
  historyLength: z.number().int().nonnegative().optional(),
  metadata: JsonObject.optional(),
});
export type TaskQueryParams = z.infer<typeof TaskQueryParams>;

export const TaskIdParams = z.object({ id: z.string().min(1), metadata: JsonObject.optional() });
export type TaskIdParams = z.infer<typeof TaskIdParams>;

/** Validates `params`, or throws -32602 naming every member that is wrong. */
export function parseParams<T>(schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const where = ['params', ...issue.path.map(String)].join('.');
    return `${where}: ${issue.message}`;
  });
  throw invalidParams(`Invalid params: ${problems.join('; ')}`);
}
