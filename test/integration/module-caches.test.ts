// The module loader's caches of the compiled build (bin/module-caches.mjs) on the image's Node.js:
// `graphdock warm-up` fills V8's compile cache beside the build (as the image's build does), a
// runtime started after it compiles its modules from that cache and serves runs, a runtime whose
// cache folder cannot be created serves runs without one, and the resolution cache loads exactly
// the modules Node.js alone loads while asking Node to resolve far fewer imports.
import { Client } from '@langchain/langgraph-sdk';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildProduct } from '../../scripts/build.js';
import { imageNode, imageNodeFlags } from '../../scripts/image-node.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { REPO_ROOT, startServer } from '../support/server.js';

const CONFIG = join(REPO_ROOT, 'test', 'fixtures', 'js-graph', 'langgraph.json');
mkdirSync(join(REPO_ROOT, '.cache'), { recursive: true });
// Under the checkout, so the externals resolve from its node_modules as /app's do in the image.
const outDir = mkdtempSync(join(REPO_ROOT, '.cache', 'module-caches-'));
const cacheDir = join(outDir, 'compile-cache');
const entry = join(outDir, 'bin', 'graphdock.mjs');
/** This process's environment without Node's own compile cache settings. */
const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^NODE_(DISABLE_)?COMPILE_CACHE$/.test(k)),
);

let db: TestDatabase;
beforeAll(async () => {
  await buildProduct({ outDir });
  db = await createTestDatabase(inject('pgAdminUrl'));
}, 300_000);
afterAll(async () => {
  await db?.drop();
  rmSync(outDir, { recursive: true, force: true });
});

/** Starts the build's runtime with Node's compile cache log on; returns what it logged and a run's answer. */
async function startAndRun(): Promise<{ log: string; messages: string[] }> {
  let log = '';
  const server = await startServer({
    databaseUrl: db.url,
    config: CONFIG,
    node: { binary: imageNode(), flags: imageNodeFlags() },
    entry,
    env: {
      NODE_COMPILE_CACHE: undefined,
      NODE_DISABLE_COMPILE_CACHE: undefined,
      NODE_DEBUG_NATIVE: 'COMPILE_CACHE',
    },
    onOutput: (chunk) => (log += chunk),
  });
  try {
    const client = new Client({ apiUrl: server.url, apiKey: null });
    const thread = await client.threads.create();
    const result = (await client.runs.wait(thread.thread_id, 'echo', {
      input: { messages: [{ role: 'user', content: 'hi' }] },
    })) as { messages: { content: string }[] };
    return { log, messages: result.messages.map((m) => m.content) };
  } finally {
    await server.stop();
  }
}

describe('the compiled build’s module caches', () => {
  it('warm-up fills the compile cache beside the build, and a runtime start compiles from it', async () => {
    rmSync(cacheDir, { recursive: true, force: true });
    const warm = spawnSync(
      imageNode(),
      [...imageNodeFlags(), entry, 'warm-up', '--config', CONFIG],
      { env: { ...env, LOG_LEVEL: 'warn' }, encoding: 'utf8' },
    );
    expect(warm.status, warm.stderr).toBe(0);
    // One folder per Node.js release and user id, one file per compiled module.
    const [sub, ...others] = readdirSync(cacheDir);
    expect(others).toEqual([]);
    expect(readdirSync(join(cacheDir, sub!)).length).toBeGreaterThan(500);

    const { log, messages } = await startAndRun();
    expect(messages).toEqual(['hi', 'echo: hi']);
    const accepted = (url: string) => log.includes(`code cache for ESM ${url} was accepted`);
    expect(accepted(pathToFileURL(join(outDir, 'cli', 'main.js')).href)).toBe(true);
    // Resolved through links, as Node.js names the modules it loads.
    const langgraph = join(
      realpathSync(join(REPO_ROOT, 'node_modules')),
      '@langchain',
      'langgraph',
    );
    expect(accepted(pathToFileURL(join(langgraph, 'dist', 'index.js')).href)).toBe(true);
    expect(log.match(/was accepted/g)?.length ?? 0).toBeGreaterThan(500);
  }, 120_000);

  it('a runtime whose compile cache folder cannot be created starts and serves without one', async () => {
    rmSync(cacheDir, { recursive: true, force: true });
    // A file where the folder would be: not creatable, whatever the user (tests run as root).
    writeFileSync(cacheDir, '');
    try {
      const { log, messages } = await startAndRun();
      expect(log).toContain('Cannot create cache directory');
      expect(messages).toEqual(['hi', 'echo: hi']);
    } finally {
      rmSync(cacheDir, { force: true });
    }
  }, 120_000);

  it('the resolution cache loads the very modules Node.js alone loads, with fewer resolutions', () => {
    // Records what reaches Node's resolution (hooks registered earlier run later) and every
    // module loaded, then imports the LangChain stack as a runtime does.
    const script = join(outDir, 'resolutions.mjs');
    writeFileSync(
      script,
      `import { registerHooks } from 'node:module';
const loaded = new Set(); let resolved = 0;
registerHooks({
  resolve: (s, c, next) => { resolved++; return next(s, c); },
  load: (u, c, next) => { loaded.add(u); return next(u, c); },
});
const { enableResolutionCache } = await import(${JSON.stringify(pathToFileURL(join(outDir, 'bin', 'module-caches.mjs')).href)});
const on = enableResolutionCache(process.env);
await import('@langchain/langgraph');
await import('@langchain/langgraph-checkpoint-postgres');
console.log(JSON.stringify({ on, resolved, loaded: [...loaded].sort() }));
`,
    );
    const run = (cache: boolean) => {
      const out = spawnSync(imageNode(), [script], {
        cwd: REPO_ROOT,
        env: { ...env, GRAPHDOCK_RESOLUTION_CACHE: cache ? undefined : 'false' },
        encoding: 'utf8',
      });
      expect(out.status, out.stderr).toBe(0);
      return JSON.parse(out.stdout) as { on: boolean; resolved: number; loaded: string[] };
    };
    const without = run(false);
    const cached = run(true);
    expect([without.on, cached.on]).toEqual([false, true]);
    expect(cached.loaded.length).toBeGreaterThan(500);
    expect(cached.loaded).toEqual(without.loaded);
    expect(cached.resolved).toBeLessThan(without.resolved * 0.6);
  }, 120_000);
});
