// A bulk export executed by a Kubernetes Job whose pod really runs on the real node: the api
// (GRAPHDOCK_EXPORT_EXECUTOR=jobs) and the operator run on the host, as do PostgreSQL and MinIO,
// which the pod reaches through relays on the node's link (a host server pods call; the host
// reaches the same address, so the destination's endpoint is one URL for both). The Job's pod is
// the Graphdock image running `graphdock export-run`; the test reads the Parquet it wrote back
// with DuckDB and checks the BulkExport's status.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useControlPlane } from '../support/control-plane.js';
import {
  grantOperatorRbac,
  startOperatorProcess,
  type RunningOperator,
} from '../support/operator.js';
import { useS3Server } from '../support/s3.js';
import { buildGraphdockImageArchive } from './images.js';
import { until } from './operator-helpers.js';

const NS = 'exports';
const BUCKET = 'exports';
const KEYS = `k1:${randomBytes(32).toString('base64')}`;
const log = (line: string) => console.log(`bulk-export-real: ${line}`);
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

const s3 = useS3Server({ buckets: [BUCKET] });
const cp = useControlPlane({
  namespaces: [NS],
  cluster: { nodes: 0, realNode: true },
  apiEnv: {
    GRAPHDOCK_EXPORT_EXECUTOR: 'jobs',
    GRAPHDOCK_EXPORT_JOBS_NAMESPACE: NS,
    GRAPHDOCK_EXPORT_MAX_ATTEMPTS: '3',
    GRAPHDOCK_EXPORT_POLL_MS: '200',
    GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS: KEYS,
  },
});
const tmp = mkdtempSync(join(tmpdir(), 'graphdock-bulk-export-real-'));
let operator: RunningOperator;
let endpoint = '';

type Json = Record<string, unknown>;

async function call(method: string, path: string, json?: unknown) {
  const res = await cp.http(`/api/v1${path}`, {
    method,
    headers: { 'x-tenant-id': cp.workspaceId },
    ...(json !== undefined ? { json } : {}),
  });
  const text = await res.text();
  expect(res.status, `${method} ${path}: ${text}`).toBeLessThan(300);
  return (text ? JSON.parse(text) : null) as Json & Json[];
}

beforeAll(async () => {
  const t = Date.now();
  const image = await buildGraphdockImageArchive({ log });
  await cp.cluster.loadImage(image.archive);
  log(`image loaded: ${seconds(t)}`);
  const pg = new URL(cp.pgUrl);
  const [pgForPods, s3ForPods] = await Promise.all([
    cp.cluster.exposeToPods(Number(pg.port)),
    cp.cluster.exposeToPods(s3.port),
  ]);
  endpoint = `http://${s3ForPods.host}:${s3ForPods.port}`;
  pg.hostname = pgForPods.host;
  pg.port = String(pgForPods.port);
  // What the chart holds: the api's database URL and the credential keys, as Secrets.
  await cp.cluster.kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { name: 'gd-database', data: { DATABASE_URL: pg.toString() } },
        { name: 'gd-bulk-export', data: { GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS: KEYS } },
      ].map((s) => ({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: s.name, namespace: NS },
        stringData: s.data,
      })),
    }),
  });
  operator = await startOperatorProcess(await grantOperatorRbac(cp.cluster), {
    computeId: 'real-node',
    identity: 'operator-real',
    env: {
      GRAPHDOCK_EXPORT_JOB_IMAGE: image.ref,
      GRAPHDOCK_EXPORT_JOB_PULL_POLICY: 'Never',
      GRAPHDOCK_EXPORT_JOBS_NAMESPACE: NS,
      GRAPHDOCK_EXPORT_JOB_DATABASE_SECRET: 'gd-database',
      GRAPHDOCK_EXPORT_JOB_KEYS_SECRET: 'gd-bulk-export',
      // Passed on to the pod: two files for the day, so a cursor step happens in the pod.
      GRAPHDOCK_EXPORT_ROWS_PER_FILE: '40',
      GRAPHDOCK_EXPORT_ROW_GROUP_SIZE: '20',
    },
  });
  log(`ready: ${seconds(t)}`);
}, 600_000);

afterAll(async () => {
  await operator?.stop();
  rmSync(tmp, { recursive: true, force: true });
}, 60_000);

async function duck(sql: string) {
  const conn = await (await DuckDBInstance.create()).connect();
  const rows = (await conn.runAndReadAll(sql)).getRowObjectsJson();
  conn.closeSync();
  return rows as Json[];
}

describe('bulk export on the real node', () => {
  it("a Job's pod writes the export's Parquet to S3 and the BulkExport reports it Completed", async () => {
    const t = Date.now();
    const destination = await call('POST', '/bulk-exports/destinations', {
      destination_type: 's3',
      display_name: 'real-node',
      config: { bucket_name: BUCKET, prefix: 'real', endpoint_url: endpoint },
      credentials: s3.writer,
    });
    const session = await call('POST', '/sessions', { name: `real-${randomUUID()}` });
    const day = Date.parse('2026-11-01T00:00:00Z');
    const ids: string[] = [];
    const post = Array.from({ length: 60 }, (_, i) => {
      const id = randomUUID();
      ids.push(id);
      const start = new Date(day + 3_600_000 + i * 60_000);
      return {
        id,
        session_id: session.id,
        name: 'agent',
        run_type: 'chain',
        start_time: start.toISOString(),
        end_time: new Date(start.getTime() + 25).toISOString(),
        inputs: { question: `q${i}` },
        outputs: { answer: `a${i}` },
        extra: { metadata: { thread_id: `t${i % 3}` } },
      };
    });
    expect(
      (
        await cp.http('/api/v1/runs/batch', {
          method: 'POST',
          headers: { 'x-tenant-id': cp.workspaceId },
          json: { post },
        })
      ).status,
    ).toBe(202);

    const created = await call('POST', '/bulk-exports', {
      bulk_export_destination_id: destination.id,
      session_id: session.id,
      start_time: new Date(day).toISOString(),
      end_time: new Date(day + 86_400_000).toISOString(),
      format: 'Parquet',
      compression: 'zstd',
    });
    const id = created.id as string;
    const diagnostics = async () =>
      [
        await cp.cluster.kubectl(['get', 'pods,jobs', '-n', NS, '-o', 'wide']).catch(String),
        await cp.cluster
          .kubectl(['logs', '-n', NS, '-l', `graphdock.dev/bulk-export-id=${id}`, '--tail=40'])
          .catch(String),
        operator.output().slice(-3000),
      ].join('\n');
    const exported = await until(
      'the export to complete',
      async () => (await call('GET', `/bulk-exports/${id}`)).status as string,
      (s) => s === 'Completed' || s === 'Failed',
      150_000,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${await diagnostics()}`);
    });
    expect(exported, await diagnostics()).toBe('Completed');
    log(`POST → export Completed by the Job's pod: ${seconds(t)}`);

    const be = await until(
      'the BulkExport status',
      () =>
        cp.kubectlJson<{ status?: { phase?: string; progress?: string; runs?: Json[] } }>([
          'get',
          'bulkexport',
          `export-${id}`,
          '-n',
          NS,
        ]),
      (r) => r.status?.phase === 'Completed',
      60_000,
    );
    expect(be.status).toMatchObject({
      progress: '1/1',
      runs: [expect.objectContaining({ phase: 'Succeeded', attempts: 1 })],
    });

    // The pod really ran, on the real node (the Job is complete once its pod has exited).
    const pods = await cp.kubectlJson<{
      items: { spec: { nodeName: string }; status: { phase: string } }[];
    }>(['get', 'pods', '-n', NS, '-l', `graphdock.dev/bulk-export-id=${id}`]);
    expect(pods.items.map((p) => p.status.phase)).toContain('Succeeded');
    expect(pods.items[0]!.spec.nodeName).toBe(cp.cluster.realNode!.name);

    const [run] = await call('GET', `/bulk-exports/${id}/runs`);
    const result = (run!.metadata as { result: { rows_written: number; exported_files: string[] } })
      .result;
    expect(result.rows_written).toBe(60);
    expect(result.exported_files).toHaveLength(2);
    const keys = await s3.listKeys(BUCKET, `real/export_id=${id}/`);
    expect(keys).toHaveLength(2);
    const files: string[] = [];
    for (const key of keys) {
      const body = await s3.client().send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      const file = join(tmp, `${files.length}.parquet`);
      writeFileSync(file, await body.Body!.transformToByteArray());
      files.push(file);
    }
    const rows = await duck(
      `SELECT id, session_id, name, run_type FROM read_parquet([${files.map((f) => `'${f}'`).join(', ')}]) ORDER BY start_time`,
    );
    expect(rows.map((r) => r.id)).toEqual(ids);
    expect(new Set(rows.map((r) => r.session_id))).toEqual(new Set([session.id]));
    expect(new Set(rows.map((r) => `${String(r.name)}/${String(r.run_type)}`))).toEqual(
      new Set(['agent/chain']),
    );
  });
});
