// Graphdock's images as image archives, assembled without a container engine: for machines with
// no Docker (the test machines), whose containerd loads them with
// `ctr -n k8s.io images import <archive>`.
//
//   buildGraphdockImageArchive()             the repository's Dockerfile
//   buildImageArchive({ config })            `graphdock dockerfile` of a langgraph.json on it
//   buildPostgresImageArchive()              PostgreSQL 15 for the cluster (images/postgres-*.sh)
//
// Layers: a Debian root filesystem made by mmdebstrap from Debian's repositories (images/rootfs.sh)
// with the image's Node.js (scripts/image-node.ts), the production node_modules (`npm ci
// --omit=dev`), the compiled modules (`npm run build`) and the files the Dockerfile copies, then
// the project. go-containerregistry's
// `crane` (built by build-image-tools.sh) writes every layer, manifest and archive; a local
// `crane registry serve` on 127.0.0.1 holds the intermediate images while their config is set.
// Each step's result is cached under ~/.cache/graphdock/images by the hash of its inputs.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { freePort } from '../../common/db/index.js';
import { IMAGE_USER, planProjectImage } from '../../cli/dockerfile.js';
import { loadLanggraphConfig } from '../../runtime/config/index.js';
import { buildProduct } from '../../scripts/build.js';
import { imageNode, imageNodeVersion } from '../../scripts/image-node.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const HERE = import.meta.dirname;
const ROOTFS_SCRIPT = join(HERE, 'images', 'rootfs.sh');
const POSTGRES_ENTRYPOINT = join(HERE, 'images', 'postgres-entrypoint.sh');
const TOOLS_SCRIPT = join(HERE, 'build-image-tools.sh');
/** Bumped when this file changes what it writes for the same inputs. */
const FORMAT = 1;
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface ImageArchive {
  /** A docker-archive tarball (`docker save`'s format), for `ctr images import <archive>`. */
  archive: string;
  /** The name the archive gives the image, e.g. `graphdock.local/examples:1f0c2a9d3e4b`. */
  ref: string;
  /** The image config set on it (the Dockerfile's instructions). */
  config: ImageConfig;
}

export interface ImageConfig {
  entrypoint: string[];
  cmd: string[];
  env: Record<string, string>;
  user: string;
  workdir: string;
  exposedPorts: string[];
}

export interface BuildOptions {
  /** Progress lines (steps and their timings). */
  log?: (line: string) => void;
}

// ---------------------------------------------------------------------------------------------
// Small helpers: cache folder, hashing, child processes.

export function imagesCacheDir(): string {
  return (
    process.env.GRAPHDOCK_IMAGES_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'graphdock', 'images')
  );
}

function sha256(...parts: (string | Buffer)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex');
}

function fileSha256(path: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolvePromise(hash.digest('hex')));
  });
}

/** Runs a command; rejects with the tail of its output when it fails. */
function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let tail = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      tail = (tail + chunk.toString()).slice(-6_000);
    });
    child.stderr.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-6_000)));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolvePromise(stdout);
      else
        reject(
          new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${tail}`),
        );
    });
  });
}

/**
 * The file at `path`, made by `produce(tmp)` when missing. The result appears by one rename, so
 * a killed build leaves nothing half-written and concurrent builders both end with a whole file.
 */
async function cached(
  path: string,
  produce: (tmp: string) => Promise<void>,
  log: (line: string) => void,
  what: string,
): Promise<string> {
  if (existsSync(path)) return path;
  mkdirSync(join(path, '..'), { recursive: true });
  // Same extension as the result: some tools (mmdebstrap) choose their output format by it.
  const tmp = join(path, '..', `.partial-${process.pid}-${Date.now()}-${basename(path)}`);
  const started = Date.now();
  try {
    await produce(tmp);
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  log(`${what}: built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return path;
}

/** A tar file of `dir`'s contents as a layer: root-owned, sorted, timestamps zeroed. */
async function tarLayer(dir: string, out: string): Promise<void> {
  await run('tar', [
    '--create',
    `--file=${out}`,
    '--sort=name',
    '--mtime=@0',
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--mode=u+rwX,go+rX,go-w',
    `--directory=${dir}`,
    '.',
  ]);
}

/** Installs Debian packages that are missing (as root; CI is root on a fresh machine). */
export async function ensureDebianPackages(
  packages: string[],
  log: (line: string) => void = () => {},
): Promise<void> {
  const missing: string[] = [];
  for (const name of packages) {
    const status = await run('dpkg-query', ['-W', '-f=${db:Status-Status}', name]).catch(() => '');
    if (status.trim() !== 'installed') missing.push(name);
  }
  if (!missing.length) return;
  if (process.getuid?.() !== 0)
    throw new Error(`missing Debian packages (install them as root): ${missing.join(' ')}`);
  const started = Date.now();
  // Another process may hold dpkg's lock (a concurrent install); wait for it.
  const install = ['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '--no-install-recommends'];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    await run('apt-get', [...install, ...missing], { env });
  } catch {
    // A fresh machine's package lists may be missing or stale.
    await run('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'update'], { env });
    await run('apt-get', [...install, ...missing], { env });
  }
  log(`apt-get install ${missing.join(' ')}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

let craneBin: Promise<string> | undefined;
/** The crane binary (built once by build-image-tools.sh, or GRAPHDOCK_CRANE). */
export function crane(): Promise<string> {
  if (process.env.GRAPHDOCK_CRANE) return Promise.resolve(process.env.GRAPHDOCK_CRANE);
  craneBin ??= run('bash', [TOOLS_SCRIPT]).then((out) =>
    join(out.trim().split('\n').pop()!, 'crane'),
  );
  return craneBin;
}

function platform(): string {
  const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch as string];
  if (!arch) throw new Error(`no image platform for ${process.arch}`);
  return `linux/${arch}`;
}

// ---------------------------------------------------------------------------------------------
// The Dockerfile, read so that the archive's config and layers follow it.

interface DockerfilePlan {
  config: ImageConfig;
  /** What the final stage COPYs from the build context (its sources). */
  sources: string[];
}

/** The one RUN of the final stage, which the sources layer mirrors (the /deps link). */
const MIRRORED_RUN = 'RUN mkdir /deps && ln -s /app/node_modules /deps/node_modules';
/**
 * RUNs of the final stage left out: filling V8's compile cache (bin/module-caches.mjs) needs the
 * image's Node.js running at the image's paths as its user. An image assembled here starts
 * without that cache, as a runtime whose cache folder cannot be created does (it is slower to
 * start, and otherwise the same).
 */
const UNMIRRORED_RUNS = new Set([
  'RUN mkdir /app/compile-cache && chown 1000:1000 /app/compile-cache',
  'RUN node --no-memory-reducer /app/bin/graphdock.mjs warm-up --config /app/examples/langgraph.json',
]);

export function readDockerfile(path = join(REPO, 'Dockerfile')): DockerfilePlan {
  const lines = readFileSync(path, 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const finalStage = lines.slice(lines.findLastIndex((l) => /^FROM\s/i.test(l)) + 1);
  const config: ImageConfig = {
    entrypoint: [],
    cmd: [],
    env: { PATH: DEFAULT_PATH },
    user: '',
    workdir: '/',
    exposedPorts: [],
  };
  const sources: string[] = [];
  let nodeModules = false;
  let compiled = false;
  for (const line of finalStage) {
    const [instruction, ...rest] = line.split(/\s+/);
    const value = line.slice(instruction!.length).trim();
    switch (instruction!.toUpperCase()) {
      case 'WORKDIR':
        config.workdir = value;
        break;
      case 'ENV':
        for (const pair of rest) {
          const eq = pair.indexOf('=');
          if (eq < 1) throw new Error(`Dockerfile: ENV in key=value form only: ${line}`);
          config.env[pair.slice(0, eq)] = pair.slice(eq + 1);
        }
        break;
      case 'USER':
        config.user = value;
        break;
      case 'EXPOSE':
        // As Docker records them: a port without a protocol is TCP.
        config.exposedPorts.push(...rest.map((p) => (p.includes('/') ? p : `${p}/tcp`)));
        break;
      case 'ENTRYPOINT':
        config.entrypoint = JSON.parse(value) as string[];
        break;
      case 'CMD':
        config.cmd = JSON.parse(value) as string[];
        break;
      case 'COPY':
        if (rest[0] === '--from=deps' && rest[1] === '/app/node_modules') nodeModules = true;
        else if (rest[0] === '--from=build' && rest[1] === '/app/dist' && rest[2] === './')
          compiled = true;
        else if (rest[0]!.startsWith('--from='))
          throw new Error(`Dockerfile: unexpected COPY from another stage: ${line}`);
        else sources.push(...rest.slice(0, -1));
        break;
      case 'RUN':
        if (line !== MIRRORED_RUN && !UNMIRRORED_RUNS.has(line))
          throw new Error(`Dockerfile: a RUN that test/cluster/images.ts does not mirror: ${line}`);
        break;
      default:
        throw new Error(
          `Dockerfile: an instruction test/cluster/images.ts does not mirror: ${line}`,
        );
    }
  }
  if (!nodeModules || !compiled || config.workdir !== '/app' || !config.entrypoint.length)
    throw new Error('Dockerfile: the final stage no longer has the layout images.ts assembles');
  return { config, sources };
}

// ---------------------------------------------------------------------------------------------
// A local registry on 127.0.0.1, for `crane mutate` (which works on images in a registry).

interface Registry {
  host: string;
  stop(): void;
}

async function startRegistry(): Promise<Registry> {
  const bin = await crane();
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child: ChildProcess = spawn(
      bin,
      ['registry', 'serve', '--address', `127.0.0.1:${port}`],
      {
        stdio: 'ignore',
      },
    );
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const stop = () => void child.kill('SIGTERM');
    process.once('exit', stop);
    for (let i = 0; i < 100; i++) {
      const up = await fetch(`http://127.0.0.1:${port}/v2/`).then(
        (r) => r.ok,
        () => false,
      );
      if (up)
        return {
          host: `127.0.0.1:${port}`,
          stop: () => {
            process.off('exit', stop);
            stop();
          },
        };
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    stop();
    await exited;
    if (attempt === 2) throw new Error('crane registry serve did not start');
  }
}

/** `crane mutate` of `base` (an archive): appends `layer` if any, sets `config`; writes `out`. */
async function mutateArchive(
  base: string,
  layer: string | undefined,
  config: Partial<ImageConfig>,
  ref: string,
  out: string,
): Promise<void> {
  const bin = await crane();
  const registry = await startRegistry();
  try {
    const staged = `${registry.host}/staging:${Date.now()}`;
    await run(bin, ['push', '--insecure', base, staged]);
    const args = ['mutate', '--insecure', staged, ...(layer ? ['--append', layer] : [])];
    for (const arg of config.entrypoint ?? []) args.push(`--entrypoint=${arg}`);
    for (const arg of config.cmd ?? []) args.push(`--cmd=${arg}`);
    for (const [key, value] of Object.entries(config.env ?? {})) args.push(`--env=${key}=${value}`);
    if (config.user) args.push(`--user=${config.user}`);
    if (config.workdir) args.push(`--workdir=${config.workdir}`);
    for (const port of config.exposedPorts ?? []) args.push(`--exposed-ports=${port}`);
    args.push(`--set-platform=${platform()}`, '--tag', ref, '--output', out);
    await run(bin, args);
  } finally {
    registry.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Layers.

async function rootfsLayer(kind: 'node' | 'postgres', log: (l: string) => void): Promise<string> {
  await ensureDebianPackages(['mmdebstrap'], log);
  const inputs = [String(FORMAT), kind, readFileSync(ROOTFS_SCRIPT, 'utf8')];
  if (kind === 'node') inputs.push(imageNodeVersion());
  else inputs.push(readFileSync(POSTGRES_ENTRYPOINT, 'utf8'));
  const key = sha256(...inputs).slice(0, 16);
  return cached(
    join(imagesCacheDir(), 'layers', `rootfs-${kind}-${key}.tar`),
    async (tmp) => {
      const args = [ROOTFS_SCRIPT, kind, tmp];
      if (kind === 'node') args.push(imageNode());
      await run('bash', args);
    },
    log,
    `rootfs (${kind}, Debian bookworm)`,
  );
}

async function nodeModulesLayer(log: (l: string) => void): Promise<{ path: string; key: string }> {
  const files = ['package.json', 'package-lock.json', 'scripts/ensure-install.mjs'];
  const key = sha256(String(FORMAT), ...files.map((f) => readFileSync(join(REPO, f)))).slice(0, 16);
  const path = await cached(
    join(imagesCacheDir(), 'layers', `node-modules-${key}.tar`),
    async (tmp) => {
      const staging = mkdtempSync(`${tmp}-staging-`);
      try {
        for (const f of files) cpSync(join(REPO, f), join(staging, 'app', f));
        await run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'], {
          cwd: join(staging, 'app'),
          env: { ...process.env, NODE_ENV: 'production' },
        });
        // The final stage copies node_modules alone.
        for (const f of ['package.json', 'package-lock.json', 'scripts'])
          rmSync(join(staging, 'app', f), { recursive: true });
        await tarLayer(staging, tmp);
      } finally {
        rmSync(staging, { recursive: true, force: true });
      }
    },
    log,
    'node_modules (npm ci --omit=dev)',
  );
  return { path, key };
}

const SKIPPED = new Set(['node_modules', '.graphdock', '__pycache__', '.git']);
const copyFilter = (src: string) => !SKIPPED.has(basename(src));

/**
 * The compiled modules (`npm run build`, the Dockerfile's build stage) and the other files the
 * Dockerfile copies, at /app, and the /deps link; hashed by content, so any change to the build's
 * output makes another image.
 */
async function sourcesLayer(
  sources: string[],
  dir: string,
): Promise<{ path: string; key: string }> {
  const staging = mkdtempSync(join(dir, 'sources-'));
  const path = `${staging}.tar`;
  try {
    await buildProduct({ outDir: join(staging, 'app') });
    for (const src of sources)
      cpSync(join(REPO, src), join(staging, 'app', src), { recursive: true, filter: copyFilter });
    mkdirSync(join(staging, 'deps'));
    symlinkSync('/app/node_modules', join(staging, 'deps', 'node_modules'));
    await tarLayer(staging, path);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return { path, key: (await fileSha256(path)).slice(0, 16) };
}

// ---------------------------------------------------------------------------------------------
// Images.

/** The repository's Dockerfile as an archive: `graphdock.local/graphdock:<version>-<hash>`. */
export async function buildGraphdockImageArchive(
  options: BuildOptions = {},
): Promise<ImageArchive> {
  const log = options.log ?? (() => {});
  const dockerfile = readDockerfile();
  const rootfs = await rootfsLayer('node', log);
  const modules = await nodeModulesLayer(log);
  const cache = imagesCacheDir();
  const baseKey = sha256(String(FORMAT), basename(rootfs), modules.key).slice(0, 16);
  const base = await cached(
    join(cache, 'archives', `graphdock-base-${baseKey}.tar`),
    async (tmp) => {
      await run(await crane(), [
        'append',
        '-f',
        rootfs,
        '-f',
        modules.path,
        '-t',
        `graphdock.local/graphdock-base:${baseKey}`,
        '-o',
        tmp,
      ]);
    },
    log,
    'graphdock base image (rootfs + node_modules)',
  );
  mkdirSync(join(cache, 'tmp'), { recursive: true });
  const sources = await sourcesLayer(dockerfile.sources, join(cache, 'tmp'));
  try {
    const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      version: string;
    };
    const key = sha256(
      String(FORMAT),
      baseKey,
      sources.key,
      JSON.stringify(dockerfile.config),
    ).slice(0, 12);
    const ref = `graphdock.local/graphdock:${version}-${key}`;
    const archive = await cached(
      join(cache, 'archives', `graphdock-${version}-${key}.tar`),
      (tmp) => mutateArchive(base, sources.path, dockerfile.config, ref, tmp),
      log,
      'graphdock image',
    );
    return { archive, ref, config: dockerfile.config };
  } finally {
    rmSync(sources.path, { force: true });
  }
}

/** A valid repository name from a project directory's name. */
function repositoryName(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '');
  return name || 'project';
}

/**
 * The image `graphdock dockerfile` describes for the project of `config` (a langgraph.json),
 * on the Graphdock image: `graphdock.local/<directory name>:<hash>`. The project's install
 * command runs on this machine (its npm/corepack); `dockerfile_lines` need a container engine.
 */
export async function buildImageArchive(
  options: BuildOptions & { config: string },
): Promise<ImageArchive> {
  const log = options.log ?? (() => {});
  const loaded = loadLanggraphConfig(options.config);
  const graphdock = await buildGraphdockImageArchive(options);
  const plan = planProjectImage({
    configPath: loaded.path,
    config: loaded.config,
    baseImage: graphdock.ref,
    graphdockVersion: '',
  });
  if (plan.dockerfileLines.length)
    throw new Error(
      `${loaded.path}: dockerfile_lines need a container engine (graphdock build); the archive builder cannot run them`,
    );
  const cache = imagesCacheDir();
  mkdirSync(join(cache, 'tmp'), { recursive: true });
  const staging = mkdtempSync(join(cache, 'tmp', 'project-'));
  const layer = `${staging}.tar`;
  try {
    const target = join(staging, plan.projectDir);
    cpSync(plan.sourceDir, target, { recursive: true, filter: copyFilter });
    if (plan.install)
      await run('sh', ['-c', plan.install], {
        cwd: target,
        env: { ...process.env, NODE_ENV: 'production' },
      });
    await tarLayer(staging, layer);
    rmSync(staging, { recursive: true, force: true });
    const config: ImageConfig = {
      ...graphdock.config,
      cmd: plan.cmd,
      workdir: plan.projectDir,
      user: IMAGE_USER,
    };
    const key = sha256(
      String(FORMAT),
      graphdock.ref,
      await fileSha256(layer),
      JSON.stringify(config),
    ).slice(0, 12);
    const name = repositoryName(plan.sourceDir);
    const ref = `graphdock.local/${name}:${key}`;
    const archive = await cached(
      join(cache, 'archives', `${name}-${key}.tar`),
      (tmp) => mutateArchive(graphdock.archive, layer, config, ref, tmp),
      log,
      `image of ${loaded.path}`,
    );
    return { archive, ref, config };
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(layer, { force: true });
  }
}

/**
 * PostgreSQL 15 from Debian's packages: `graphdock.local/postgres:15-<hash>`. Its entrypoint
 * (images/postgres-entrypoint.sh) initialises $PGDATA on first start with the password in
 * $POSTGRES_PASSWORD and listens on every address, port $PGPORT (5432).
 */
export async function buildPostgresImageArchive(options: BuildOptions = {}): Promise<ImageArchive> {
  const log = options.log ?? (() => {});
  const rootfs = await rootfsLayer('postgres', log);
  const passwd = await run('tar', ['-xOf', rootfs, './etc/passwd']);
  const uid = /^postgres:[^:]*:(\d+):(\d+):/m.exec(passwd);
  if (!uid) throw new Error('the postgres root filesystem has no postgres user');
  const config: ImageConfig = {
    entrypoint: ['/usr/local/bin/postgres-entrypoint.sh'],
    cmd: [],
    env: {
      PATH: `/usr/lib/postgresql/15/bin:${DEFAULT_PATH}`,
      PGDATA: '/var/lib/postgresql/data/pgdata',
    },
    user: `${uid[1]}:${uid[2]}`,
    workdir: '/var/lib/postgresql',
    exposedPorts: ['5432/tcp'],
  };
  const key = sha256(String(FORMAT), basename(rootfs), JSON.stringify(config)).slice(0, 12);
  const ref = `graphdock.local/postgres:15-${key}`;
  const cache = imagesCacheDir();
  const archive = await cached(
    join(cache, 'archives', `postgres-15-${key}.tar`),
    async (tmp) => {
      const base = `${tmp}-base.tar`;
      try {
        await run(await crane(), [
          'append',
          '-f',
          rootfs,
          '-t',
          `graphdock.local/postgres-base:${key}`,
          '-o',
          base,
        ]);
        await mutateArchive(base, undefined, config, ref, tmp);
      } finally {
        rmSync(base, { force: true });
      }
    },
    log,
    'postgres image',
  );
  return { archive, ref, config };
}
