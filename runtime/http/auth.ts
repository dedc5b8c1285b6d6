// API key check: `X-Api-Key` (or `Authorization: Bearer <key>`) must match one configured key,
// compared in constant time, or be a key the control plane accepts for this deployment's
// workspace (key-verifier.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { isUiAsset } from '../ui/index.js';
import type { ControlPlaneKeyVerifier } from './key-verifier.js';

export const OPEN_PATHS = new Set(['/ok']);

const digest = (value: string) => createHash('sha256').update(value).digest();

export function registerApiKeyAuth(
  app: FastifyInstance,
  keys: string[],
  mountPrefix: string,
  verifier?: ControlPlaneKeyVerifier,
): void {
  if (!keys.length && !verifier) return;
  // Hashing first gives equal-length buffers, so timingSafeEqual never leaks a key's length.
  const digests = keys.map(digest);
  const open = new Set([...OPEN_PATHS].map((p) => `${mountPrefix}${p}`));
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (open.has(path) || request.method === 'OPTIONS') return;
    if (isUiAsset(request.method, path, mountPrefix)) return;
    const header = request.headers['x-api-key'];
    const presented =
      (Array.isArray(header) ? header[0] : header) ??
      /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(request.headers.authorization ?? '')?.[1];
    if (presented) {
      const candidate = digest(presented);
      let match = false;
      for (const d of digests) match = timingSafeEqual(d, candidate) || match;
      if (match) return;
      const verdict = await verifier?.verify(presented);
      if (verdict === 'valid') return;
      // Neither yes nor no: the control plane is down and the key was not accepted lately.
      if (verdict === 'unavailable')
        return reply.code(503).send({ detail: 'API key cannot be verified right now; retry' });
    }
    return reply
      .code(401)
      .send({ detail: presented ? 'Invalid API key' : 'Missing X-Api-Key header' });
  });
}
