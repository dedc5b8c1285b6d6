// CORS from `http.cors`. Without it every origin is allowed, as the official servers do.
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { HttpSettings } from '../config/index.js';

/** Clients read pagination from these, so they are always exposed. */
const ALWAYS_EXPOSED = ['content-location', 'x-pagination-total', 'x-pagination-next'];

/**
 * Every method the API uses. The plugin's own default (GET, HEAD, POST) would make a browser's
 * preflight refuse thread patches, store puts and deletes.
 */
const API_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

function originOption(settings: NonNullable<HttpSettings['cors']>): FastifyCorsOptions['origin'] {
  const origins = settings.allow_origins ?? [];
  if (origins.includes('*')) return true;
  const allowed: (string | RegExp)[] = [...origins];
  if (settings.allow_origin_regex) allowed.push(new RegExp(`^(?:${settings.allow_origin_regex})$`));
  return allowed;
}

function corsOptions(settings: HttpSettings['cors']): FastifyCorsOptions {
  if (!settings) return { origin: '*', methods: API_METHODS, exposedHeaders: ALWAYS_EXPOSED };
  const exposed = new Set([...(settings.expose_headers ?? []), ...ALWAYS_EXPOSED]);
  return {
    origin: originOption(settings),
    methods: settings.allow_methods ?? API_METHODS,
    ...(settings.allow_headers ? { allowedHeaders: settings.allow_headers } : {}),
    credentials: settings.allow_credentials ?? false,
    exposedHeaders: [...exposed],
    ...(settings.max_age !== undefined ? { maxAge: settings.max_age } : {}),
  };
}

export async function registerCors(app: FastifyInstance, settings: HttpSettings['cors']) {
  // Chromium asks before a page on a public origin may call a server on this machine or the
  // local network (Private Network Access); hosted Studio pages call local servers that way.
  // Registered before the plugin so the header is on the reply when the plugin answers.
  app.addHook('onRequest', async (request, reply) => {
    if (
      request.method === 'OPTIONS' &&
      request.headers['access-control-request-private-network'] === 'true'
    )
      reply.header('access-control-allow-private-network', 'true');
  });
  await app.register(cors, corsOptions(settings));
}
