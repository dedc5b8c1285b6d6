// What a deployed runtime asks the control plane about a key presented to it: the auth hook has
// already resolved the key (401 unknown or revoked) and matched X-Tenant-Id to its workspace
// (403 otherwise), so reaching this handler means "a live key of that workspace".
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../common/errors/index.js';
import { principalOf } from './auth.js';

export const VERIFY_KEY_PATH = '/internal/v1/auth/verify';

export function verifyKeyRoute(app: FastifyInstance): void {
  // Hidden: an internal route of runtimes, not part of the public /v2 API document.
  app.get(VERIFY_KEY_PATH, { schema: { hide: true } }, async (request) => {
    if (request.headers['x-tenant-id'] === undefined)
      throw new AppError('VALIDATION', [
        { loc: ['header', 'x-tenant-id'], msg: 'Field required', type: 'missing' },
      ]);
    return { workspace_id: principalOf(request).workspace.id };
  });
}
