// The API's authentication as one check on a Fetch request, for the custom app's front
// (`http.app`), which authenticates before fastify sees the request when configured to. The
// same rules as the hooks: custom auth (`auth.path`) when loaded, else the API keys.
import { AppError } from '../../common/errors/index.js';
import {
  isOpenToAll,
  isPlatformPath,
  type CustomAuth,
  type PlatformRoutes,
} from '../auth/index.js';
import type { Gate } from '../custom-app/index.js';
import { apiKeyCheck, isOpenTraceRoute, OPEN_PATHS, presentedKey } from './auth.js';
import type { ControlPlaneKeyVerifier } from './key-verifier.js';

/** The gate's answer for an API-key check's refusal (undefined: accepted). */
const verdictOf = (refused: { status: number; detail: string } | undefined) =>
  refused
    ? { ok: false as const, status: refused.status, headers: {}, body: { detail: refused.detail } }
    : { ok: true as const, context: undefined };

export function apiGate(
  options: {
    customAuth?: CustomAuth | undefined;
    /** With custom auth: routes that take API keys instead (`AppDeps.platformRoutes`). */
    platform?: PlatformRoutes | undefined;
    apiKeys: string[];
    keyVerifier?: ControlPlaneKeyVerifier | undefined;
  },
  prefix: string,
): Gate {
  const { customAuth, platform } = options;
  if (customAuth)
    return {
      check: async (request) => {
        const path = new URL(request.url).pathname;
        if (isOpenToAll(path, request.method, prefix)) return { ok: true, context: undefined };
        if (platform && isPlatformPath(platform, path, prefix)) {
          if (platform.isOpen(request.method, path.slice(prefix.length)))
            return { ok: true, context: undefined };
          const refused = await platform.refusal(
            request.headers.get('x-api-key'),
            request.headers.get('authorization'),
          );
          return verdictOf(refused);
        }
        try {
          return { ok: true, context: await customAuth.authenticate(request) };
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          return {
            ok: false,
            status: err.status,
            headers: err.headers ?? {},
            body: { detail: err.detail },
          };
        }
      },
    };
  if (!options.apiKeys.length && !options.keyVerifier)
    return { check: () => Promise.resolve({ ok: true, context: undefined }) };
  const check = apiKeyCheck(options.apiKeys, options.keyVerifier);
  const open = new Set([...OPEN_PATHS].map((p) => `${prefix}${p}`));
  return {
    check: async (request) => {
      const path = new URL(request.url).pathname;
      if (
        request.method === 'OPTIONS' ||
        open.has(path) ||
        isOpenTraceRoute(request.method, path, prefix)
      )
        return { ok: true, context: undefined };
      const refused = await check(
        presentedKey(request.headers.get('x-api-key'), request.headers.get('authorization')),
      );
      return verdictOf(refused);
    },
  };
}
