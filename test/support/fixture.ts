// Per-file fixtures: a fresh database cloned from the template and a running server on it, or
// servers started on demand as replicas of one database.
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, inject } from 'vitest';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { startServer, type RunningServer, type ServerOptions } from './server.js';

export interface RuntimeFixture {
  db: TestDatabase;
  server: RunningServer;
  url: string;
  client: Client;
  /** Raw HTTP for the cases the SDK does not expose (status codes, headers, bad input). */
  http(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
}

export function useRuntime(options: Omit<ServerOptions, 'databaseUrl'> = {}): RuntimeFixture {
  const fixture = {} as RuntimeFixture;
  beforeAll(async () => {
    fixture.db = await createTestDatabase(inject('pgAdminUrl'));
    fixture.server = await startServer({ ...options, databaseUrl: fixture.db.url });
    fixture.url = fixture.server.url;
    fixture.client = new Client({
      apiUrl: fixture.url,
      apiKey: options.env?.GRAPHDOCK_API_KEYS?.split(',')[0] ?? null,
    });
    fixture.http = (path, init = {}) => {
      const { json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (json !== undefined) headers.set('content-type', 'application/json');
      return fetch(`${fixture.url}${path}`, {
        ...rest,
        headers,
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
    };
  });
  afterAll(async () => {
    await fixture.server?.stop();
    await fixture.db?.drop();
  });
  return fixture;
}

export interface ReplicasFixture {
  db: TestDatabase;
  /** Every server started, in order; all are killed (SIGKILL) after the file. */
  servers: RunningServer[];
  /** Starts a replica on the file's database, with `env` over the file's own. */
  start(env?: Record<string, string | undefined>): Promise<RunningServer>;
}

export function useReplicas(options: Omit<ServerOptions, 'databaseUrl'> = {}): ReplicasFixture {
  const fixture: ReplicasFixture = {
    db: undefined as unknown as TestDatabase,
    servers: [],
    start: async (env = {}) => {
      const server = await startServer({
        ...options,
        env: { ...options.env, ...env },
        databaseUrl: fixture.db.url,
      });
      fixture.servers.push(server);
      return server;
    },
  };
  beforeAll(async () => {
    fixture.db = await createTestDatabase(inject('pgAdminUrl'));
  });
  afterAll(async () => {
    await Promise.all(fixture.servers.map((s) => s.stop('SIGKILL')));
    await fixture.db?.drop();
  });
  return fixture;
}
