// Start-ups that cannot go on end with one `graphdock:` line that says why, not a stack trace.
// A database that is not there yet, or not usable: every command that opens it waits for it
// within GRAPHDOCK_DATABASE_WAIT_SECS, then names it (never its password); one that comes up
// while the command waits is used. A role that may not create tables is told the grant it needs.
// A kubeconfig that cannot be read stops the api and the operator; a project module that cannot
// be loaded stops the runtime. A second `graphdock dev` on a folder in use says so.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../common/db/index.js';
import { createTestDatabase, databaseUrl, type TestDatabase } from '../support/databases.js';
import { EXAMPLES_CONFIG, REPO_ROOT, runCli, startServer } from '../support/server.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
});
afterAll(() => db.drop());

/** What a failed start printed: one `graphdock:` line and no stack frame, no password. */
function expectCleanFailure(output: string, pattern: RegExp) {
  const lines = output.split('\n').filter((l) => l.startsWith('graphdock: '));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(output).not.toMatch(/^\s+at /m);
  expect(output).not.toContain('s3cret');
}

/** A URL of the test server with another user's password, on `port` of 127.0.0.1. */
function urlOn(port: number, database = db.name) {
  const url = new URL(db.url);
  url.port = String(port);
  url.password = 's3cret';
  url.pathname = `/${database}`;
  return url.toString();
}

describe('a database that does not answer', () => {
  it.each([
    ['migrate', ['migrate']],
    ['runtime', ['runtime', '--config', EXAMPLES_CONFIG, '--port', '0', '--host', '127.0.0.1']],
    ['api', ['api', '--port', '0', '--host', '127.0.0.1']],
  ])('`graphdock %s` waits, then says where it looked', async (_name, args) => {
    const port = await freePort(); // nothing listens there
    const started = Date.now();
    const { code, output } = await runCli(args, {
      DATABASE_URL: urlOn(port),
      GRAPHDOCK_DATABASE_WAIT_SECS: '1',
      GRAPHDOCK_AUTH_TYPE: 'noop',
    });
    expect(code).toBe(1);
    expectCleanFailure(
      output,
      new RegExp(
        `^graphdock: cannot reach PostgreSQL at postgres@127\\.0\\.0\\.1:${port}/${db.name} ` +
          `\\(tried for \\d\\.\\d s\\): connect ECONNREFUSED`,
      ),
    );
    // The wait was logged, with the same place and no password.
    expect(output).toContain('"msg":"waiting for PostgreSQL"');
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('`graphdock export-run` exits for a retry (1) with the same line', async () => {
    const port = await freePort();
    const { code, output } = await runCli(['export-run', '00000000-0000-4000-8000-000000000000'], {
      DATABASE_URL: urlOn(port),
      GRAPHDOCK_DATABASE_WAIT_SECS: '0',
    });
    expect(code).toBe(1);
    expectCleanFailure(output, /^graphdock: cannot use PostgreSQL at postgres@127\.0\.0\.1:\d+\//);
  });
});

describe('a database that answers with a refusal', () => {
  it('is not waited for: a missing database ends the start at once', async () => {
    const started = Date.now();
    const { code, output } = await runCli(['migrate'], {
      DATABASE_URL: databaseUrl(db.url, 'graphdock_no_such_database'),
      GRAPHDOCK_DATABASE_WAIT_SECS: '60',
    });
    expect(code).toBe(1);
    expectCleanFailure(
      output,
      /^graphdock: cannot use PostgreSQL at .*\/graphdock_no_such_database: database "graphdock_no_such_database" does not exist$/,
    );
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

describe('a database that comes up during the wait', () => {
  let forwarder: Server | undefined;
  const sockets = new Set<Socket>();
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => (forwarder ? forwarder.close(r) : r(undefined)));
  });

  it('is migrated once it answers', async () => {
    // The test's PostgreSQL, reachable on `port` only once the command has said it waits: until
    // then nothing listens there, as while a database pod starts.
    const target = new URL(db.url);
    const port = await freePort();
    const url = new URL(db.url);
    url.port = String(port);
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'graphdock.mjs'), 'migrate'], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        LOG_LEVEL: 'warn',
        DATABASE_URL: url.toString(),
        GRAPHDOCK_DATABASE_WAIT_SECS: '60',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const open = () => {
      forwarder = createServer((inbound) => {
        const outbound = connect(Number(target.port), target.hostname);
        sockets.add(inbound).add(outbound);
        inbound.pipe(outbound).pipe(inbound);
        const close = () => (inbound.destroy(), outbound.destroy());
        inbound.on('error', close).on('close', close);
        outbound.on('error', close).on('close', close);
      }).listen(port, '127.0.0.1');
    };
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (!forwarder && output.includes('"msg":"waiting for PostgreSQL"')) open();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(output).toContain('"msg":"waiting for PostgreSQL"');
    expect(code).toBe(0);
    expect(output).not.toContain('graphdock: ');
  });
});

describe('a kubeconfig that cannot be read', () => {
  it.each([
    ['api', ['api', '--port', '0', '--host', '127.0.0.1'], 1],
    ['operator', ['operator', '--compute-id', 'start-failures'], 2],
  ])('stops `graphdock %s`, naming the file', async (_name, args, exitCode) => {
    const { code, output } = await runCli(args, {
      DATABASE_URL: db.url,
      KUBECONFIG: '/nonexistent/kubeconfig',
    });
    expect(code).toBe(exitCode);
    expectCleanFailure(
      output,
      /^graphdock: cannot load the Kubernetes configuration \(KUBECONFIG, .*\): ENOENT: .*'\/nonexistent\/kubeconfig'$/,
    );
  });
});

describe('a role that may not create tables', () => {
  const suffix = randomBytes(4).toString('hex');
  const role = `gd_limited_${suffix}`;
  const database = `gd_limited_${suffix}`;
  const admin = () => new pg.Client({ connectionString: inject('pgAdminUrl') });
  beforeAll(async () => {
    const c = admin();
    await c.connect();
    await c.query(`CREATE ROLE ${role} LOGIN PASSWORD 'x'`);
    await c.query(`CREATE DATABASE ${database}`);
    await c.end();
  });
  afterAll(async () => {
    const c = admin();
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await c.query(`DROP ROLE IF EXISTS ${role}`);
    await c.end();
  });

  it('is told the grant it needs, and the grant is enough', async () => {
    const url = new URL(databaseUrl(inject('pgAdminUrl'), database));
    url.username = role;
    url.password = 'x';
    const env = { DATABASE_URL: url.toString(), GRAPHDOCK_DATABASE_WAIT_SECS: '0' };
    const refused = await runCli(['migrate'], env);
    expect(refused.code).toBe(1);
    expectCleanFailure(
      refused.output,
      new RegExp(
        `^graphdock: cannot migrate the runtime tables: permission denied for schema public ` +
          `\\(the role "${role}" must own the database, or be granted CREATE on it and on its ` +
          `schema: GRANT CREATE ON DATABASE ${database} TO ${role}; ` +
          `GRANT CREATE ON SCHEMA public TO ${role}\\)$`,
      ),
    );
    // As the message says, on the database itself.
    const owner = new pg.Client({ connectionString: databaseUrl(inject('pgAdminUrl'), database) });
    await owner.connect();
    await owner.query(`GRANT CREATE ON DATABASE ${database} TO ${role}`);
    await owner.query(`GRANT CREATE ON SCHEMA public TO ${role}`);
    await owner.end();
    const granted = await runCli(['migrate'], env);
    expect(granted.output).not.toContain('graphdock: ');
    expect(granted.code).toBe(0);
  });
});

describe('a project module that cannot be loaded', () => {
  const echo = `${join(REPO_ROOT, 'examples', 'graphs', 'echo.ts')}:graph`;
  it.each([
    [
      'auth.path',
      { auth: { path: './nope.ts:auth' } },
      /^graphdock: Failed to load auth\.path "\.\/nope\.ts:auth" .*: file not found$/,
    ],
    [
      'http.app',
      { http: { app: './nope.ts:app' } },
      /^graphdock: Failed to load http\.app "\.\/nope\.ts:app" .*: file not found$/,
    ],
    [
      'store.index.embed',
      { store: { index: { embed: 'openai:text-embedding-3-small', dims: 1536 } } },
      /^graphdock: store\.index\.embed: "openai:text-embedding-3-small" names an embedding provider/,
    ],
  ])('stops the runtime at %s, in one line', async (_key, extra, pattern) => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-start-'));
    writeFileSync(join(dir, 'langgraph.json'), JSON.stringify({ graphs: { echo }, ...extra }));
    const { code, output } = await runCli(
      ['runtime', '--config', join(dir, 'langgraph.json'), '--port', '0', '--host', '127.0.0.1'],
      { DATABASE_URL: db.url },
    );
    expect(code).toBe(1);
    expectCleanFailure(output, pattern);
  });
});

describe('a project that cannot be loaded under `graphdock dev`', () => {
  it.each([[[]], [['--no-reload']]])(
    'ends dev %j with the line and code 1, reloading or not',
    async (flags) => {
      const dir = mkdtempSync(join(tmpdir(), 'gd-dev-start-'));
      const echo = `${join(REPO_ROOT, 'examples', 'graphs', 'echo.ts')}:graph`;
      writeFileSync(
        join(dir, 'langgraph.json'),
        JSON.stringify({ graphs: { echo }, auth: { path: './nope.ts:auth' } }),
      );
      const { code, output } = await runCli(
        ['dev', '--config', join(dir, 'langgraph.json'), '--port', String(await freePort())].concat(
          flags,
        ),
        { DATABASE_URL: db.url },
      );
      expect(code).toBe(1);
      expectCleanFailure(
        output,
        /^graphdock: Failed to load auth\.path "\.\/nope\.ts:auth" .*: file not found$/,
      );
      rmSync(dir, { recursive: true, force: true });
    },
  );
});

describe('a second `graphdock dev` on the same folder', () => {
  it('is stopped in one line naming the first, and the first goes on', async () => {
    const home = mkdtempSync(join(tmpdir(), 'gd-dev-home-'));
    const env = { GRAPHDOCK_HOME: home, DATABASE_URL: undefined };
    const first = await startServer({ command: 'dev', env });
    try {
      const { code, output } = await runCli(
        ['dev', '--config', EXAMPLES_CONFIG, '--port', '0', '--host', '127.0.0.1'],
        env,
      );
      expect(code).toBe(1);
      expectCleanFailure(
        output,
        new RegExp(
          `^graphdock: PostgreSQL in ${home}/pgdata is in use by another process ` +
            `\\(pid ${first.process.pid}\\): stop it, or use another folder$`,
        ),
      );
      expect((await fetch(`${first.url}/ok`)).status).toBe(200);
    } finally {
      expect(await first.stop()).toBe(0);
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("langgraph dev's own flags", () => {
  it('are taken by graphdock dev: --no-browser, and --n-jobs-per-worker as N_JOBS_PER_WORKER', async () => {
    const server = await startServer({
      command: 'dev',
      databaseUrl: db.url,
      extraArgs: ['--no-browser', '--n-jobs-per-worker', '0'],
    });
    try {
      expect(server.output()).toMatch(/N_JOBS_PER_WORKER=0: this process executes no runs/);
      expect((await fetch(`${server.url}/ok`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it('are refused with one line when malformed or given to another command', async () => {
    const bad = await runCli(['dev', '--n-jobs-per-worker', 'ten']);
    expect(bad.code).toBe(2);
    expectCleanFailure(bad.output, /--n-jobs-per-worker must be a whole number, got "ten"/);
    const elsewhere = await runCli(['migrate', '--no-browser']);
    expect(elsewhere.code).toBe(2);
    expectCleanFailure(elsewhere.output, /--no-browser is an option of dev only/);
  });
});
