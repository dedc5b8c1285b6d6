// GRAPHDOCK_SHUTDOWN_DRAIN_SECS: after SIGTERM the runtime keeps serving for the drain, each
// answer closing its connection (so clients behind a Service reconnect to a pod that stays),
// and only then stops.
import { request } from 'node:http';
import { afterAll, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startServer } from '../support/server.js';

const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const db of databases) await db.drop();
});

/** GET over a keep-alive agent-less request: status and the Connection header. */
function get(url: string): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { connection: 'keep-alive' } }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

it('after SIGTERM a draining runtime still answers, with Connection: close, then exits', async () => {
  const db = await createTestDatabase(inject('pgAdminUrl'));
  databases.push(db);
  const server = await startServer({
    databaseUrl: db.url,
    env: { GRAPHDOCK_SHUTDOWN_DRAIN_SECS: '3' },
  });
  expect(await get(`${server.url}/ok`)).toEqual({ status: 200, connection: 'keep-alive' });
  const exited = new Promise<number>((resolve) =>
    server.process.once('exit', () => resolve(Date.now())),
  );
  const signalled = Date.now();
  server.process.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  for (let i = 0; i < 3; i++) {
    expect(await get(`${server.url}/ok`)).toEqual({ status: 200, connection: 'close' });
    await new Promise((r) => setTimeout(r, 500));
  }
  expect(await exited).toBeGreaterThanOrEqual(signalled + 2_900);
  expect(server.process.exitCode).toBe(0);
});
