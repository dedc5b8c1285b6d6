// The Node.js the image runs (the Dockerfile's NODE_VERSION and ENTRYPOINT flags), for tests and
// benchmarks that must run Graphdock as production does. When the machine's own node is another
// version, that release is fetched once from the npm registry (the `node-<platform>-<arch>`
// packages carry the official binaries) into a cache outside the clone, like the cluster tools.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const REPO_ROOT = join(import.meta.dirname, '..');
const DOCKERFILE = join(REPO_ROOT, 'Dockerfile');

/** The exact Node.js release of the image: `ARG NODE_VERSION=<x.y.z>` in the Dockerfile. */
export function imageNodeVersion(): string {
  const version = /^ARG NODE_VERSION=(\d+\.\d+\.\d+)$/m.exec(readFileSync(DOCKERFILE, 'utf8'))?.[1];
  if (!version) throw new Error('Dockerfile has no ARG NODE_VERSION=<major.minor.patch>');
  return version;
}

/**
 * The node flags of the image's ENTRYPOINT (the `node ... /app/bin/graphdock.mjs` line of the
 * Dockerfile), so tests and benchmarks start Graphdock with them.
 */
export function imageNodeFlags(): string[] {
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(readFileSync(DOCKERFILE, 'utf8'))?.[1];
  if (!entrypoint) throw new Error('Dockerfile has no ENTRYPOINT in exec form');
  const argv = JSON.parse(entrypoint) as string[];
  const script = argv.findIndex((a) => a.endsWith('/bin/graphdock.mjs'));
  if (argv[0] !== 'node' || script < 0)
    throw new Error(`unexpected ENTRYPOINT ${entrypoint}: want node [flags] .../bin/graphdock.mjs`);
  return argv.slice(1, script);
}

function cacheRoot(): string {
  return (
    process.env.GRAPHDOCK_TOOLS_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'graphdock', 'tools')
  );
}

/**
 * A path to the image's node binary: this process's own when it is that release, else the
 * cached download (fetched now if missing; safe when several processes ask at once, since the
 * finished folder appears by one atomic rename).
 */
export function imageNode(): string {
  const version = imageNodeVersion();
  if (process.version === `v${version}`) return process.execPath;
  const pkg = `node-${process.platform}-${process.arch}`;
  const dir = join(cacheRoot(), `${pkg}-${version}`);
  const binary = join(dir, 'package', 'bin', 'node');
  if (existsSync(binary)) return binary;
  mkdirSync(cacheRoot(), { recursive: true });
  const staging = mkdtempSync(`${dir}.partial-`);
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const tarball = execFileSync(npm, ['pack', `${pkg}@${version}`, '--silent'], {
      cwd: staging,
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .at(-1)!;
    execFileSync('tar', ['xzf', tarball], { cwd: staging });
    rmSync(join(staging, tarball));
    try {
      renameSync(staging, dir);
    } catch (err) {
      // Another process finished first: its copy is as good as ours.
      if (!existsSync(binary)) throw err;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  const reported = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  if (reported !== `v${version}`) throw new Error(`${binary} reports ${reported}, not v${version}`);
  return binary;
}

/**
 * Runs this script again under the image's node when the current one is another release, and
 * exits with its status; returns when already there. A benchmark's load generator and in-process
 * ceiling then run on the same Node.js as the servers it measures.
 */
export function rerunUnderImageNode(): void {
  if (process.version === `v${imageNodeVersion()}`) return;
  const node = imageNode();
  console.log(`Running under the image's Node.js ${imageNodeVersion()} (${node})`);
  const result = spawnSync(node, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
  });
  process.exit(result.status ?? 1);
}
