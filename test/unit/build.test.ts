// The compiled product (`npm run build`, what the image runs) must hold every module the
// sources import: a context folder left out of the build, or out of the Dockerfile's build
// stage, would only show when a pod crashes at start.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PRODUCT_DIRS, buildProduct } from '../../scripts/build.js';

const root = resolve(import.meta.dirname, '../..');
const outDir = mkdtempSync(join(tmpdir(), 'gd-build-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('the compiled build', () => {
  it('bundles every product folder and keeps the packages shared with user graphs external', async () => {
    const { files, inputs } = await buildProduct({ outDir });
    expect(files).toBeGreaterThan(100);
    for (const dir of PRODUCT_DIRS.filter((d) => d !== 'bin'))
      expect(
        inputs.some((f) => f.startsWith(`${dir}/`)),
        dir,
      ).toBe(true);
    // A user's graph imports these itself: the runtime must load the same modules, not a copy.
    // pg: the LangGraph checkpointer package requires it too, one copy.
    for (const shared of ['@langchain/', 'langsmith/', 'zod/', 'pg/'])
      expect(inputs.filter((f) => f.includes(`node_modules/${shared}`))).toEqual([]);
    // Bundled: the runtime's server packages.
    for (const bundled of ['fastify/', 'pino/', 'prom-client/', '@fastify/swagger-ui/'])
      expect(
        inputs.some((f) => f.includes(`node_modules/${bundled}`)),
        bundled,
      ).toBe(true);
    // The files modules find beside their sources: entry script, migrations, schema worker.
    for (const file of [
      'bin/graphdock.mjs',
      'cli/main.js',
      'runtime/graphs/typed-schemas-worker.js',
      'package.json',
    ])
      expect(existsSync(join(outDir, file)), file).toBe(true);
    for (const dir of ['runtime', 'api', 'traces', 'exports'])
      expect(readdirSync(join(outDir, dir, 'migrations')).length, dir).toBeGreaterThan(0);
  }, 60_000);

  it("gives the Dockerfile's build stage every product folder", () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    const copied = [...dockerfile.matchAll(/^COPY (\w+) \.\/\1$/gm)].map((m) => m[1]);
    expect(PRODUCT_DIRS.filter((d) => !copied.includes(d))).toEqual([]);
  });
});
