// Kubernetes API failures as status codes, whichever client call produced them.
import { ApiException } from '@kubernetes/client-node';

/** The HTTP status of a failed Kubernetes call; 0 when the server was not reached. */
export function statusOf(err: unknown): number {
  if (err instanceof ApiException) return err.code;
  const code = (err as { statusCode?: unknown; code?: unknown } | undefined)?.statusCode;
  return typeof code === 'number' ? code : 0;
}

export const isNotFound = (err: unknown) => statusOf(err) === 404;
export const isConflict = (err: unknown) => statusOf(err) === 409;

/** A short, log-friendly description: status and the server's message, not the whole body. */
export function describeError(err: unknown): string {
  if (err instanceof ApiException) {
    const body = err.body as unknown;
    let message: unknown = body;
    if (typeof body === 'string') {
      try {
        message = (JSON.parse(body) as { message?: string }).message ?? body;
      } catch {
        message = body;
      }
    } else if (body && typeof body === 'object') message = (body as { message?: string }).message;
    return `${err.code}: ${String(message)}`;
  }
  return err instanceof Error ? err.message : String(err);
}
