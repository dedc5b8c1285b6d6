// Per-file fixture: a fresh database cloned from the template and a running server on it.
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
