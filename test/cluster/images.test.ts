// The image archives of images.ts run as containers: imported with `ctr images import` into a
// throw-away containerd (Debian's, as root), PostgreSQL's accepts a password login, and the image
// of examples/, started with its default command, answers /ok and runs a graph through the SDK
// against that PostgreSQL; so does the image of a project whose package.json brings its own
// LangGraph. Containers share the host's network; traffic stays on 127.0.0.1.
// The image runs Graphdock compiled (`npm run build`): its process, seen from the host through
// /proc, has no TypeScript of Graphdock's own and loads tsx only for a project's TypeScript graphs.
import { Client as LanggraphClient } from '@langchain/langgraph-sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../common/db/index.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildGraphdockImageArchive,
  buildImageArchive,
  buildPostgresImageArchive,
  ensureDebianPackages,
  readDockerfile,
  type ImageArchive,
} from './images.js';

const REPO = join(import.meta.dirname, '..', '..');
const NAMESPACE = 'graphdock-test';
const log = (line: string) => console.log(`images: ${line}`);

let dir: string;
let containerd: ChildProcess | undefined;
let socket: string;
let postgresImage: ImageArchive;
let graphdockImage: ImageArchive;
let examplesImage: ImageArchive;
let jsGraphImage: ImageArchive;
let ownDepsImage: ImageArchive;
let pgPort: number;
const containers: string[] = [];

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')}: ${out}`)),
    );
  });
}

const ctr = (...args: string[]) =>
  run('ctr', ['--address', socket, '--namespace', NAMESPACE, ...args]);

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await probe();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${what}: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

async function startContainerd(): Promise<void> {
  socket = join(dir, 'containerd.sock');
  const config = join(dir, 'config.toml');
  // Its own root, state and socket: nothing shared with a containerd the machine may run.
  writeFileSync(
    config,
    [
      'version = 2',
      `root = "${join(dir, 'root')}"`,
      `state = "${join(dir, 'state')}"`,
      'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
      '[grpc]',
      `  address = "${socket}"`,
      '[ttrpc]',
      `  address = "${socket}.ttrpc"`,
    ].join('\n'),
  );
  containerd = spawn('containerd', ['--config', config], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let tail = '';
  containerd.stderr!.on('data', (c: Buffer) => (tail = (tail + c.toString()).slice(-4_000)));
  await until('containerd did not answer', 30_000, () => ctr('version')).catch((err: Error) => {
    throw new Error(`${err.message}\n${tail}`);
  });
}

/** `ctr run -d` of `image` with host networking; its output goes to `<dir>/<id>.log`. */
async function runContainer(image: ImageArchive, id: string, env: Record<string, string>) {
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
  await ctr(
    'run',
    '-d',
    '--net-host',
    `--log-uri=file://${join(dir, `${id}.log`)}`,
    ...envArgs,
    image.ref,
    id,
  );
  containers.push(id);
}

const containerLog = (id: string) => {
  try {
    return readFileSync(join(dir, `${id}.log`), 'utf8').slice(-3_000);
  } catch {
    return '(no log)';
  }
};

/** Waits for a runtime container's /ok on 127.0.0.1:port. */
async function untilReady(id: string, port: number): Promise<string> {
  const url = `http://127.0.0.1:${port}`;
  await until(`/ok did not answer:\n${containerLog(id)}`, 120_000, async () => {
    const res = await fetch(`${url}/ok`);
    if (!res.ok) throw new Error(`status ${res.status}`);
  });
  return url;
}

/** The host's pid of a running container's process (`ctr tasks ls`: TASK PID STATUS). */
async function taskPid(id: string): Promise<number> {
  const row = (await ctr('tasks', 'ls')).split('\n').find((l) => l.split(/\s+/)[0] === id);
  const pid = Number(row?.split(/\s+/)[1]);
  if (!pid) throw new Error(`no running task ${id}`);
  return pid;
}

/** The TypeScript files under `dir`, not descending into the folders named in `skip`. */
function typescriptFiles(dir: string, skip: string[]): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return skip.includes(entry.name) ? [] : typescriptFiles(path, skip);
    return /\.[mc]?ts$/.test(entry.name) ? [path] : [];
  });
}

/** tsx's transform cache (`<tmpdir>/tsx-<uid>`), made when tsx is registered, in a container. */
const tsxCaches = (pid: number) =>
  readdirSync(`/proc/${pid}/root/tmp`).filter((name) => name.startsWith('tsx'));

const databaseUrl = (database: string) =>
  `postgresql://postgres:test-password@127.0.0.1:${pgPort}/${database}`;

/** Runs a runtime image as container `id` on a new database of its own; an SDK client for it. */
async function serveImage(image: ImageArchive, id: string): Promise<LanggraphClient> {
  const database = `graphdock_${id.replace(/-/g, '_')}`;
  await until('PostgreSQL did not answer', 60_000, async () => {
    const admin = new pg.Client({ connectionString: databaseUrl('postgres') });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`).finally(() => admin.end());
  });
  const port = await freePort();
  await runContainer(image, id, { DATABASE_URL: databaseUrl(database), PORT: String(port) });
  return new LanggraphClient({ apiUrl: await untilReady(id, port), apiKey: null });
}

/** The image config inside a docker-archive tarball. */
async function archiveConfig(archive: string) {
  const manifest = JSON.parse(await run('tar', ['-xOf', archive, 'manifest.json'])) as {
    Config: string;
    RepoTags: string[];
  }[];
  const config = JSON.parse(await run('tar', ['-xOf', archive, manifest[0]!.Config])) as {
    architecture: string;
    os: string;
    config: {
      Entrypoint: string[];
      Cmd: string[];
      Env: string[];
      User: string;
      WorkingDir: string;
      ExposedPorts: Record<string, object>;
    };
  };
  return { repoTags: manifest[0]!.RepoTags, ...config };
}

beforeAll(async () => {
  await ensureDebianPackages(['containerd', 'runc', 'mmdebstrap'], log);
  const started = Date.now();
  const graphdockThenExamples = async () => {
    const graphdock = await buildGraphdockImageArchive({ log });
    const examples = await buildImageArchive({
      config: join(REPO, 'examples/langgraph.json'),
      log,
    });
    const jsGraph = await buildImageArchive({
      config: join(REPO, 'test/fixtures/js-graph/langgraph.json'),
      log,
    });
    // Its package.json and lockfile: `npm ci` installs the project's own LangGraph.
    const ownDeps = await buildImageArchive({
      config: join(REPO, 'test/fixtures/own-deps/langgraph.json'),
      log,
    });
    return [graphdock, examples, jsGraph, ownDeps] as const;
  };
  [postgresImage, [graphdockImage, examplesImage, jsGraphImage, ownDepsImage]] = await Promise.all([
    buildPostgresImageArchive({ log }),
    graphdockThenExamples(),
  ]);
  log(`archives ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  dir = mkdtempSync(join(tmpdir(), 'gd-ctr-'));
  await startContainerd();
  // The examples image shares all but its last layer with the Graphdock image.
  for (const image of [postgresImage, graphdockImage, examplesImage, jsGraphImage, ownDepsImage]) {
    const t = Date.now();
    await ctr('images', 'import', image.archive);
    log(`ctr images import ${image.ref}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
  pgPort = await freePort();
  await runContainer(postgresImage, 'postgres', {
    PGPORT: String(pgPort),
    POSTGRES_PASSWORD: 'test-password',
  });
}, 3_600_000);

afterAll(async () => {
  const started = Date.now();
  const existing = containerd
    ? (await ctr('containers', 'ls', '-q').catch(() => '')).split('\n')
    : [];
  for (const id of containers.filter((c) => existing.includes(c))) {
    await ctr('tasks', 'kill', '--signal', 'SIGKILL', id).catch(() => {});
    await until('task did not stop', 15_000, () => ctr('tasks', 'delete', id)).catch(() => {});
    await ctr('containers', 'delete', id).catch(() => {});
  }
  log(`containers removed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (containerd?.exitCode === null) {
    const exited = new Promise((r) => containerd!.once('exit', r));
    containerd.kill('SIGTERM');
    const timer = setTimeout(() => containerd!.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    log(`containerd stopped in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  // The unpacked images are tens of thousands of files, about a minute to remove on a busy
  // machine: a detached rm does it while the suite goes on.
  if (dir) spawn('rm', ['-rf', dir], { detached: true, stdio: 'ignore' }).unref();
}, 180_000);

describe('image archives without a container engine', () => {
  it("carry the Dockerfile's entrypoint and the project's command, under their names", async () => {
    const dockerfile = readDockerfile();
    const images = await ctr('images', 'ls', '-q');
    expect(images.split('\n')).toEqual(
      expect.arrayContaining([postgresImage.ref, examplesImage.ref]),
    );
    const examples = await archiveConfig(examplesImage.archive);
    expect(examples.repoTags).toEqual([examplesImage.ref]);
    expect(examples.os).toBe('linux');
    expect(examples.config.Entrypoint).toEqual(dockerfile.config.entrypoint);
    expect(examples.config.Cmd).toEqual(['runtime', '--config', '/deps/examples/langgraph.json']);
    const graphdock = await archiveConfig(graphdockImage.archive);
    expect(graphdock.config.Entrypoint).toEqual(dockerfile.config.entrypoint);
    expect(graphdock.config.Cmd).toEqual(['runtime', '--config', '/app/examples/langgraph.json']);
    expect(examples.config.WorkingDir).toBe('/deps/examples');
    expect(examples.config.User).toBe('1000:1000');
    expect(examples.config.Env).toContain('NODE_ENV=production');
    expect(Object.keys(examples.config.ExposedPorts).sort()).toEqual([
      '8000/tcp',
      '8080/tcp',
      '8081/tcp',
    ]);
  });

  it('PostgreSQL accepts a password login, and refuses a wrong password', async () => {
    const url = (password: string) =>
      `postgresql://postgres:${password}@127.0.0.1:${pgPort}/postgres`;
    const version = await until(
      `postgres did not accept a login:\n${containerLog('postgres')}`,
      90_000,
      async () => {
        const client = new pg.Client({ connectionString: url('test-password') });
        await client.connect();
        try {
          return (await client.query<{ v: string }>('SELECT version() AS v')).rows[0]!.v;
        } finally {
          await client.end();
        }
      },
    );
    expect(version).toMatch(/^PostgreSQL 15\./);
    const wrong = new pg.Client({ connectionString: url('nope') });
    await expect(wrong.connect()).rejects.toThrow(/password authentication failed/);
  }, 120_000);

  it('the image of examples/ serves its graphs with its default command', async () => {
    const client = await serveImage(examplesImage, 'examples');
    const graphs = (await client.assistants.search({ limit: 50 })).map((a) => a.graph_id);
    expect(graphs).toEqual(expect.arrayContaining(['echo', 'agent', 'memory']));
    const thread = await client.threads.create();
    const state = (await client.runs.wait(thread.thread_id, 'echo', {
      input: { messages: [{ role: 'user', content: 'from a container' }] },
    })) as { messages: { content: string }[] };
    expect(state.messages.at(-1)?.content).toBe('echo: from a container');
  }, 180_000);

  it('the Graphdock image with no command serves examples/langgraph.json', async () => {
    const client = await serveImage(graphdockImage, 'graphdock');
    const state = (await client.runs.wait(null, 'echo', {
      input: { messages: [{ role: 'user', content: 'base image' }] },
    })) as { messages: { content: string }[] };
    expect(state.messages.at(-1)?.content).toBe('echo: base image');
  }, 180_000);

  it('runs compiled JavaScript with plain node; tsx loads only for TypeScript graphs', async () => {
    const client = await serveImage(jsGraphImage, 'js-graph');
    const state = (await client.runs.wait(null, 'echo', {
      input: { messages: [{ role: 'user', content: 'compiled' }] },
    })) as { messages: { content: string }[] };
    expect(state.messages.at(-1)?.content).toBe('echo: compiled');

    const pid = await taskPid('js-graph');
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    expect(argv).toEqual([
      ...readDockerfile().config.entrypoint,
      'runtime',
      '--config',
      '/deps/js-graph/langgraph.json',
    ]);
    expect(readFileSync(`/proc/${pid}/environ`, 'utf8')).not.toMatch(/(^|\0)NODE_OPTIONS=/);
    // Graphdock's own code in the image is the build's bundle, no TypeScript source.
    const app = `/proc/${pid}/root/app`;
    expect(existsSync(join(app, 'cli', 'main.js'))).toBe(true);
    expect(readdirSync(join(app, 'chunks')).length).toBeGreaterThan(0);
    expect(typescriptFiles(app, ['node_modules', 'examples'])).toEqual([]);
    // Serving a JavaScript graph, the process never registered tsx...
    expect(tsxCaches(pid)).toEqual([]);
    // ...which the image of examples/ (TypeScript graphs, serving since the test above) did.
    expect(tsxCaches(await taskPid('examples'))).not.toEqual([]);
  }, 180_000);

  it("installs a project's own dependencies, and its graph runs on that LangGraph", async () => {
    const client = await serveImage(ownDepsImage, 'own-deps');
    const thread = await client.threads.create();
    const first = (await client.runs.wait(thread.thread_id, 'review', {
      input: { messages: [{ role: 'user', content: 'draft it' }] },
    })) as { __interrupt__?: { value: unknown }[] };
    expect(
      first.__interrupt__?.map((i) => i.value),
      containerLog('own-deps'),
    ).toEqual([{ question: 'Approve?' }]);
    // The lockfile's LangGraph, installed into the project, not the one under /app.
    const { values } = await client.threads.getState(thread.thread_id);
    expect((values as { messages: unknown[] }).messages.at(-1)).toMatchObject({
      type: 'ai',
      content: 'file:///deps/own-deps/node_modules/@langchain/langgraph/dist/index.js',
    });
    const installed = JSON.parse(
      readFileSync(
        `/proc/${await taskPid('own-deps')}/root/deps/own-deps/node_modules/@langchain/langgraph/package.json`,
        'utf8',
      ),
    ) as { version: string };
    expect(installed.version).toBe('1.1.0');
    expect((await client.threads.get(thread.thread_id)).status).toBe('interrupted');
    const resumed = (await client.runs.wait(thread.thread_id, 'review', {
      command: { resume: 'yes' },
    })) as { approved: boolean };
    expect(resumed.approved).toBe(true);
    expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
  }, 180_000);

  it("answers --help through the image's entrypoint", async () => {
    const { config } = await archiveConfig(graphdockImage.archive);
    const id = 'graphdock-help';
    containers.push(id);
    const out = await ctr('run', '--rm', graphdockImage.ref, id, ...config.Entrypoint, '--help');
    expect(out).toMatch(/^Usage: graphdock <command>/m);
  }, 60_000);
});
