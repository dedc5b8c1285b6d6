// The thread protocol's wire shapes: the command envelope, each command's params, and the body
// of an SSE event stream. One zod schema each, for validation, types and the OpenAPI document.
import { z } from 'zod';
import { CommandGoto, CommandUpdate, GraphConfig } from '../graphs/index.js';

export const CHANNELS = [
  'values',
  'updates',
  'checkpoints',
  'messages',
  'tools',
  'custom',
  'lifecycle',
  'input',
  'tasks',
] as const;

const JsonObject = z.record(z.string(), z.unknown());
const Namespace = z.array(z.string());

/** A channel of the reference, or a named custom channel (`custom:<name>`). */
const Channel = z
  .string()
  .refine((c) => (CHANNELS as readonly string[]).includes(c) || /^custom:.+/.test(c), {
    message: `unsupported channel: expected one of ${CHANNELS.join(', ')}, or custom:<name>`,
  });

export const ThreadParams = z.object({ thread_id: z.uuid().transform((id) => id.toLowerCase()) });

export const CommandEnvelope = z
  .object({
    id: z.number().int().min(0),
    method: z.string().min(1),
    params: JsonObject.nullish(),
  })
  .meta({ id: 'ProtocolCommand' });
export type CommandEnvelope = z.infer<typeof CommandEnvelope>;

/** Success or error envelope: protocol errors are answered with HTTP 200. */
export const CommandReply = z
  .object({
    type: z.enum(['success', 'error']),
    id: z.number().int().nullable(),
    result: z.unknown().optional(),
    error: z.string().optional(),
    message: z.string().optional(),
    meta: JsonObject.optional(),
  })
  .meta({ id: 'ProtocolReply' });

/** `POST /threads/{id}/stream/events`: strict, as the official JS server's. */
export const StreamBody = z
  .strictObject({
    channels: z.array(z.string()),
    namespaces: z.array(Namespace).optional(),
    depth: z.number().int().min(0).optional(),
    since: z.number().int().optional(),
  })
  .meta({ id: 'ProtocolStreamBody' });
export type StreamBody = z.infer<typeof StreamBody>;

export const MULTITASK = ['reject', 'rollback', 'interrupt', 'enqueue'] as const;

export const RunStartParams = z.looseObject({
  assistant_id: z.string().min(1),
  input: z.unknown().optional(),
  config: GraphConfig.nullish(),
  metadata: JsonObject.nullish(),
  multitaskStrategy: z.enum(MULTITASK).nullish(),
});

const Response = z.object({
  interrupt_id: z.string().min(1),
  response: z.unknown(),
  namespace: Namespace.optional(),
});

const RespondExtras = {
  update: CommandUpdate.nullish(),
  goto: CommandGoto.nullish(),
  config: GraphConfig.nullish(),
  metadata: JsonObject.nullish(),
};

export const InputRespondParams = z.union([
  z.object({ responses: z.array(Response).min(1), ...RespondExtras }),
  Response.extend(RespondExtras),
]);
export type InputRespondParams = z.infer<typeof InputRespondParams>;

export const StateGetParams = z.object({
  namespace: z.unknown().optional(),
  keys: z.array(z.string()).nullish(),
});

/** Malformed `namespaces` or `depth` are dropped, as both official servers do. */
export const SubscribeParams = z.object({
  channels: z.array(Channel).min(1),
  namespaces: z.array(Namespace).optional().catch(undefined),
  depth: z.number().int().min(0).optional().catch(undefined),
  since: z.number().int().optional().catch(undefined),
});
export type SubscribeParams = z.infer<typeof SubscribeParams>;

export const UnsubscribeParams = z.object({ subscription_id: z.string().min(1) });
