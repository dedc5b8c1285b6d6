// Which request headers a created run receives in `config.configurable` (http.configurable_headers).
import type { IncomingHttpHeaders } from 'node:http';
import { isJsonObject } from '../../common/json/index.js';

export interface HeaderPatterns {
  includes?: string[] | undefined;
  excludes?: string[] | undefined;
}

/** Credentials never reach a graph unless a pattern names them. */
const NEVER_BY_DEFAULT = new Set(['x-api-key', 'x-tenant-id', 'x-service-key']);

/** Only literal characters and `*` (any run of characters); everything else is matched as is. */
function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .toLowerCase()
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`);
}

export type HeaderSelector = (headers: IncomingHttpHeaders) => Record<string, unknown>;

/** A LangSmith dotted order: `<UTC time to the microsecond>Z<run id>` per run, root first. */
const DOTTED_ORDER =
  /^\d{8}T\d{12}Z[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(\.\d{8}T\d{12}Z[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})*$/;
const MAX_TRACE_HEADER = 8192;

const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

function decoded(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/**
 * Distributed tracing (LangSmith's `langsmith-trace` and `baggage` headers, what RemoteGraph
 * sends with `distributed_tracing`): the caller's run, and the project, metadata and tags its
 * baggage names, kept in `configurable` under the keys the official servers use, whatever the
 * header patterns say. A trace header that is not a dotted order is left out with its baggage.
 */
export function tracingHeaders(headers: IncomingHttpHeaders): Record<string, unknown> {
  const trace = one(headers['langsmith-trace'])?.trim();
  if (!trace || trace.length > MAX_TRACE_HEADER || !DOTTED_ORDER.test(trace)) return {};
  const picked: Record<string, unknown> = { 'langsmith-trace': trace };
  for (const item of (one(headers.baggage) ?? '').split(',')) {
    const at = item.indexOf('=');
    if (at < 0) continue;
    const key = item.slice(0, at).trim();
    const value = decoded(item.slice(at + 1).trim());
    if (value === undefined) continue;
    if (key === 'langsmith-project' && value) picked[key] = value;
    else if (key === 'langsmith-tags')
      picked[key] = value.split(',').filter((tag) => tag.length > 0);
    else if (key === 'langsmith-metadata') {
      const metadata = parseObject(value);
      if (metadata) picked[key] = metadata;
    }
  }
  return picked;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Without patterns: every `x-*` header but credentials, plus `user-agent` (both official servers).
 * With `includes`: exactly the matching headers. `excludes` always win. The tracing headers are
 * added whatever the patterns (see `tracingHeaders`).
 */
export function headerSelector(patterns: HeaderPatterns | null | undefined): HeaderSelector {
  const includes = patterns?.includes?.map(globToRegExp);
  const excludes = (patterns?.excludes ?? []).map(globToRegExp);
  const wanted = (name: string) => {
    if (excludes.some((re) => re.test(name))) return false;
    if (includes) return includes.some((re) => re.test(name));
    return (name.startsWith('x-') && !NEVER_BY_DEFAULT.has(name)) || name === 'user-agent';
  };
  return (headers) => {
    const picked: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || !wanted(name)) continue;
      picked[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return { ...picked, ...tracingHeaders(headers) };
  };
}

/** The caller's run of a distributed trace, as a run's tracer takes it. */
export interface DistributedParent {
  dottedOrder: string;
  project?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  tags?: string[] | undefined;
}

/** The distributed parent `tracingHeaders` kept in a run's `configurable`, if any. */
export function distributedParent(
  configurable: Record<string, unknown>,
): DistributedParent | undefined {
  const trace = configurable['langsmith-trace'];
  if (typeof trace !== 'string' || !DOTTED_ORDER.test(trace)) return undefined;
  const project = configurable['langsmith-project'];
  const metadata = configurable['langsmith-metadata'];
  const tags = configurable['langsmith-tags'];
  return {
    dottedOrder: trace,
    ...(typeof project === 'string' && project ? { project } : {}),
    ...(isJsonObject(metadata) ? { metadata } : {}),
    ...(Array.isArray(tags)
      ? { tags: tags.filter((t): t is string => typeof t === 'string') }
      : {}),
  };
}
