// `graphdock dockerfile` and `graphdock build`: the image of a project's graphs (cli/dockerfile.ts).
// Entered straight from bin/graphdock.mjs, so that neither loads the runtime.
import { spawn } from 'node:child_process';
import { accessSync, constants, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { parseArgs } from 'node:util';
import { argumentErrorMessage, isArgumentError } from './args.js';
import { ConfigFileError, loadLanggraphConfig } from '../runtime/config/index.js';
import {
  ImageConfigError,
  planProjectImage,
  renderDockerfile,
  type ProjectImagePlan,
} from './dockerfile.js';

const require = createRequire(import.meta.url);
const VERSION = (require('../package.json') as { version: string }).version;

export const DOCKERFILE_USAGE = `Usage: graphdock dockerfile [-c langgraph.json] [--base-image <image>] <save-path>

Writes the Dockerfile of the image serving the graphs of a langgraph.json: the directory holding
it copied to /deps/<directory name>, its packages installed with its package manager, served by
\`graphdock runtime\`. Build it with that directory as the context.

Options:
  -c, --config <path>      langgraph.json (default: ./langgraph.json)
  --base-image <image>     the Graphdock image to build on (default: base_image of the config,
                           else graphdock:${VERSION})
`;

export const BUILD_USAGE = `Usage: graphdock build -t <tag> [-c langgraph.json] [--base-image <image>] [-- <engine args>]

Builds the image of \`graphdock dockerfile\` with docker or podman (the first found on PATH).
Arguments after -- go to \`<engine> build\` as they are.

Options:
  -t, --tag <tag>          the image's tag (required)
  -c, --config <path>      langgraph.json (default: ./langgraph.json)
  --base-image <image>     the Graphdock image to build on (default: graphdock:${VERSION})
`;

export class CommandError extends Error {
  override name = 'CommandError';
}

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  'base-image': { type: 'string' },
  tag: { type: 'string', short: 't' },
  help: { type: 'boolean', short: 'h' },
} as const;

function plan(values: { config?: string | undefined; 'base-image'?: string | undefined }) {
  const loaded = loadLanggraphConfig(values.config ?? 'langgraph.json');
  return planProjectImage({
    configPath: loaded.path,
    config: loaded.config,
    baseImage: values['base-image'],
    graphdockVersion: VERSION,
  });
}

export function runDockerfile(argv: string[]): number {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: OPTIONS,
  });
  if (values.help) {
    process.stdout.write(DOCKERFILE_USAGE);
    return 0;
  }
  if (positionals.length !== 1 || values.tag !== undefined) {
    process.stderr.write(DOCKERFILE_USAGE);
    return 2;
  }
  writeFileSync(positionals[0]!, renderDockerfile(plan(values)));
  process.stdout.write(`graphdock: wrote ${positionals[0]}\n`);
  return 0;
}

/** The first of `names` that is an executable file in one of the PATH's directories. */
export function findOnPath(names: string[], path = process.env.PATH ?? ''): string | undefined {
  for (const name of names)
    for (const dir of path.split(delimiter).filter(Boolean)) {
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  return undefined;
}

function buildWith(engine: string, image: ProjectImagePlan, tag: string, extra: string[]) {
  return new Promise<number>((resolvePromise, reject) => {
    // The Dockerfile goes on stdin, so nothing is written into the user's project.
    const child = spawn(engine, ['build', '-f', '-', '-t', tag, ...extra, image.sourceDir], {
      stdio: ['pipe', 'inherit', 'inherit'],
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolvePromise(code ?? (signal ? 1 : 0)));
    child.stdin.end(renderDockerfile(image));
  });
}

export async function runBuild(argv: string[]): Promise<number> {
  const dashes = argv.indexOf('--');
  const own = dashes < 0 ? argv : argv.slice(0, dashes);
  const extra = dashes < 0 ? [] : argv.slice(dashes + 1);
  const { values, positionals } = parseArgs({
    args: own,
    allowPositionals: true,
    options: OPTIONS,
  });
  if (values.help) {
    process.stdout.write(BUILD_USAGE);
    return 0;
  }
  if (!values.tag || positionals.length) {
    process.stderr.write(BUILD_USAGE);
    return 2;
  }
  const image = plan(values);
  const engine = findOnPath(['docker', 'podman']);
  if (!engine)
    throw new CommandError(
      'graphdock build needs a container engine: neither docker nor podman was found on PATH ' +
        '(`graphdock dockerfile <path>` writes the Dockerfile for another machine to build)',
    );
  return buildWith(engine, image, values.tag, extra);
}

/** `argv` starts with the command's name: `dockerfile` or `build`. */
export async function main(argv: string[]): Promise<number> {
  try {
    return argv[0] === 'build' ? await runBuild(argv.slice(1)) : runDockerfile(argv.slice(1));
  } catch (err) {
    if (err instanceof ConfigFileError || err instanceof ImageConfigError) {
      process.stderr.write(`graphdock: ${err.message}\n`);
      return 1;
    }
    if (isArgumentError(err)) {
      process.stderr.write(`graphdock: ${argumentErrorMessage(err)}\n`);
      return 2;
    }
    if (err instanceof CommandError) {
      process.stderr.write(`graphdock: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}
