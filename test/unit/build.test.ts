// The compiled product (`npm run build`, what the image runs) must hold every module the
// sources import: a context folder left out of the build, or out of the Dockerfile's build
// stage, would only show when a pod crashes at start.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PRODUCT_DIRS, buildProduct, unresolvedImports } from '../../scripts/build.js';

const root = resolve(import.meta.dirname, '../..');
const outDir = mkdtempSync(join(tmpdir(), 'gd-build-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('the compiled build', () => {
  it('compiles every product folder, with every relative import resolving', async () => {
    const { files } = await buildProduct({ outDir });
    expect(files).toBeGreaterThan(100);
    expect(unresolvedImports(outDir)).toEqual([]);
    for (const dir of PRODUCT_DIRS)
      expect(
        readdirSync(join(outDir, dir), { recursive: true }).filter((f) =>
          /\.m?js$/.test(String(f)),
        ),
      ).not.toEqual([]);
  }, 60_000);

  it("gives the Dockerfile's build stage every product folder", () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    const copied = [...dockerfile.matchAll(/^COPY (\w+) \.\/\1$/gm)].map((m) => m[1]);
    expect(PRODUCT_DIRS.filter((d) => !copied.includes(d))).toEqual([]);
  });
});
