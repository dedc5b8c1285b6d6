// One log entry per answered request. Headers are left out unless `http.logging_headers`
// (langgraph.json) selects them, as the official servers do: `includes` and `excludes` hold
// header names or `*` globs, case-insensitive, and an exclusion wins. With headers selected the
// entry is written at `info` (the project asked for request logs); otherwise at `debug`, since
// per-request lines would dominate the output.
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../../common/logging/index.js';
import type { HttpSettings } from '../config/index.js';

type LoggingHeaders = NonNullable<HttpSettings['logging_headers']>;

/** A `*` glob as an anchored, case-insensitive pattern; `*` is the only special character. */
function globPattern(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[\\^$.|?+()[\]{}]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 'i');
}

/** Which header names to log: none without settings. */
export function headerSelector(
  settings: LoggingHeaders | null | undefined,
): (name: string) => boolean {
  const includes = (settings?.includes ?? []).map(globPattern);
  const excludes = (settings?.excludes ?? []).map(globPattern);
  return (name) => includes.some((p) => p.test(name)) && !excludes.some((p) => p.test(name));
}

export function registerRequestLog(
  app: FastifyInstance,
  logger: Logger,
  settings: LoggingHeaders | null | undefined,
): void {
  const selected = headerSelector(settings);
  const level = settings ? 'info' : 'debug';
  // The level is fixed for the process: without it enabled, requests pay nothing.
  if (!logger.isLevelEnabled(level)) return;
  app.addHook('onRequest', (request, reply, done) => {
    // `finish`, not an onResponse hook: streamed replies are hijacked and skip the hooks.
    reply.raw.once('finish', () => {
      const headers: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (selected(name)) headers[name] = value;
      }
      // The process logger, not `request.log`: fastify's `req` serializer would drop the
      // headers. Under `req.headers`, the logger's redaction of credentials still applies.
      logger[level](
        {
          reqId: request.id,
          req: { method: request.method, url: request.url, headers },
          res: { statusCode: reply.raw.statusCode },
          responseTime: Math.round(reply.elapsedTime * 10) / 10,
        },
        'request completed',
      );
    });
    done();
  });
}
