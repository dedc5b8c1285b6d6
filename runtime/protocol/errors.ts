// Protocol errors: answered as error envelopes (`{type: "error", id, error, message}`), never as
// HTTP errors, with the codes of the protocol reference.
export const PROTOCOL_ERROR_CODES = [
  'invalid_argument',
  'unknown_command',
  'no_such_run',
  'no_such_subscription',
  'no_such_interrupt',
  'not_supported',
  'unknown_error',
] as const;
export type ProtocolErrorCode = (typeof PROTOCOL_ERROR_CODES)[number];

export class ProtocolError extends Error {
  constructor(
    readonly code: ProtocolErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

export const invalidArgument = (message: string) => new ProtocolError('invalid_argument', message);

export interface ErrorEnvelope {
  type: 'error';
  id: number | null;
  error: ProtocolErrorCode;
  message: string;
  meta?: Record<string, unknown>;
}

export function errorEnvelope(id: number | null, err: ProtocolError): ErrorEnvelope {
  return { type: 'error', id, error: err.code, message: err.message };
}

/** The first issue of a zod error, as one line. */
export function issueMessage(error: {
  issues: { path: PropertyKey[]; message: string }[];
}): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid params';
  const path = pathText(issue.path);
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** Where a value sits in a command, as messages name it: `params.responses.0.interrupt_id`. */
export function pathText(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}
