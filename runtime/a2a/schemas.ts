// The A2A 0.3 shapes this endpoint reads, as zod schemas. Unknown members are tolerated (the
// protocol grows by adding optional fields); wrong types and missing required members are not.
import { z } from 'zod';
import { unstorableStrings, type CarriedFields } from '../../common/json/index.js';
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

/** The parts of params that become graph input, which may hold any string (common/db/jsonb.ts). */
const CARRIED: CarriedFields = { message: { parts: { '*': { text: true, data: true } } } };

/**
 * Validates `params`, or throws -32602 naming every member that is wrong, strings PostgreSQL
 * cannot store (NUL, lone surrogates) outside the graph's input included.
 */
export function parseParams<T>(schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params ?? {});
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((issue) => ({ path: issue.path, message: issue.message }));
  for (const { path, msg } of unstorableStrings(params, CARRIED))
    problems.push({ path, message: msg });
  if (parsed.success && !problems.length) return parsed.data;
  const described = problems.map(({ path, message }) => {
    const where = ['params', ...path.map(String)].join('.');
    return `${where}: ${message}`;
  });
  throw invalidParams(`Invalid params: ${described.join('; ')}`);
}
