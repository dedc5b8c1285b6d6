// Custom auth on the HTTP server: `authenticate` on every request (replacing the API-key check),
// then the route's authorization rule once its body and params are parsed.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CustomAuth } from './custom-auth.js';
import { isUiAsset } from '../ui/index.js';
import { Authz, RULES } from './policy.js';
import type { AuthContext, AuthFilter, AuthLookups, RunAuthExtras } from './types.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The user `authenticate` returned; undefined without custom auth. */
    authContext?: AuthContext | undefined;
    /** The handler's filter, for the route to pass to the store (searches, a run's thread). */
    authFilter?: AuthFilter | undefined;
    /** Metadata and config an A2A run gets from `threads:create_run`. */
    authRun?: RunAuthExtras | undefined;
  }
}

/**
 * Set on a raw request that the custom app's front (`http.app`) already authenticated: the user,
 * or null. The hook then takes that instead of authenticating again.
 */
export const PRE_AUTHENTICATED = Symbol('graphdock.preauthenticated');

/** Paths open to everyone, as on the official server (liveness and server info). */
const OPEN = ['/ok', '/info'];

/** Whether `authenticate` is skipped for a path (under the mount prefix) and method. */
export function isOpenToAll(path: string, method: string, mountPrefix: string): boolean {
  return method === 'OPTIONS' || OPEN.some((p) => `${mountPrefix}${p}` === path);
}

/** The request as a WHATWG `Request`, the shape `authenticate` receives on the official server. */
function asFetchRequest(req: FastifyRequest): Request {
  const headers = new Headers();
  const raw = req.raw.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    // HTTP/2 pseudo-headers are not header names to the Fetch API.
    if (!name.startsWith(':')) headers.append(name, raw[i + 1] ?? '');
  }
  return new Request(`${req.protocol}://${req.host}${req.url}`, { method: req.method, headers });
}

/**
 * Routes under the mount prefix that are the platform's, not the app's (`graphdock dev`'s trace
 * store): the app's `authenticate` is not asked; `refusal` decides (an API key).
 */
export interface PlatformRoutes {
  path: string;
  /** Whether a request (method, path after the mount prefix) needs no key: a presigned token's use. */
  isOpen(method: string, path: string): boolean;
  /** Undefined when the request's `X-Api-Key` or bearer token is accepted. */
  refusal(
    apiKey: string | string[] | null | undefined,
    authorization: string | null | undefined,
  ): Promise<{ status: number; detail: string } | undefined>;
}

/** Whether `path` (as requested) is one of the platform's routes. */
export function isPlatformPath(platform: PlatformRoutes, path: string, mountPrefix: string) {
  const base = `${mountPrefix}${platform.path}`;
  return path === base || path.startsWith(`${base}/`);
}

export function registerCustomAuth(
  app: FastifyInstance,
  auth: CustomAuth,
  lookups: AuthLookups,
  mountPrefix: string,
  platform?: PlatformRoutes,
): void {
  const open = new Set(OPEN.map((p) => `${mountPrefix}${p}`));
  app.decorateRequest('authContext', undefined);
  app.decorateRequest('authFilter', undefined);
  app.decorateRequest('authRun', undefined);
  app.addHook('onRequest', async (req, reply) => {
    const pre = (req.raw as unknown as Record<symbol, AuthContext | null | undefined>)[
      PRE_AUTHENTICATED
    ];
    if (pre !== undefined) {
      req.authContext = pre ?? undefined;
      return;
    }
    const path = req.url.split('?')[0] ?? '';
    if (open.has(path) || req.method === 'OPTIONS') return;
    if (isUiAsset(req.method, path, mountPrefix)) return;
    if (platform && isPlatformPath(platform, path, mountPrefix)) {
      if (platform.isOpen(req.method, path.slice(mountPrefix.length))) return;
      const refused = await platform.refusal(req.headers['x-api-key'], req.headers.authorization);
      if (refused) return reply.code(refused.status).send({ detail: refused.detail });
      return;
    }
    req.authContext = await auth.authenticate(asFetchRequest(req));
  });
  const authorizes = auth.authorizes;
  app.addHook('preHandler', async (req) => {
    const route = req.routeOptions.url;
    if (route === undefined) return;
    const rule = RULES[`${req.method} ${route.slice(mountPrefix.length)}`];
    // Runs are created with the user in their config even when no `on` handler exists.
    if (rule && (authorizes || req.authContext))
      await rule(req, new Authz(auth, lookups, req.authContext));
  });
}
