// `npm run build`: the product as plain JavaScript in dist/ (git-ignored), laid out as the
// sources are (dist/cli, dist/runtime, ..., dist/bin/graphdock.mjs), so the image runs it with
// `node` and no TypeScript loader. Type checking stays `npm run typecheck`'s job.
//
// The compiler is esbuild, one file in, one file out (no bundling): it is the transform tsx
// applies to the same sources in `graphdock dev` and in every test (the same esbuild release,
// deduplicated in the lockfile), so the image runs exactly the code the suite exercises; and it
// takes about 1 s where `tsc` takes 30 s or more on these machines. Not bundling keeps
// `import.meta.dirname` (the migrations) and the lazy `import()`s of the CLI and the runtime
// working unchanged.
//   npx tsx scripts/build.ts [--out-dir <dir>]
import { build } from 'esbuild';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const REPO_ROOT = resolve(import.meta.dirname, '..');
/** The product's folders; tests, benchmarks, scripts and examples stay out of dist/. */
export const PRODUCT_DIRS = [
  'bin',
  'cli',
  'common',
  'runtime',
  'api',
  'traces',
  'exports',
  'operator',
];
/** Files the code reads at run time next to its modules (the SQL migrations). */
const ASSET = /\.sql$/;

/** Every file of the build's input, relative to the repository (sorted). */
export function buildInputs(root = REPO_ROOT): string[] {
  const files = ['package.json', 'tsconfig.json', 'scripts/build.ts'];
  for (const dir of PRODUCT_DIRS)
    for (const entry of readdirSync(join(root, dir), { recursive: true, withFileTypes: true }))
      if (entry.isFile())
        files.push(
          join(entry.parentPath, entry.name)
            .slice(root.length + 1)
            .replace(/\\/g, '/'),
        );
  return files.sort();
}

export async function buildProduct(options: { outDir?: string; root?: string } = {}) {
  const root = options.root ?? REPO_ROOT;
  const outDir = resolve(root, options.outDir ?? 'dist');
  rmSync(outDir, { recursive: true, force: true });
  const inputs = buildInputs(root).filter((f) => PRODUCT_DIRS.includes(f.split('/')[0]!));
  const sources = inputs.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  await build({
    absWorkingDir: root,
    entryPoints: sources,
    outdir: outDir,
    outbase: '.',
    bundle: false,
    platform: 'node',
    format: 'esm',
    // The oldest Node.js the package supports (engines); the image runs a newer one.
    target: 'node20.19',
    tsconfig: join(root, 'tsconfig.json'),
    logLevel: 'warning',
  });
  // The entry script is JavaScript already; the migrations are read beside their modules.
  for (const file of inputs.filter((f) => f.endsWith('.mjs') || ASSET.test(f))) {
    mkdirSync(join(outDir, file, '..'), { recursive: true });
    cpSync(join(root, file), join(outDir, file));
  }
  // dist/ is a package root of its own: its modules are ES modules, and `../package.json` from
  // them gives the version the commands report.
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  writeFileSync(
    join(outDir, 'package.json'),
    `${JSON.stringify({ name: pkg.name, version: pkg.version, private: true, type: 'module' }, null, 2)}\n`,
  );
  const missing = unresolvedImports(outDir);
  if (missing.length)
    throw new Error(
      `build: relative imports with no compiled module (a product folder missing from ` +
        `PRODUCT_DIRS?):\n  ${missing.join('\n  ')}`,
    );
  return { outDir, files: sources.length };
}

/** Relative imports in the compiled output that point at no file: `from '../x/y.js'` and `import('./z.js')`. */
export function unresolvedImports(outDir: string): string[] {
  const missing: string[] = [];
  const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;
  for (const entry of readdirSync(outDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.m?js$/.test(entry.name)) continue;
    const file = join(entry.parentPath, entry.name);
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(specifier))
      if (!existsSync(resolve(entry.parentPath, spec!)))
        missing.push(`${file.slice(outDir.length + 1)}: ${spec}`);
  }
  return missing;
}

if (import.meta.filename === resolve(process.argv[1] ?? '')) {
  const { values } = parseArgs({ options: { 'out-dir': { type: 'string' } } });
  const started = Date.now();
  const { outDir, files } = await buildProduct({ outDir: values['out-dir'] });
  process.stderr.write(
    `build: ${files} modules to ${outDir} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
}
