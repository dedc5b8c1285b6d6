// Which request headers a created run receives in `config.configurable` (http.configurable_headers).
import type { IncomingHttpHeaders } from 'node:http';

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

export type HeaderSelector = (headers: IncomingHttpHeaders) => Record<string, string>;

/**
 * Without patterns: every `x-*` header but credentials, plus `user-agent` (both official servers).
 * With `includes`: exactly the matching headers. `excludes` always win.
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
    const picked: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || !wanted(name)) continue;
      picked[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return picked;
  };
}
