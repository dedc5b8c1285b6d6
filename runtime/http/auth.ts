// API key check: `X-Api-Key` (or `Authorization: Bearer <key>`) must match one configured key,
// compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

export const OPEN_PATHS = new Set(['/ok']);

const digest = (value: string) => createHash('sha256').update(value).digest();

export function registerApiKeyAuth(
  app: FastifyInstance,
  keys: string[],
  mountPrefix: string,
): void {
  if (!keys.length) return;
  // Hashing first gives equal-length buffers, so timingSafeEqual never leaks a key's length.
  const digests = keys.map(digest);
  const open = new Set([...OPEN_PATHS].map((p) => `${mountPrefix}${p}`));
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (open.has(path) || request.method === 'OPTIONS') return;
    const header = request.headers['x-api-key'];
    const presented =
      (Array.isArray(header) ? header[0] : header) ??
      /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(request.headers.authorization ?? '')?.[1];
    if (presented) {
      const candidate = digest(presented);
      let match = false;
      for (const d of digests) match = timingSafeEqual(d, candidate) || match;
      if (match) return;
    }
    return reply
      .code(401)
      .send({ detail: presented ? 'Invalid API key' : 'Missing X-Api-Key header' });
  });
}
