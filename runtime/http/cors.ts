// CORS from `http.cors`. Without it every origin is allowed, as the official servers do.
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { HttpSettings } from '../config/index.js';

/** Clients read pagination from these, so they are always exposed. */
const ALWAYS_EXPOSED = ['content-location', 'x-pagination-total', 'x-pagination-next'];

function originOption(settings: NonNullable<HttpSettings['cors']>): FastifyCorsOptions['origin'] {
  const origins = settings.allow_origins ?? [];
  if (origins.includes('*')) return true;
  const allowed: (string | RegExp)[] = [...origins];
  if (settings.allow_origin_regex) allowed.push(new RegExp(`^(?:${settings.allow_origin_regex})$`));
  return allowed;
}

export async function registerCors(app: FastifyInstance, settings: HttpSettings['cors']) {
  if (!settings) {
    await app.register(cors, { origin: '*', exposedHeaders: ALWAYS_EXPOSED });
    return;
  }
  const exposed = new Set([...(settings.expose_headers ?? []), ...ALWAYS_EXPOSED]);
  await app.register(cors, {
    origin: originOption(settings),
    ...(settings.allow_methods ? { methods: settings.allow_methods } : {}),
    ...(settings.allow_headers ? { allowedHeaders: settings.allow_headers } : {}),
    credentials: settings.allow_credentials ?? false,
    exposedHeaders: [...exposed],
    ...(settings.max_age !== undefined ? { maxAge: settings.max_age } : {}),
  });
}
