// The image of a user's graphs, as `graphdock dockerfile` and `graphdock build` make it: the
// project directory of a langgraph.json on top of the Graphdock image, laid out as the official
// CLI lays out a JS project (`/deps/<directory name>`, its package manager's install, that
// directory as the working directory), serving the config with `graphdock runtime`.
import { existsSync, readFileSync } from 'node:fs';
import { basename, isAbsolute, relative, resolve } from 'node:path';
import type { LanggraphConfig } from '../runtime/config/index.js';

/** The major of the Node.js in the Graphdock image (the Dockerfile's NODE_VERSION). */
export const IMAGE_NODE_MAJOR = 24;
/** The oldest `node_version` the official CLI accepts. */
const MIN_NODE_MAJOR = 20;
/** The image's non-root user (the Dockerfile's USER), restored after the install steps. */
export const IMAGE_USER = '1000:1000';
const JS_GRAPH = /\.(ts|mts|cts|js|mjs|cjs)$/;

export class ImageConfigError extends Error {
  override name = 'ImageConfigError';
}

export interface ProjectImagePlan {
  /** The directory holding langgraph.json, copied whole into the image. */
  sourceDir: string;
  baseImage: string;
  /** `/deps/<name of sourceDir>`: the project's place in the image and the working directory. */
  projectDir: string;
  /** The command installing the project's packages in projectDir; none without a package.json. */
  install: string | undefined;
  dockerfileLines: string[];
  cmd: string[];
}

export interface PlanOptions {
  /** Absolute path of the langgraph.json. */
  configPath: string;
  config: LanggraphConfig;
  /** The Graphdock image to build on; `base_image` of the config, else `graphdock:<version>`. */
  baseImage?: string | undefined;
  graphdockVersion: string;
}

function readPackageJson(dir: string): Record<string, unknown> | undefined {
  const path = resolve(dir, 'package.json');
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new ImageConfigError(`${path}: not valid JSON: ${(err as Error).message}`);
  }
}

/** The install command of the project's package manager, chosen as the official CLI chooses it. */
function installCommand(dir: string, pkg: Record<string, unknown>): string {
  const has = (file: string) => existsSync(resolve(dir, file));
  // Node 24 ships corepack; it runs the yarn or pnpm release the project pins.
  if (has('yarn.lock')) return 'corepack yarn install --frozen-lockfile';
  if (has('pnpm-lock.yaml')) return 'corepack pnpm i --frozen-lockfile';
  if (has('package-lock.json')) return 'npm ci';
  const declared =
    typeof pkg.packageManager === 'string'
      ? pkg.packageManager.replace(/^\^/, '').split('@')[0]
      : (pkg.devEngines as { packageManager?: { name?: unknown } } | undefined)?.packageManager
          ?.name;
  if (has('bun.lockb') || has('bun.lock') || declared === 'bun')
    throw new ImageConfigError('bun projects are not supported: the Graphdock image has no bun');
  if (declared === 'yarn') return 'corepack yarn install';
  if (declared === 'pnpm') return 'corepack pnpm i';
  return 'npm i';
}

function checkNodeVersion(version: string | undefined): void {
  if (version === undefined) return;
  if (!/^\d+$/.test(version))
    throw new ImageConfigError(
      `node_version must be a major version only (e.g. "20"), got "${version}"`,
    );
  const major = Number(version);
  if (major < MIN_NODE_MAJOR)
    throw new ImageConfigError(
      `node_version ${version} is not supported: the minimum is ${MIN_NODE_MAJOR}`,
    );
  // The one image runs one Node.js; code written for an older major runs on it.
  if (major > IMAGE_NODE_MAJOR)
    throw new ImageConfigError(
      `node_version ${version} is newer than the Graphdock image's Node.js ${IMAGE_NODE_MAJOR}`,
    );
}

/** Local `dependencies` must lie inside the project directory: only that directory is copied. */
function checkDependencies(dir: string, dependencies: string[] | undefined): void {
  for (const dep of dependencies ?? []) {
    if (!dep.startsWith('.') && !isAbsolute(dep)) continue; // a package: package.json has it
    const rel = relative(dir, resolve(dir, dep));
    if (rel.startsWith('..') || isAbsolute(rel))
      throw new ImageConfigError(
        `dependency "${dep}" is outside ${dir}, the directory the image copies`,
      );
  }
}

export function planProjectImage(options: PlanOptions): ProjectImagePlan {
  const { config, configPath } = options;
  const sourceDir = resolve(configPath, '..');
  const python = Object.entries(config.graphs).filter(
    ([, spec]) => !JS_GRAPH.test((typeof spec === 'string' ? spec : spec.path).split(':')[0]!),
  );
  if (python.length)
    throw new ImageConfigError(
      `graphdock serves LangGraph.js graphs only; not a JS/TS module: ${python.map(([id]) => id).join(', ')}`,
    );
  if (config.python_version !== undefined)
    throw new ImageConfigError('python_version is set: graphdock serves LangGraph.js graphs only');
  checkNodeVersion(config.node_version);
  checkDependencies(sourceDir, config.dependencies);
  const pkg = readPackageJson(sourceDir);
  const projectDir = `/deps/${basename(sourceDir)}`;
  return {
    sourceDir,
    baseImage: options.baseImage ?? config.base_image ?? `graphdock:${options.graphdockVersion}`,
    projectDir,
    install: pkg ? installCommand(sourceDir, pkg) : undefined,
    dockerfileLines: config.dockerfile_lines ?? [],
    cmd: ['runtime', '--config', `${projectDir}/${basename(configPath)}`],
  };
}

/** The Dockerfile of a plan; its build context is `plan.sourceDir`. */
export function renderDockerfile(plan: ProjectImagePlan): string {
  const lines = [
    '# Generated by `graphdock dockerfile`: the graphs of this project on the Graphdock image.',
    `FROM ${plan.baseImage}`,
    '',
    // The Graphdock image runs as a non-root user; the project's own steps run as root.
    'USER root',
    ...(plan.dockerfileLines.length ? [...plan.dockerfileLines, ''] : []),
    `ADD . ${plan.projectDir}`,
    ...(plan.install ? [`RUN cd ${plan.projectDir} && ${plan.install}`] : []),
    '',
    `WORKDIR ${plan.projectDir}`,
    `USER ${IMAGE_USER}`,
    `CMD ${JSON.stringify(plan.cmd)}`,
  ];
  return `${lines.join('\n')}\n`;
}
