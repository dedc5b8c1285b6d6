// Every serving command started on a port something already listens on exits at once, non-zero,
// with one line that says so and how to choose another port, and touches nothing else.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { EXAMPLES_CONFIG, runCli } from '../support/server.js';

let holder: Server;
let port: number;
let db: TestDatabase;
const home = mkdtempSync(join(tmpdir(), 'graphdock-port-'));

beforeAll(async () => {
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  port = (holder.address() as AddressInfo).port;
  db = await createTestDatabase(inject('pgAdminUrl'));
});

afterAll(async () => {
  await new Promise((resolve) => holder.close(resolve));
  await db.drop();
  rmSync(home, { recursive: true, force: true });
});

const at = () => ['--port', String(port), '--host', '127.0.0.1'];

describe('a port already in use', () => {
  it.each([
    [
      'dev',
      () => ['dev', '--config', EXAMPLES_CONFIG, ...at()],
      () => ({ DATABASE_URL: undefined }),
    ],
    [
      'runtime',
      () => ['runtime', '--config', EXAMPLES_CONFIG, ...at()],
      () => ({ DATABASE_URL: db.url }),
    ],
    ['api', () => ['api', ...at()], () => ({ DATABASE_URL: db.url })],
    ['operator', () => ['operator', '--compute-id', 'c1', ...at()], () => ({})],
  ])('stops `graphdock %s` with one line naming the port and --port', async (_, args, env) => {
    const result = await runCli(args(), { GRAPHDOCK_HOME: home, ...env() });
    expect(result.code).toBe(1);
    expect(result.output.trim().split('\n')).toEqual([
      `graphdock: port ${port} on 127.0.0.1 is already in use: stop what listens there, or choose another port with --port <n>`,
    ]);
    // Found before anything starts: `dev` has not started its embedded PostgreSQL there.
    expect(readdirSync(home)).toEqual([]);
  });
});
