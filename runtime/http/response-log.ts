// For the test suite: appends each distinct (method, route template, status) the server answers
// to a file, so a check after the run can compare every status the tests saw with the statuses
// the OpenAPI document declares. Off unless GRAPHDOCK_RESPONSE_LOG names a directory.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';

export interface LoggedResponse {
  method: string;
  /** The route template without the mount prefix, in OpenAPI form (`/threads/{thread_id}`). */
  path: string;
  status: number;
}

/** `/api/threads/:thread_id` → `/threads/{thread_id}` (with mount prefix `/api`). */
export function openApiPath(routeUrl: string, mountPrefix: string): string {
  const path =
    mountPrefix && routeUrl.startsWith(mountPrefix) ? routeUrl.slice(mountPrefix.length) : routeUrl;
  return (path === '' ? '/' : path).replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export function registerResponseLog(app: FastifyInstance, dir: string, mountPrefix: string): void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${process.pid}.ndjson`);
  const seen = new Set<string>();
  app.addHook('onRequest', (request, reply, done) => {
    // `finish`, not an onResponse hook: streamed replies are hijacked and skip the hooks.
    reply.raw.once('finish', () => {
      const route = request.routeOptions.url;
      if (route === undefined) return;
      const entry: LoggedResponse = {
        method: request.method,
        path: openApiPath(route, mountPrefix),
        status: reply.raw.statusCode,
      };
      const line = JSON.stringify(entry);
      if (seen.has(line)) return;
      seen.add(line);
      // Synchronous: a handful of distinct lines per server, and none lost at exit.
      appendFileSync(file, `${line}\n`);
    });
    done();
  });
}
