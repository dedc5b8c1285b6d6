// Provisions one real PostgreSQL server for the integration run (unless one is given) and a
// migrated template database that every test file clones, and builds the S3 test server once.
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startPostgresServer, type PostgresServer } from '../../common/db/index.js';
import { buildOpenApiDocument, GRAPHDOCK_VERSION } from '../../runtime/index.js';
import { TEMPLATE_DB, prepareTemplate } from './databases.js';
import { readResponseLog, RESPONSE_LOG_ENV, statusCoverage } from './response-log.js';
import { ensureS3Server } from './s3-build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
  }
}

let server: PostgresServer | undefined;
let dataDir: string | undefined;
let responseLogDir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  // First run on a machine builds MinIO from its Go module (minutes); later runs find it cached.
  const started = Date.now();
  const s3Bin = await ensureS3Server({ onOutput: (line) => console.log(line) });
  console.log(`S3 test server ready in ${s3Bin} (${((Date.now() - started) / 1000).toFixed(1)} s)`);

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

  // Every server the tests start inherits this and notes the statuses it answers.
  const logRoot = join(process.cwd(), '.cache', 'test-responses');
  mkdirSync(logRoot, { recursive: true });
  responseLogDir = mkdtempSync(join(logRoot, 'run-'));
  process.env[RESPONSE_LOG_ENV] = responseLogDir;
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  if (responseLogDir) await checkObservedStatuses(responseLogDir);
}

/** Fails the run when a test saw a status that its operation does not declare in the document. */
async function checkObservedStatuses(dir: string): Promise<void> {
  const log = readResponseLog(dir);
  rmSync(dir, { recursive: true, force: true });
  const document = (await buildOpenApiDocument(GRAPHDOCK_VERSION)) as Parameters<
    typeof statusCoverage
  >[0];
  const coverage = statusCoverage(document, log);
  console.log(
    `OpenAPI status coverage: ${coverage.checked} distinct (operation, status) pairs observed, ` +
      `${coverage.undeclared.length} not declared`,
  );
  if (coverage.undeclared.length > 0) {
    // vitest only logs an error thrown here: the exit code is what fails the run.
    process.exitCode = 1;
    throw new Error(
      `statuses the tests observed that the OpenAPI document does not declare:\n  ${coverage.undeclared.join('\n  ')}`,
    );
  }
}

export { TEMPLATE_DB };
