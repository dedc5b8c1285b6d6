// The compiled build (`npm run build`, what the image runs) on the image's Node.js: the product
// and its server packages bundled into dist/, the packages a user's graph shares with the runtime
// loaded from node_modules once. A graph in plain JavaScript serves stateful runs (its own
// `StateGraph` with the runtime's checkpointer), and the process resolves one copy of
// `@langchain/langgraph` (the graph's) and none of the bundled packages.
import { Client } from '@langchain/langgraph-sdk';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildProduct } from '../../scripts/build.js';
import { imageNode, imageNodeFlags } from '../../scripts/image-node.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { REPO_ROOT, startServer, type RunningServer } from '../support/server.js';

const PROJECT = join(REPO_ROOT, 'test', 'fixtures', 'js-graph');
// Under the checkout, so the externals resolve from its node_modules as /app's do in the image.
mkdirSync(join(REPO_ROOT, '.cache'), { recursive: true });
const outDir = mkdtempSync(join(REPO_ROOT, '.cache', 'compiled-build-'));
const resolveLog = join(outDir, 'resolved.log');

let db: TestDatabase;
let server: RunningServer;
let client: Client;
beforeAll(async () => {
  await buildProduct({ outDir });
  db = await createTestDatabase(inject('pgAdminUrl'));
  server = await startServer({
    databaseUrl: db.url,
    config: join(PROJECT, 'langgraph.json'),
    node: {
      binary: imageNode(),
      flags: [
        ...imageNodeFlags(),
        '--import',
        join(REPO_ROOT, 'test', 'fixtures', 'resolve-log', 'register.mjs'),
      ],
    },
    entry: join(outDir, 'bin', 'graphdock.mjs'),
    env: { GRAPHDOCK_TEST_RESOLVE_LOG: resolveLog },
  });
  client = new Client({ apiUrl: server.url, apiKey: null });
}, 300_000);
afterAll(async () => {
  await server?.stop();
  await db?.drop();
  rmSync(outDir, { recursive: true, force: true });
});

/** `/…/node_modules/@scope/name` or `/…/node_modules/name` of a resolved file URL. */
function packageRoot(url: string): string | undefined {
  return /^file:\/\/(.*\/node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
}

/** Every resolution the server made so far: importer URL and resolved URL. */
function resolutions(): { from: string; to: string }[] {
  return readFileSync(resolveLog, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [from = '', to = ''] = line.split(' ');
      return { from, to };
    });
}

describe('the compiled build', () => {
  it("serves stateful runs of a user's JavaScript graph with the runtime's checkpointer", async () => {
    const thread = await client.threads.create();
    for (const content of ['first', 'second'])
      await client.runs.wait(thread.thread_id, 'echo', {
        input: { messages: [{ role: 'user', content }] },
      });
    const state = await client.threads.getState<{ messages: { content: string }[] }>(
      thread.thread_id,
    );
    expect(state.values.messages.map((m) => m.content)).toEqual([
      'first',
      'echo: first',
      'second',
      'echo: second',
    ]);
  });

  it('runs the bundle: the graph and the runtime share one @langchain/langgraph, the server packages come from dist/', () => {
    const all = resolutions();
    const bundle = pathToFileURL(outDir).href;
    expect(all.some((r) => r.to.startsWith(`${bundle}/cli/main.js`))).toBe(true);
    const roots = (name: string) =>
      new Set(
        all
          .map((r) => packageRoot(r.to))
          .filter((root): root is string => root?.endsWith(`/node_modules/${name}`) ?? false),
      );
    const langgraph = roots('@langchain/langgraph');
    expect(langgraph.size).toBe(1);
    const graphFile = pathToFileURL(join(PROJECT, 'graph.mjs')).href;
    const fromGraph = all.find(
      (r) => r.from === graphFile && r.to.includes('/@langchain/langgraph/'),
    );
    const fromRuntime = all.find(
      (r) => r.from.startsWith(bundle) && r.to.includes('/@langchain/langgraph/'),
    );
    expect(packageRoot(fromGraph?.to ?? '')).toBe([...langgraph][0]);
    expect(packageRoot(fromRuntime?.to ?? '')).toBe([...langgraph][0]);
    // Bundled into dist/: never resolved from node_modules. A JavaScript graph needs no tsx.
    for (const name of [
      'fastify',
      '@fastify/swagger',
      '@fastify/swagger-ui',
      'pino',
      'prom-client',
      'ajv',
      'yaml',
      'tsx',
    ])
      expect(roots(name), name).toEqual(new Set());
    // External, and shared with the LangGraph checkpointer package.
    expect(roots('pg').size).toBe(1);
  });

  it('serves the OpenAPI document and the docs page with its static files', async () => {
    const openapi = await fetch(`${server.url}/openapi.json`);
    expect(openapi.status).toBe(200);
    expect(((await openapi.json()) as { openapi: string }).openapi).toMatch(/^3\./);
    const docs = await fetch(`${server.url}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('<html');
    const logo = await fetch(`${server.url}/docs/static/logo.svg`);
    expect(logo.status).toBe(200);
    expect(await logo.text()).toContain('<svg');
  });
});
