// JSON-RPC 2.0 envelopes for the A2A endpoint: request parsing and the protocol's error codes.
// Every failure is an answer (HTTP 200) carrying the request id, or null when it is unknown.
import { JSON_TOO_DEEP, jsonDepthExceeds } from '../../common/json/index.js';

export const RpcCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  CONTENT_TYPE_NOT_SUPPORTED: -32005,
} as const;

export type RpcId = string | number | null;

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

export interface RpcRequest {
  /** Undefined when the request has no `id` member (a notification). */
  id: RpcId | undefined;
  method: string;
  params: unknown;
}

export type ParsedRequest =
  | { ok: true; request: RpcRequest }
  /** `method` when the envelope names one, so the answer can take that method's form (SSE). */
  | { ok: false; id: RpcId; error: RpcError; method?: string };

function isValidId(id: unknown): id is RpcId {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

/**
 * Parses the raw body into one request, or the error to answer with. A missing `id` is left for
 * the caller to refuse after it has checked the method and params, so that an unknown method
 * (-32601) or bad params (-32602) are reported as such even without an id.
 */
export function parseRequest(raw: string): ParsedRequest {
  // Refused before parsing, as the HTTP API does (common/json).
  if (jsonDepthExceeds(raw))
    return {
      ok: false,
      id: null,
      error: new RpcError(RpcCode.INVALID_REQUEST, `Invalid Request: ${JSON_TOO_DEEP}`),
    };
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return {
      ok: false,
      id: null,
      error: new RpcError(RpcCode.PARSE_ERROR, 'Parse error: the body is not valid JSON'),
    };
  }
  const invalid = (id: RpcId, message: string, method?: string): ParsedRequest => ({
    ok: false,
    id,
    error: new RpcError(RpcCode.INVALID_REQUEST, `Invalid Request: ${message}`),
    ...(method !== undefined ? { method } : {}),
  });
  if (Array.isArray(body)) return invalid(null, 'batch requests are not supported');
  if (typeof body !== 'object' || body === null)
    return invalid(null, 'the body must be a JSON object');
  const envelope = body as Record<string, unknown>;
  // The id is echoed only when it is a valid one; anything else answers with null.
  const id = isValidId(envelope.id) ? envelope.id : null;
  const method =
    typeof envelope.method === 'string' && envelope.method !== '' ? envelope.method : undefined;
  if (envelope.jsonrpc !== '2.0') return invalid(id, '"jsonrpc" must be exactly "2.0"', method);
  if ('id' in envelope && !isValidId(envelope.id))
    return invalid(null, '"id" must be a string, a number or null', method);
  if (method === undefined) return invalid(id, '"method" must be a non-empty string');
  if (
    'params' in envelope &&
    (typeof envelope.params !== 'object' ||
      envelope.params === null ||
      Array.isArray(envelope.params))
  )
    return invalid(id, '"params" must be an object', method);
  return {
    ok: true,
    request: { id: 'id' in envelope ? id : undefined, method, params: envelope.params },
  };
}

export function rpcResult(id: RpcId, result: unknown) {
  return { jsonrpc: '2.0' as const, id, result };
}

export function rpcFailure(id: RpcId, error: RpcError) {
  return {
    jsonrpc: '2.0' as const,
    id,
    error: {
      code: error.code,
      message: error.message,
      ...(error.data !== undefined ? { data: error.data } : {}),
    },
  };
}

/** Answered, with a null id, to a well-formed request that has no `id`. */
export const notificationRefused = () =>
  new RpcError(
    RpcCode.INVALID_REQUEST,
    'Invalid Request: A2A methods need an "id" (notifications are not supported)',
  );

export const invalidParams = (message: string) => new RpcError(RpcCode.INVALID_PARAMS, message);
export const taskNotFound = (taskId: string) =>
  new RpcError(RpcCode.TASK_NOT_FOUND, `Task not found: ${taskId}`);
