// A real S3-compatible server for the tests: MinIO, built once from its Go module by
// build-s3-server.sh (cached outside the clone), started on 127.0.0.1 on a free port with a
// temporary data folder. Its IAM makes the identities the bulk-export tests need: a writer, one
// that may not write, one that may not delete, and a key id that does not exist.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
import { freePort } from '../../common/db/index.js';
import { ensureS3Server } from './s3-build.js';

export { ensureS3Server };

/** MinIO accepts any region name; the tests use AWS's default one. */
export const S3_REGION = 'us-east-1';

export interface S3Credentials {
  access_key_id: string;
  secret_access_key: string;
  session_token?: string;
}

export interface S3TestServer {
  /** `http://127.0.0.1:<port>`: a destination's `endpoint_url`. */
  endpoint: string;
  port: number;
  region: string;
  /** MinIO's root user. */
  root: S3Credentials;
  /** May read, write, delete and abort multipart uploads in every bucket. */
  writer: S3Credentials;
  /** May list and read, not write (`s3:PutObject` missing). */
  noWrite: S3Credentials;
  /** May write and read, not delete (`s3:DeleteObject` missing). */
  noDelete: S3Credentials;
  /** Well-formed, but no such user exists. */
  unknown: S3Credentials;
  /** Makes a new user whose only policy is `policy` (an IAM policy document). */
  addUser(name: string, policy: unknown): Promise<S3Credentials>;
  /** A client of this server (path style), with the root user unless told otherwise. */
  client(credentials?: S3Credentials): S3Client;
  createBucket(name: string): Promise<void>;
  /** The running MinIO's process id (benches read its CPU time). */
  pid(): number | undefined;
  /** Every key under `prefix` in `bucket`, read with the root user. */
  listKeys(bucket: string, prefix?: string): Promise<string[]>;
  getText(bucket: string, key: string): Promise<string>;
  /** Kills the server (SIGKILL unless told otherwise), keeping its data: for outage tests. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and data after kill(). */
  restart(): Promise<void>;
  /** Stops it and deletes its data. */
  close(): Promise<void>;
  output(): string;
}

const POLICIES = {
  'graphdock-writer': statement(['s3:*']),
  'graphdock-no-write': statement(['s3:GetObject', 's3:ListBucket', 's3:GetBucketLocation']),
  'graphdock-no-delete': statement([
    's3:PutObject',
    's3:GetObject',
    's3:ListBucket',
    's3:GetBucketLocation',
    's3:AbortMultipartUpload',
    's3:ListMultipartUploadParts',
    's3:ListBucketMultipartUploads',
  ]),
};

function statement(actions: string[]) {
  return {
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: actions, Resource: ['arn:aws:s3:::*'] }],
  };
}

const newCredentials = (name: string): S3Credentials => ({
  access_key_id: `${name}${randomBytes(6).toString('hex')}`,
  secret_access_key: randomBytes(24).toString('base64url'),
});

/** Starts a MinIO server with `buckets` created and the test identities made. */
export async function startS3Server(options: { buckets?: string[] } = {}): Promise<S3TestServer> {
  const binDir = await ensureS3Server();
  const dataDir = mkdtempSync(join(tmpdir(), 'graphdock-s3-'));
  const root = newCredentials('root');
  let port = 0;
  let child: ChildProcess | undefined;
  let log = '';
  let exited: Promise<void> = Promise.resolve();

  const launch = async () => {
    const proc = spawn(
      join(binDir, 'minio'),
      ['server', '--quiet', '--address', `127.0.0.1:${port}`, join(dataDir, 'data')],
      {
        env: {
          PATH: process.env.PATH,
          HOME: dataDir,
          MINIO_ROOT_USER: root.access_key_id,
          MINIO_ROOT_PASSWORD: root.secret_access_key,
          // No web console (it would need a second port), no update checks, no telemetry.
          MINIO_BROWSER: 'off',
          MINIO_UPDATE: 'off',
          MINIO_CALLHOME_ENABLE: 'off',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = proc;
    const append = (c: Buffer) => (log = (log + c.toString()).slice(-20_000));
    proc.stdout?.on('data', append);
    proc.stderr?.on('data', append);
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    await waitReady(`http://127.0.0.1:${port}/minio/health/ready`, proc, () => log);
  };

  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await launch();
      break;
    } catch (err) {
      // Another process took the port between freePort() and MinIO's bind: pick another.
      const taken = /address already in use|EADDRINUSE/i.test(String(err));
      if (!taken || attempt >= 3) {
        rmSync(dataDir, { recursive: true, force: true });
        throw err;
      }
    }
  }

  const endpoint = `http://127.0.0.1:${port}`;
  const writer = newCredentials('writer');
  const noWrite = newCredentials('nowrite');
  const noDelete = newCredentials('nodelete');
  await applyIam(binDir, endpoint, root, {
    policies: POLICIES,
    users: [
      {
        accessKey: writer.access_key_id,
        secretKey: writer.secret_access_key,
        policy: 'graphdock-writer',
      },
      {
        accessKey: noWrite.access_key_id,
        secretKey: noWrite.secret_access_key,
        policy: 'graphdock-no-write',
      },
      {
        accessKey: noDelete.access_key_id,
        secretKey: noDelete.secret_access_key,
        policy: 'graphdock-no-delete',
      },
    ],
  });

  const client = (credentials: S3Credentials = root) =>
    new S3Client({
      endpoint,
      region: S3_REGION,
      forcePathStyle: true,
      credentials: {
        accessKeyId: credentials.access_key_id,
        secretAccessKey: credentials.secret_access_key,
        sessionToken: credentials.session_token,
      },
    });
  const admin = client();
  const server: S3TestServer = {
    endpoint,
    port,
    region: S3_REGION,
    root,
    writer,
    noWrite,
    noDelete,
    unknown: newCredentials('unknown'),
    async addUser(name, policy) {
      const credentials = newCredentials(name);
      await applyIam(binDir, endpoint, root, {
        policies: { [`graphdock-${name}`]: policy },
        users: [
          {
            accessKey: credentials.access_key_id,
            secretKey: credentials.secret_access_key,
            policy: `graphdock-${name}`,
          },
        ],
      });
      return credentials;
    },
    client,
    pid: () => child?.pid,
    async createBucket(name) {
      await admin.send(new CreateBucketCommand({ Bucket: name }));
    },
    async listKeys(bucket, prefix) {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await admin.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
        );
        for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
        token = page.NextContinuationToken;
      } while (token);
      return keys;
    },
    async getText(bucket, key) {
      const object = await admin.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return (await object.Body?.transformToString()) ?? '';
    },
    async kill(signal = 'SIGKILL') {
      if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
    async restart() {
      await server.kill();
      await launch();
    },
    async close() {
      admin.destroy();
      await server.kill('SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    },
    output: () => log,
  };
  for (const bucket of options.buckets ?? []) await server.createBucket(bucket);
  return server;
}

/** A server per test file: started in beforeAll, removed in afterAll. */
export function useS3Server(options: { buckets?: string[] } = {}): S3TestServer {
  // Filled in beforeAll; every method is a closure, so the copy behaves as the original.
  const fixture = {} as S3TestServer;
  beforeAll(async () => {
    Object.assign(fixture, await startS3Server(options));
  }, 120_000);
  afterAll(async () => {
    await fixture.close?.();
  });
  return fixture;
}

async function waitReady(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`minio exited with ${child.exitCode ?? child.signalCode}:\n${log()}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`minio was not ready within 60 s:\n${log()}`);
}

interface IamSpec {
  policies: Record<string, unknown>;
  users: { accessKey: string; secretKey: string; policy?: string }[];
}

/**
 * Applies the spec one user at a time, each step with every policy again, and retries a step
 * that fails: right after start MinIO's IAM may still be loading and can lose a policy just
 * added ("The canned policy does not exist" when attaching it). Adding a policy or a user again
 * is idempotent, and a step's attach never ran when it failed.
 */
async function applyIam(
  binDir: string,
  endpoint: string,
  root: S3Credentials,
  spec: IamSpec,
): Promise<void> {
  const steps = spec.users.length
    ? spec.users.map((user) => ({ policies: spec.policies, users: [user] }))
    : [spec];
  for (const step of steps) {
    for (let attempt = 1; ; attempt++) {
      try {
        await runS3Admin(binDir, endpoint, root, step);
        break;
      } catch (err) {
        if (attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }
}

async function runS3Admin(
  binDir: string,
  endpoint: string,
  root: S3Credentials,
  spec: IamSpec,
): Promise<void> {
  const child = spawn(join(binDir, 's3-admin'), [], {
    env: {
      PATH: process.env.PATH,
      MINIO_ENDPOINT: new URL(endpoint).host,
      MINIO_ROOT_USER: root.access_key_id,
      MINIO_ROOT_PASSWORD: root.secret_access_key,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  child.stdin.end(JSON.stringify(spec));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`s3-admin failed (exit ${code}): ${output}`);
}
