// One HTTP attempt: POST through the SSRF-guarded dispatcher, with connect and response
// timeouts, classified into delivered / retry / give up. Redirects are never followed.
import { errors, request, type Dispatcher } from 'undici';
import { BlockedDestinationError } from './guard.js';

export interface AttemptResult {
  outcome: 'delivered' | 'retry' | 'give-up';
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** From a `Retry-After` header of a 429 or 5xx answer. */
  retryAfterMs?: number | undefined;
}

const MAX_ERROR_BODY = 512;

/** `Retry-After` as seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The start of an answer's body, for the attempt log; a huge body is not read to its end. */
async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): unknown }, max: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= max) break;
  }
  body.destroy();
  return Buffer.concat(chunks).toString('utf8').slice(0, max);
}

function blockedCause(err: unknown): BlockedDestinationError | undefined {
  for (let e: unknown = err; e instanceof Error; e = e.cause)
    if (e instanceof BlockedDestinationError) return e;
  return undefined;
}

function describeNetworkError(err: unknown): string {
  if (err instanceof errors.ConnectTimeoutError) return 'connect timeout';
  if (err instanceof errors.HeadersTimeoutError || err instanceof errors.BodyTimeoutError)
    return 'response timeout';
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    parts.push(code && !e.message.includes(code) ? `${code}: ${e.message}` : e.message);
  }
  return parts.join(' <- ') || String(err);
}

export async function sendWebhook(
  dispatcher: Dispatcher,
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal?: AbortSignal,
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
  try {
    const response = await request(url, {
      method: 'POST',
      headers,
      body,
      dispatcher,
      ...(signal ? { signal } : {}),
    });
    const code = response.statusCode;
    const text = code >= 300 ? await readPrefix(response.body, MAX_ERROR_BODY) : '';
    if (code < 300) await response.body.dump();
    const latencyMs = elapsed();
    if (code >= 200 && code < 300)
      return { outcome: 'delivered', statusCode: code, latencyMs, error: null };
    const header = response.headers['retry-after'];
    const retryAfterMs = parseRetryAfter(Array.isArray(header) ? header[0] : header);
    if (code >= 300 && code < 400) {
      const location = response.headers.location;
      return {
        outcome: 'give-up',
        statusCode: code,
        latencyMs,
        error: `redirect to ${String(location ?? '(no location)')} not followed`,
      };
    }
    const retryable = code === 429 || code === 408 || code >= 500;
    return {
      outcome: retryable ? 'retry' : 'give-up',
      statusCode: code,
      latencyMs,
      error: `HTTP ${code}${text ? `: ${text}` : ''}`,
      retryAfterMs: retryable ? retryAfterMs : undefined,
    };
  } catch (err) {
    const blocked = blockedCause(err);
    if (blocked)
      return { outcome: 'give-up', statusCode: null, latencyMs: elapsed(), error: blocked.message };
    return {
      outcome: 'retry',
      statusCode: null,
      latencyMs: elapsed(),
      error: signal?.aborted ? `aborted: ${String(signal.reason)}` : describeNetworkError(err),
    };
  }
}
