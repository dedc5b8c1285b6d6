// The export-run engine on real PostgreSQL and a real S3-compatible server (MinIO), without the
// api: an attempt that dies after an object is uploaded but before its cursor is committed is
// retried from the committed cursor and rewrites the same object, so no row is duplicated or
// lost; a run already taken by another executor is not claimed; a run fails after its attempts;
// a run's temporary files are gone after it completes, fails or is cancelled; a run larger than
// DuckDB's default CSV line limit exports; values holding the CSV dialect's special characters
// (tab, the quote control character, line breaks, quotes, backslashes, empty strings) and NUL
// come out exactly as sent, a lone surrogate as U+FFFD.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, type Pool } from '../../common/db/index.js';
import { createLogger } from '../../common/logging/index.js';
import {
  ExportRunner,
  ExportStore,
  migrateExportsDatabase,
  type ExportTarget,
  type RunnerSettings,
} from '../../exports/index.js';
import { migrateTraceDatabase, TraceStore } from '../../traces/index.js';
import type { RunRecord } from '../../traces/model.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { useS3Server } from '../support/s3.js';

const BUCKET = 'runner';
const s3 = useS3Server({ buckets: [BUCKET] });
const logger = createLogger({ level: 'silent' });
const tenant = randomUUID();
const session = randomUUID();
/** A session of its own with one run larger than DuckDB's default 2 MiB CSV line. */
const bigSession = randomUUID();
/** A session whose runs hold every character the export's CSV dialect treats specially. */
const specialSession = randomUUID();
const SPECIAL = [
  'tab\there',
  'quote\x01char',
  'line\nbreak',
  'crlf\r\nend',
  'say "hi", ok',
  'back\\slash',
  '\\.',
  '',
  ' lead',
  'ünï 😀',
  // Held in the store's encoding (common/db/jsonb.ts), exported as sent.
  'nul\u0000here',
  'lone \ud800 and \udfff',
  'mark \ufdd0 0000 \ufdd0\ufdd00000 \ufdd0d800',
];
/** What each special run was sent with, by id. */
const sent = new Map<string, RunRecord>();
const DAY = '2026-10-05';
let db: TestDatabase;
let pool: Pool;
let store: ExportStore;
let traces: TraceStore;
const tmp = mkdtempSync(join(tmpdir(), 'graphdock-export-runner-'));

beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  pool = createPool({ url: db.url, max: 4 });
  await migrateTraceDatabase(pool);
  await migrateExportsDatabase(pool);
  store = new ExportStore(pool);
  traces = new TraceStore(pool);
  await traces.ensurePartitions([DAY]);
  const records: RunRecord[] = [];
  for (let i = 0; i < 500; i++) records.push(record(session, i, { i }));
  records.push(record(bigSession, 0, { text: 'x'.repeat(3 * 1024 * 1024) }));
  records.push(record(bigSession, 1, { i: 1 }));
  SPECIAL.forEach((text, i) => {
    const run = {
      ...record(specialSession, i, { text, [text]: [text] }),
      name: text,
      error: i % 2 ? text : null,
      tags: [text, SPECIAL[(i + 1) % SPECIAL.length]!],
      outputs: { text },
    };
    sent.set(run.id, run);
    records.push(run);
  });
  await traces.ingestBatch(tenant, records, []);
}, 120_000);

function record(sessionId: string, i: number, inputs: Record<string, unknown>): RunRecord {
  const id = randomUUID();
  return {
    id,
    session_id: sessionId,
    trace_id: id,
    parent_run_id: null,
    parent_run_ids: [],
    is_root: true,
    dotted_order: `20261005T000000000000Z${id}`,
    name: 'agent',
    run_type: 'chain',
    // Some runs share a start time: the cursor must order them by id too.
    start_time: new Date(Date.parse(`${DAY}T01:00:00Z`) + Math.floor(i / 3) * 1000).toISOString(),
    end_time: null,
    status: 'pending',
    inputs,
    outputs: null,
    error: null,
    extra: null,
    events: null,
    tags: [],
    serialized: null,
    reference_example_id: null,
    trace_tier: null,
    prompt_tokens: null,
    completion_tokens: null,
    total_tokens: null,
    prompt_cost: null,
    completion_cost: null,
    total_cost: null,
    first_token_time: null,
    thread_id: null,
  };
}

afterAll(async () => {
  await pool?.end();
  await db?.drop();
  rmSync(tmp, { recursive: true, force: true });
});

const SETTINGS: RunnerSettings = {
  rowsPerFile: 120,
  rowGroupSize: 40,
  maxAttempts: 3,
  leaseMs: 10_000,
  retryDelayMs: 0,
  partSize: 5 * 1024 * 1024,
  queueSize: 2,
};

function target(client: S3Client): ExportTarget {
  return {
    client,
    bucket: BUCKET,
    key: (path) => `p/${path}`,
    pathOf: (key) => `${BUCKET}/${key}`,
    close: () => undefined,
  };
}

/** A client whose `n`-th HeadObject fails, as a process dying after an upload would stop there. */
function failingHeadClient(n: number): S3Client {
  return failingClient('HeadObjectCommand', n, 'killed after the upload');
}

/** A client whose `n`-th `command` fails. */
function failingClient(command: string, n: number, message: string): S3Client {
  const client = s3.client(s3.writer);
  let calls = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === command && ++calls === n)
        throw Object.assign(new Error(message), { name: 'Crash' });
      return next(args);
    },
    { step: 'initialize', name: 'failCommand' },
  );
  return client;
}

async function newExport(sessionId = session): Promise<{ exportId: string; runId: string }> {
  const exportId = randomUUID();
  const runId = randomUUID();
  await store.createExport(
    {
      id: exportId,
      tenant_id: tenant,
      bulk_export_destination_id: randomUUID(),
      session_id: sessionId,
      start_time: `${DAY}T00:00:00Z`,
      end_time: '2026-10-06T00:00:00Z',
      filter: null,
      format: 'Parquet',
      compression: 'zstd',
      interval_hours: null,
      export_fields: null,
      status: 'Created',
      source_bulk_export_id: null,
      next_window_start: null,
    },
    [{ id: runId, start_time: `${DAY}T00:00:00Z`, end_time: '2026-10-06T00:00:00Z' }],
  );
  return { exportId, runId };
}

async function exportedIds(exportId: string): Promise<{ n: number; d: number }> {
  const [counts] = await exportedRows(exportId, 'count(*)::INT AS n, count(DISTINCT id)::INT AS d');
  return counts as { n: number; d: number };
}

/** The exported objects' rows, the columns `select` names. */
async function exportedRows(exportId: string, select: string): Promise<Record<string, unknown>[]> {
  const keys = await s3.listKeys(BUCKET, `p/export_id=${exportId}/`);
  const files: string[] = [];
  for (const key of keys) {
    const obj = await s3.client().send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    const file = join(tmp, `${randomUUID()}.parquet`);
    writeFileSync(file, await obj.Body!.transformToByteArray());
    files.push(file);
  }
  const conn = await (await DuckDBInstance.create()).connect();
  const reader = await conn.runAndReadAll(
    `SELECT ${select} FROM read_parquet([${files.map((f) => `'${f}'`).join(',')}])`,
  );
  conn.closeSync();
  return reader.getRowObjectsJS();
}

describe('export run engine', () => {
  it('retries from the committed cursor after a crash between upload and commit, rewriting the same object', async () => {
    const { exportId, runId } = await newExport();
    // Third file: uploaded, then the attempt dies before verifying and committing it.
    const crashing = new ExportRunner(
      store,
      traces,
      async () => target(failingHeadClient(3)),
      SETTINGS,
      logger,
    );
    expect(await crashing.execute(runId, 'pod-a')).toBe('Retrying');
    const afterCrash = (await store.getRun(runId))!;
    expect(afterCrash.rows_written).toBe(240);
    expect(afterCrash.files).toHaveLength(2);
    expect(afterCrash.errors).toEqual({ retry_0: 'Crash: killed after the upload' });
    // The uncommitted third object is there, under the name the retry will write again.
    expect(await s3.listKeys(BUCKET, `p/export_id=${exportId}/`)).toHaveLength(3);

    const healthy = new ExportRunner(
      store,
      traces,
      async () => target(s3.client(s3.writer)),
      SETTINGS,
      logger,
    );
    expect(await healthy.execute(runId, 'pod-b')).toBe('Completed');
    const done = (await store.getRun(runId))!;
    expect(done.status).toBe('Completed');
    expect(done.retry_number).toBe(1);
    expect(done.rows_written).toBe(500);
    expect(done.files).toHaveLength(5);
    expect(new Set(done.files).size).toBe(5);
    const keys = await s3.listKeys(BUCKET, `p/export_id=${exportId}/`);
    expect(keys.map((k) => `${BUCKET}/${k}`).sort()).toEqual([...done.files].sort());
    expect(await exportedIds(exportId)).toEqual({ n: 500, d: 500 });
    expect((await store.exportById(exportId))!.status).toBe('Completed');
  });

  it('does not claim a run another executor holds, and fails a run after its attempts', async () => {
    const { exportId, runId } = await newExport();
    expect(await store.claimRun(runId, 'pod-a', 60_000)).toBeDefined();
    const runner = new ExportRunner(
      store,
      traces,
      async () => target(failingHeadClient(1)),
      { ...SETTINGS, maxAttempts: 2 },
      logger,
    );
    expect(await runner.execute(runId, 'pod-b')).toBe('NotClaimed');
    await pool.query('UPDATE bulk_export_runs SET lease_until = now() WHERE id = $1', [runId]);
    expect(await runner.execute(runId, 'pod-b')).toBe('Retrying');
    expect(await runner.execute(runId, 'pod-c')).toBe('Failed');
    const run = (await store.getRun(runId))!;
    expect(run.status).toBe('Failed');
    expect(Object.keys(run.errors)).toEqual(['retry_0', 'retry_1']);
    expect((await store.exportById(exportId))!.status).toBe('Failed');
  });

  it('removes its temporary files after a run completes, fails an upload, fails to verify or is cancelled', async () => {
    const dir = mkdtempSync(join(tmp, 'work-'));
    const settings = { ...SETTINGS, tempDir: dir };
    // Every CSV the runs copy, to show they were under `dir` (not only that `dir` ends empty).
    const copied: string[] = [];
    class RecordingTraces extends TraceStore {
      onCopy: () => Promise<unknown> | void = () => undefined;
      override async copyExportRows(...args: Parameters<TraceStore['copyExportRows']>) {
        copied.push(args[3]);
        await this.onCopy();
        return super.copyExportRows(...args);
      }
    }
    const recording = new RecordingTraces(pool);
    const runner = (client: S3Client) =>
      new ExportRunner(store, recording, async () => target(client), settings, logger);
    const leftovers = () => readdirSync(dir, { recursive: true });

    const completed = await newExport();
    expect(await runner(s3.client(s3.writer)).execute(completed.runId, 'pod-a')).toBe('Completed');
    expect(leftovers()).toEqual([]);

    // The second object's upload fails (lib-storage sends files this small as one PutObject).
    const failedUpload = await newExport();
    const putFails = failingClient('PutObjectCommand', 2, 'upload failed');
    expect(await runner(putFails).execute(failedUpload.runId, 'pod-a')).toBe('Retrying');
    expect(leftovers()).toEqual([]);

    const failedVerify = await newExport();
    expect(await runner(failingHeadClient(1)).execute(failedVerify.runId, 'pod-a')).toBe(
      'Retrying',
    );
    expect(leftovers()).toEqual([]);

    // Cancelled while its third file is copied (and the fourth not yet): the attempt ends Lost.
    const cancelled = await newExport();
    let copies = 0;
    recording.onCopy = () => {
      // Awaited: the third file cannot be committed before the cancel has landed.
      if (++copies === 3) return store.cancelExport(tenant, cancelled.exportId);
    };
    expect(await runner(s3.client(s3.writer)).execute(cancelled.runId, 'pod-a')).toBe('Lost');
    expect((await store.getRun(cancelled.runId))!.status).toBe('Cancelled');
    expect(leftovers()).toEqual([]);

    expect(copied.length).toBeGreaterThan(8);
    for (const csv of copied) expect(csv.startsWith(`${dir}/`)).toBe(true);
  });

  it("exports a run larger than the default line limit of DuckDB's CSV reader", async () => {
    const { exportId, runId } = await newExport(bigSession);
    const runner = new ExportRunner(
      store,
      traces,
      async () => target(s3.client(s3.writer)),
      SETTINGS,
      logger,
    );
    expect(await runner.execute(runId, 'pod-a')).toBe('Completed');
    expect(await exportedIds(exportId)).toEqual({ n: 2, d: 2 });
  });

  it("exports values holding the CSV dialect's special characters, NUL and lone surrogates as sent", async () => {
    const { exportId, runId } = await newExport(specialSession);
    const runner = new ExportRunner(
      store,
      traces,
      async () => target(s3.client(s3.writer)),
      SETTINGS,
      logger,
    );
    expect(await runner.execute(runId, 'pod-a')).toBe('Completed');
    const exported = await exportedRows(
      exportId,
      'id, name, error, tags, inputs::VARCHAR AS inputs, outputs::VARCHAR AS outputs',
    );
    // Parquet strings are UTF-8: a lone surrogate comes out as U+FFFD, all else exactly.
    const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
    const utf8 = (value: unknown): unknown =>
      typeof value === 'string'
        ? value.replace(LONE, '\ufffd')
        : Array.isArray(value)
          ? value.map(utf8)
          : value && typeof value === 'object'
            ? Object.fromEntries(Object.entries(value).map(([k, v]) => [utf8(k), utf8(v)]))
            : value;
    expect(exported.map((r) => r.id).sort()).toEqual([...sent.keys()].sort());
    for (const out of exported) {
      const run = sent.get(out.id as string)!;
      expect(out.name).toBe(utf8(run.name));
      expect(out.error).toBe(utf8(run.error));
      expect(out.tags).toEqual(utf8(run.tags));
      expect(JSON.parse(out.inputs as string)).toEqual(utf8(run.inputs));
      expect(JSON.parse(out.outputs as string)).toEqual(utf8(run.outputs));
    }
    expect(exported).toHaveLength(SPECIAL.length);
  });
});
