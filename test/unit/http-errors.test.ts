// How the runtime's and the control plane's HTTP layers answer a request whose database is away
// (503 with Retry-After, which clients and the SDKs retry) and any other failure (500).
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { errorHandler as apiErrorHandler } from '../../api/http/errors.js';
import { errorHandler as runtimeErrorHandler } from '../../runtime/http/errors.js';

type Handler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown;

async function answer(handler: Handler, thrown: unknown) {
  const app = Fastify({ logger: false });
  app.setErrorHandler(handler);
  app.get('/', () => {
    throw thrown;
  });
  const res = await app.inject({ method: 'GET', url: '/' });
  await app.close();
  const body: unknown = res.json();
  return { status: res.statusCode, retryAfter: res.headers['retry-after'], body };
}

const coded = (message: string, code: string) => Object.assign(new Error(message), { code });

describe.each([
  ['runtime', runtimeErrorHandler as Handler],
  ['control plane', apiErrorHandler as Handler],
])('the %s error handler', (_name, handler) => {
  it('answers 503 with Retry-After when the database is away', async () => {
    for (const thrown of [
      coded('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      coded('terminating connection due to administrator command', '57P01'),
      new Error('Connection terminated unexpectedly'),
    ])
      expect(await answer(handler, thrown)).toEqual({
        status: 503,
        retryAfter: '1',
        body: { detail: 'The database is unavailable; retry shortly' },
      });
  });

  it('answers 500 for a statement that failed on its own', async () => {
    const res = await answer(handler, coded('duplicate key value', '23505'));
    expect(res.status).toBe(500);
    expect(res.retryAfter).toBeUndefined();
  });
});
