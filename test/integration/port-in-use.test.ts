// Every serving command started on a port something already listens on, or on an address the
// machine does not have, exits at once, non-zero, with one line that says so and how to choose
// another, and touches nothing else. A mistyped flag ends every command with one line, exit 2.
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

describe('an address the machine cannot listen on', () => {
  const commands: [string, (host: string) => string[], () => Record<string, string | undefined>][] =
    [
      [
        'dev',
        (h) => ['dev', '--config', EXAMPLES_CONFIG, '--port', '0', '--host', h],
        () => ({ DATABASE_URL: undefined }),
      ],
      [
        'runtime',
        (h) => ['runtime', '--config', EXAMPLES_CONFIG, '--port', '0', '--host', h],
        () => ({ DATABASE_URL: db.url }),
      ],
      ['api', (h) => ['api', '--port', '0', '--host', h], () => ({ DATABASE_URL: db.url })],
      [
        'operator',
        (h) => ['operator', '--compute-id', 'c1', '--port', '0', '--host', h],
        () => ({}),
      ],
    ];
  it.each(commands)(
    'stops `graphdock %s` with one line naming the address',
    async (_, args, env) => {
      // TEST-NET-1 (RFC 5737): never an address of this machine.
      const absent = await runCli(args('192.0.2.1'), { GRAPHDOCK_HOME: home, ...env() });
      expect(absent.code).toBe(1);
      expect(absent.output.trim().split('\n')).toEqual([
        'graphdock: cannot listen on 192.0.2.1 port 0: 192.0.2.1 is not an address of this machine; choose another with --host or --port',
      ]);
      const unresolvable = await runCli(args('999.1.1.1'), { GRAPHDOCK_HOME: home, ...env() });
      expect(unresolvable.code).toBe(1);
      expect(unresolvable.output.trim().split('\n')).toEqual([
        'graphdock: cannot listen on 999.1.1.1 port 0: "999.1.1.1" is neither an IP address nor a name that resolves; choose another with --host or --port',
      ]);
      expect(readdirSync(home)).toEqual([]);
    },
  );
});

describe('a mistyped flag', () => {
  it.each([
    ['dev', ['dev', '--bogus'], "graphdock: unknown option '--bogus'"],
    ['runtime', ['runtime', '--prot', '80'], "graphdock: unknown option '--prot'"],
    ['api', ['api', '--port'], "graphdock: Option '--port <value>' argument missing"],
    ['export-run', ['export-run', 'x', '--bogus'], "graphdock: unknown option '--bogus'"],
    ['operator', ['operator', '--bogus'], "graphdock: unknown option '--bogus'"],
    ['dockerfile', ['dockerfile', '--bogus'], "graphdock: unknown option '--bogus'"],
  ])('stops `graphdock %s` with exit 2 and one line', async (_, args, line) => {
    const result = await runCli(args, { GRAPHDOCK_HOME: home, DATABASE_URL: db.url });
    expect(result.code).toBe(2);
    expect(result.output.trim().split('\n')[0]).toBe(line);
    expect(result.output).not.toMatch(/\n\s+at /);
  });

  it('says what an ambiguous value means, and where the help is', async () => {
    const result = await runCli(['dev', '--port', '-1'], { GRAPHDOCK_HOME: home });
    expect(result.code).toBe(2);
    expect(result.output.trim().split('\n')).toEqual([
      "graphdock: Option '--port' argument is ambiguous.",
      'Run `graphdock --help` for the commands and their options.',
    ]);
  });
});
