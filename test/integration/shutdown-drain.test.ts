// GRAPHDOCK_SHUTDOWN_DRAIN_SECS: after SIGTERM the runtime keeps serving for the drain, each
// answer closing its connection (so clients behind a Service reconnect to a pod that stays),
// and only then stops. Connections kept alive from before are served until each has closed
// after an answer: none is closed under a request its client is sending.
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
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

/** One keep-alive connection, written by hand so that the test decides when it sends. */
class RawConnection {
  private buffered = '';
  private waiting: (() => void) | undefined;
  ended = false;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffered += chunk;
      this.waiting?.();
    });
    socket.on('close', () => {
      this.ended = true;
      this.waiting?.();
    });
    socket.on('error', () => undefined);
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** GET `path`: the status and Connection header of the answer, or why there was none. */
  async get(path: string): Promise<{ status: number; connection: string | undefined } | string> {
    this.socket.write(`GET ${path} HTTP/1.1\r\nhost: localhost\r\nconnection: keep-alive\r\n\r\n`);
    for (;;) {
      const head = this.buffered.indexOf('\r\n\r\n');
      if (head >= 0) {
        const lines = this.buffered.slice(0, head).split('\r\n');
        const header = (name: string) =>
          lines
            .find((l) => l.toLowerCase().startsWith(`${name}:`))
            ?.slice(name.length + 1)
            .trim();
        const length = Number(header('content-length') ?? 0);
        if (this.buffered.length >= head + 4 + length) {
          this.buffered = this.buffered.slice(head + 4 + length);
          return { status: Number(lines[0]!.split(' ')[1]), connection: header('connection') };
        }
      }
      if (this.ended)
        return `connection closed without an answer: ${JSON.stringify(this.buffered)}`;
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  /** Resolves once the server has closed the connection. */
  async closed(): Promise<void> {
    while (!this.ended) await new Promise<void>((resolve) => (this.waiting = resolve));
  }
}

it('once it stops listening, a connection kept alive from before is still answered, with Connection: close', async () => {
  const db = await createTestDatabase(inject('pgAdminUrl'));
  databases.push(db);
  const server = await startServer({
    databaseUrl: db.url,
    env: { GRAPHDOCK_SHUTDOWN_DRAIN_SECS: '1' },
  });
  const kept = await RawConnection.open(server.port);
  expect(await kept.get('/ok')).toEqual({ status: 200, connection: 'keep-alive' });
  const exited = new Promise<number | null>((resolve) =>
    server.process.once('exit', (code) => resolve(code)),
  );
  server.process.kill('SIGTERM');
  // New connections are answered through the drain, then refused: the server is closing.
  for (;;) {
    const refused = await get(`${server.url}/ok`).then(
      () => false,
      (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED',
    );
    if (refused) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  // The client sends on its idle connection just then: answered, and told to go elsewhere.
  expect(await kept.get('/ok')).toEqual({ status: 200, connection: 'close' });
  await kept.closed();
  expect(await exited).toBe(0);
});
