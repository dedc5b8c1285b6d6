// Provisions one real PostgreSQL server for the integration run (unless one is given) and a
// migrated template database that every test file clones.
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startPostgresServer, type PostgresServer } from '../../common/db/index.js';
import { TEMPLATE_DB, prepareTemplate } from './databases.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
  }
}

let server: PostgresServer | undefined;
let dataDir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  let adminUrl = process.env.GRAPHDOCK_TEST_DATABASE_URL;
  if (!adminUrl) {
    const root = join(process.cwd(), '.cache', 'test-pg');
    mkdirSync(root, { recursive: true });
    dataDir = mkdtempSync(join(root, 'run-'));
    server = await startPostgresServer({ dataDir: join(dataDir, 'data'), ephemeral: true });
    adminUrl = server.url;
  }
  await prepareTemplate(adminUrl);
  project.provide('pgAdminUrl', adminUrl);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}

export { TEMPLATE_DB };
