// API key check: `X-Api-Key` (or `Authorization: Bearer <key>`) must match one configured key,
// compared in constant time, or be a key the control plane accepts for this deployment's
// workspace (key-verifier.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { isUiAsset } from '../ui/index.js';
import { PRE_AUTHENTICATED, type PlatformRoutes } from '../auth/index.js';
import { isFeedbackTokenUse } from '../../traces/index.js';
import type { ControlPlaneKeyVerifier } from './key-verifier.js';

export const OPEN_PATHS = new Set(['/ok']);

const digest = (value: string) => createHash('sha256').update(value).digest();

/** The key a request presents: `X-Api-Key`, else a bearer token. */
export function presentedKey(
  apiKey: string | string[] | undefined | null,
  authorization: string | undefined | null,
): string | undefined {
  return (
    (Array.isArray(apiKey) ? apiKey[0] : (apiKey ?? undefined)) ??
    /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '')?.[1]
  );
}

/** Checks a presented key: undefined when accepted, else the status and detail of the refusal. */
export function apiKeyCheck(
  keys: string[],
  verifier?: ControlPlaneKeyVerifier,
): (presented: string | undefined) => Promise<{ status: number; detail: string } | undefined> {
  // Hashing first gives equal-length buffers, so timingSafeEqual never leaks a key's length.
  const digests = keys.map(digest);
  return async (presented) => {
    if (presented) {
      const candidate = digest(presented);
      let match = false;
      for (const d of digests) match = timingSafeEqual(d, candidate) || match;
      if (match) return undefined;
      const verdict = await verifier?.verify(presented);
      if (verdict === 'valid') return undefined;
      // Neither yes nor no: the control plane is down and the key was not accepted lately.
      if (verdict === 'unavailable')
        return { status: 503, detail: 'API key cannot be verified right now; retry' };
    }
    return { status: 401, detail: presented ? 'Invalid API key' : 'Missing X-Api-Key header' };
  };
}

export function registerApiKeyAuth(
  app: FastifyInstance,
  keys: string[],
  mountPrefix: string,
  verifier?: ControlPlaneKeyVerifier,
): void {
  if (!keys.length && !verifier) return;
  const check = apiKeyCheck(keys, verifier);
  const open = new Set([...OPEN_PATHS].map((p) => `${mountPrefix}${p}`));
  app.addHook('onRequest', async (request, reply) => {
    // Already checked by the custom app's front (`http.app`).
    if ((request.raw as unknown as Record<symbol, unknown>)[PRE_AUTHENTICATED] !== undefined)
      return;
    const path = request.url.split('?')[0] ?? '';
    if (open.has(path) || request.method === 'OPTIONS') return;
    if (isUiAsset(request.method, path, mountPrefix)) return;
    if (isOpenTraceRoute(request.method, path, mountPrefix)) return;
    const refused = await check(
      presentedKey(request.headers['x-api-key'], request.headers.authorization),
    );
    if (refused) return reply.code(refused.status).send({ detail: refused.detail });
  });
}

/**
 * The use of a presigned feedback token of `graphdock dev`'s trace store (under the mount
 * prefix): the token is its credential, so no key is asked.
 */
export function isOpenTraceRoute(method: string, path: string, mountPrefix: string): boolean {
  return path.startsWith(mountPrefix) && isFeedbackTokenUse(method, path.slice(mountPrefix.length));
}

/** Routes that custom auth leaves to API keys (see `AppDeps.platformRoutes`). */
export function platformAuth(routes: { path: string; keys: string[] }): PlatformRoutes {
  const check = apiKeyCheck(routes.keys);
  return {
    path: routes.path,
    isOpen: isFeedbackTokenUse,
    refusal: (apiKey, authorization) => check(presentedKey(apiKey, authorization)),
  };
}
