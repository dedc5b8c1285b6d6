// Bulk exports against a real S3-compatible server (MinIO) and a real `graphdock api` that
// executes the runs in-process: Parquet read back with DuckDB holding the same rows, columns and
// types as the trace store; filters and field subsets; the server killed in the middle of an
// export and restarted, with no duplicate or missing row; a scheduled export spawning its
// windows; cancel.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { useS3Server } from '../support/s3.js';
import { traceApiCall, useTraceApi } from '../support/traces.js';

const BUCKET = 'exports';
const KEY_V1 = `v1:${randomBytes(32).toString('base64')}`;

const s3 = useS3Server({ buckets: [BUCKET] });
const api = useTraceApi({
  env: {
    GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS: KEY_V1,
    GRAPHDOCK_BULK_EXPORT_S3_TIMEOUT_MS: '3000',
    GRAPHDOCK_EXPORT_POLL_MS: '100',
    GRAPHDOCK_EXPORT_RETRY_DELAY_MS: '300',
    GRAPHDOCK_EXPORT_ROWS_PER_FILE: '150',
    GRAPHDOCK_EXPORT_ROW_GROUP_SIZE: '50',
    GRAPHDOCK_EXPORT_SCHEDULE_GRACE_MS: '0',
    GRAPHDOCK_EXPORT_LEASE_MS: '5000',
  },
});
const tmp = mkdtempSync(join(tmpdir(), 'graphdock-bulk-exports-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Json = Record<string, unknown>;

const call = (method: string, path: string, json?: unknown) =>
  traceApiCall(api, method, path, json);

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const DAY1 = Date.parse('2026-11-01T00:00:00Z');
const DAY2 = Date.parse('2026-11-02T00:00:00Z');
const DAY3 = Date.parse('2026-11-03T00:00:00Z');

/** `n` runs of the session from `from`, traces of a chain and an llm child. */
function runs(sessionId: string, from: number, n: number, stepMs: number) {
  const out: Json[] = [];
  let root = '';
  for (let i = 0; i < n; i++) {
    const id = randomUUID();
    const start = new Date(from + i * stepMs + 0.5);
    const llm = i % 2 === 1;
    if (!llm) root = id;
    out.push({
      id,
      session_id: sessionId,
      name: llm ? 'ChatModel' : 'agent',
      run_type: llm ? 'llm' : 'chain',
      ...(llm ? { parent_run_id: root, trace_id: root } : {}),
      start_time: start.toISOString(),
      end_time: new Date(start.getTime() + 25).toISOString(),
      inputs: { question: `q${i} ${'lorem ipsum '.repeat(20)}`, n: i },
      outputs: llm
        ? { answer: `a${i}`, usage_metadata: { input_tokens: 10 + i, output_tokens: 5 } }
        : { answer: `a${i}` },
      extra: { metadata: { thread_id: `t${i % 7}` } },
      tags: ['bench', `tag${i % 3}`],
      ...(i % 25 === 0 ? { error: `failure ${i}` } : {}),
    });
  }
  return out;
}

async function ingest(list: Json[]) {
  for (let i = 0; i < list.length; i += 500) {
    const r = await call('POST', '/runs/batch', { post: list.slice(i, i + 500) });
    expect(r.status).toBe(202);
  }
}

let destinationId = '';
let sessionId = '';
let otherSessionId = '';

async function setup() {
  if (destinationId) return;
  const dest = await call('POST', '/bulk-exports/destinations', {
    destination_type: 's3',
    display_name: 'exports',
    config: { bucket_name: BUCKET, prefix: 'graphdock', endpoint_url: s3.endpoint },
    credentials: s3.writer,
  });
  expect(dest.status, JSON.stringify(dest.body)).toBe(200);
  destinationId = dest.body.id as string;
  sessionId = ((await call('POST', '/sessions', { name: `exp-${randomUUID()}` })).body
    .id as string)!;
  otherSessionId = (await call('POST', '/sessions', { name: `other-${randomUUID()}` })).body
    .id as string;
  await ingest([
    ...runs(sessionId, DAY1 + 3_600_000, 200, 60_000),
    ...runs(sessionId, DAY2 + 3_600_000, 100, 60_000),
    // Outside the window and another project: never exported.
    ...runs(sessionId, DAY3 + 60_000, 10, 1000),
    ...runs(otherSessionId, DAY1 + 60_000, 10, 1000),
  ]);
}

async function createExport(body: Json) {
  return call('POST', '/bulk-exports', {
    bulk_export_destination_id: destinationId,
    session_id: sessionId,
    format: 'Parquet',
    ...body,
  });
}

async function finished(id: string, ms = 90_000) {
  return until(
    `export ${id} to finish`,
    async () => {
      const r = await call('GET', `/bulk-exports/${id}`);
      return ['Completed', 'Failed', 'Cancelled'].includes(r.body.status as string)
        ? r.body
        : undefined;
    },
    ms,
  );
}

/** Downloads every object of the export and returns the local paths. */
async function download(exportId: string): Promise<string[]> {
  const keys = await s3.listKeys(BUCKET, `graphdock/export_id=${exportId}/`);
  const client = s3.client();
  const files: string[] = [];
  for (const key of keys) {
    const obj = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    const file = join(tmp, `${randomUUID()}.parquet`);
    writeFileSync(file, await obj.Body!.transformToByteArray());
    files.push(file);
  }
  return files;
}

async function duck(sql: string) {
  const conn = await (await DuckDBInstance.create()).connect();
  const reader = await conn.runAndReadAll(sql);
  const rows = reader.getRowObjectsJson();
  conn.closeSync();
  return rows as Json[];
}

const list = (files: string[]) => `[${files.map((f) => `'${f}'`).join(', ')}]`;

describe('bulk exports', () => {
  it('writes one run per day as Hive-laid Parquet that DuckDB reads back as the trace store holds it', async () => {
    await setup();
    const created = await createExport({
      start_time: new Date(DAY1).toISOString(),
      end_time: new Date(DAY3).toISOString(),
      compression: 'zstd',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.status).toBe('Created');
    const id = created.body.id as string;
    expect((await finished(id)).status).toBe('Completed');

    const runsOf = (await call('GET', `/bulk-exports/${id}/runs`)).body;
    expect(runsOf.map((r) => [r.status, r.start_time])).toEqual([
      ['Completed', '2026-11-01T00:00:00.000000Z'],
      ['Completed', '2026-11-02T00:00:00.000000Z'],
    ]);
    const results = runsOf.map((r) => (r.metadata as { result: Json }).result);
    expect(results.map((r) => r.rows_written)).toEqual([200, 100]);
    expect((results[0]!.exported_files as string[]).length).toBe(2);

    const keys = await s3.listKeys(BUCKET, `graphdock/export_id=${id}/`);
    expect(keys).toHaveLength(3);
    for (const key of keys)
      expect(key).toMatch(
        new RegExp(
          `^graphdock/export_id=${id}/tenant_id=${api.workspaceId}/session_id=${sessionId}/runs/year=2026/month=11/day=0[12]/[0-9a-f-]+-0000[01]\\.parquet$`,
        ),
      );
    expect(new Set(results.flatMap((r) => r.exported_files as string[]))).toEqual(
      new Set(keys.map((k) => `${BUCKET}/${k}`)),
    );

    const files = await download(id);
    const types = await duck(`DESCRIBE SELECT * FROM read_parquet(${list(files)})`);
    expect(Object.fromEntries(types.map((t) => [t.column_name, t.column_type]))).toEqual({
      id: 'VARCHAR',
      tenant_id: 'VARCHAR',
      session_id: 'VARCHAR',
      trace_id: 'VARCHAR',
      parent_run_id: 'VARCHAR',
      parent_run_ids: 'VARCHAR[]',
      reference_example_id: 'VARCHAR',
      name: 'VARCHAR',
      run_type: 'VARCHAR',
      start_time: 'TIMESTAMP WITH TIME ZONE',
      end_time: 'TIMESTAMP WITH TIME ZONE',
      status: 'VARCHAR',
      is_root: 'BOOLEAN',
      dotted_order: 'VARCHAR',
      trace_tier: 'VARCHAR',
      inputs: 'JSON',
      outputs: 'JSON',
      error: 'VARCHAR',
      extra: 'JSON',
      events: 'JSON',
      tags: 'VARCHAR[]',
      feedback_stats: 'JSON',
      total_tokens: 'BIGINT',
      prompt_tokens: 'BIGINT',
      completion_tokens: 'BIGINT',
      total_cost: 'DOUBLE',
      prompt_cost: 'DOUBLE',
      completion_cost: 'DOUBLE',
      first_token_time: 'TIMESTAMP WITH TIME ZONE',
    });

    const exported = await duck(
      `SELECT id, trace_id, parent_run_id, parent_run_ids, name, run_type, status, is_root,
         dotted_order, epoch_us(start_time)::VARCHAR AS start_us,
         epoch_us(end_time)::VARCHAR AS end_us, inputs::VARCHAR AS inputs,
         outputs::VARCHAR AS outputs, extra::VARCHAR AS extra, error, tags,
         total_tokens::INT AS total_tokens, prompt_tokens::INT AS prompt_tokens,
         completion_tokens::INT AS completion_tokens
       FROM read_parquet(${list(files)}) ORDER BY id`,
    );
    const { rows: stored } = await api.pool.query<Json>(
      `SELECT id::text, trace_id::text, parent_run_id::text, parent_run_ids::text[] AS parent_run_ids,
         name, run_type, status, is_root, dotted_order,
         (extract(epoch FROM start_time) * 1000000)::bigint::text AS start_us,
         (extract(epoch FROM end_time) * 1000000)::bigint::text AS end_us,
         inputs, outputs, extra, error, tags, total_tokens::int, prompt_tokens::int,
         completion_tokens::int
       FROM trace_runs WHERE session_id = $1 AND start_time >= $2 AND start_time < $3
       ORDER BY id::text`,
      [sessionId, new Date(DAY1).toISOString(), new Date(DAY3).toISOString()],
    );
    expect(stored).toHaveLength(300);
    expect(
      exported.map((r) => ({
        ...r,
        inputs: JSON.parse(r.inputs as string) as unknown,
        outputs: JSON.parse(r.outputs as string) as unknown,
        extra: JSON.parse(r.extra as string) as unknown,
      })),
    ).toEqual(stored);
  });

  it('answers 422 at the problem for an invalid filter or field, and honours filter, fields and codec', async () => {
    await setup();
    const window = {
      start_time: new Date(DAY1).toISOString(),
      end_time: new Date(DAY2).toISOString(),
    };
    const bad = await createExport({ ...window, filter: 'eq(run_type, "llm"' });
    expect(bad.status).toBe(422);
    expect((bad.body.detail as Json[])[0]!.loc).toEqual(['body', 'filter']);
    const unknownField = await createExport({
      ...window,
      filter: 'eq(nonsense, 1)',
    });
    expect(unknownField.status).toBe(422);
    expect(JSON.stringify(unknownField.body.detail)).toContain('nonsense');
    const nul = await createExport({ ...window, filter: 'eq(name, "a\u0000")' });
    expect(nul.status).toBe(422);
    expect((nul.body.detail as Json[])[0]!.loc).toEqual(['body', 'filter']);
    const badField = await createExport({ ...window, export_fields: ['id', 'secret'] });
    expect(badField.status).toBe(422);
    expect((badField.body.detail as Json[])[0]!.loc).toEqual(['body', 'export_fields', 1]);

    const ok = await createExport({
      ...window,
      filter: 'eq(run_type, "llm")',
      export_fields: ['id', 'run_type', 'start_time'],
      compression: 'snappy',
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await finished(ok.body.id as string)).status).toBe('Completed');
    const files = await download(ok.body.id as string);
    const rows = await duck(
      `SELECT run_type, count(*)::INT AS n FROM read_parquet(${list(files)}) GROUP BY 1`,
    );
    expect(rows).toEqual([{ run_type: 'llm', n: 100 }]);
    const columns = await duck(`DESCRIBE SELECT * FROM read_parquet(${list(files)})`);
    expect(columns.map((c) => c.column_name)).toEqual(['id', 'run_type', 'start_time']);
    const codecs = await duck(`SELECT DISTINCT compression FROM parquet_metadata(${list(files)})`);
    expect(codecs).toEqual([{ compression: 'SNAPPY' }]);
  });

  it('completes with no duplicate or missing row when the S3 server dies mid-export and comes back', async () => {
    await setup();
    const day = Date.parse('2026-10-20T00:00:00Z');
    await ingest(runs(sessionId, day, 2400, 20_000));
    const created = await createExport({
      start_time: new Date(day).toISOString(),
      end_time: new Date(day + 86_400_000).toISOString(),
      compression: 'gzip',
    });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    // Some files are in, the run is still going: stop the server under it.
    await until(
      'the first committed file',
      async () => {
        const [run] = (await call('GET', `/bulk-exports/${id}/runs`)).body;
        const result = (run?.metadata as { result: Json } | undefined)?.result;
        return (result?.rows_written as number) > 0 ? true : undefined;
      },
      60_000,
    );
    await s3.kill();
    const failed = await until('a failed attempt', async () => {
      const [run] = (await call('GET', `/bulk-exports/${id}/runs`)).body;
      return run?.errors ? run : undefined;
    });
    expect(failed.status).not.toBe('Completed');
    expect(Object.keys(failed.errors as Json)).toContain('retry_0');
    await s3.restart();
    expect((await finished(id)).status).toBe('Completed');

    const [run] = (await call('GET', `/bulk-exports/${id}/runs`)).body;
    const result = (run!.metadata as { result: Json }).result;
    expect(result.rows_written).toBe(2400);
    expect((run!.retry_number as number) >= 1).toBe(true);
    const keys = await s3.listKeys(BUCKET, `graphdock/export_id=${id}/`);
    // Every object is a committed file, each once: no partial or orphan object.
    expect(keys.map((k) => `${BUCKET}/${k}`).sort()).toEqual(
      [...(result.exported_files as string[])].sort(),
    );
    const files = await download(id);
    const [counts] = await duck(
      `SELECT count(*)::INT AS n, count(DISTINCT id)::INT AS d FROM read_parquet(${list(files)})`,
    );
    expect(counts).toEqual({ n: 2400, d: 2400 });
  });

  it('spawns a scheduled export window per interval once it has ended, and cancels', async () => {
    await setup();
    const hour = 3_600_000;
    // Three hours ended before now, and a fourth that has not: a start within seconds of an hour's
    // end would see the server's clock already past it. Wait such a turn out.
    const toNextHour = hour - (Date.now() % hour);
    if (toNextHour < 5000) await new Promise((r) => setTimeout(r, toNextHour + 200));
    const start = Math.floor(Date.now() / hour) * hour - 3 * hour;
    const created = await createExport({
      start_time: new Date(start).toISOString(),
      interval_hours: 1,
      compression: 'none',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.status).toBe('IntervalScheduled');
    const id = created.body.id as string;
    // Spawned at creation, or by the scheduler's next turn when its pass was already under way.
    const spawned = await until('three windows spawned', async () => {
      const all = (await call('GET', '/bulk-exports?limit=1000')).body.filter(
        (e) => e.source_bulk_export_id === id,
      );
      return all.length >= 3 ? all : undefined;
    });
    expect(spawned.map((e) => [e.start_time, e.end_time]).sort()).toEqual(
      [0, 1, 2].map((i) => [
        new Date(start + i * hour).toISOString().replace('Z', '000Z'),
        new Date(start + (i + 1) * hour).toISOString().replace('Z', '000Z'),
      ]),
    );
    for (const e of spawned) expect((await finished(e.id as string)).status).toBe('Completed');
    const runsOf = (await call('GET', `/bulk-exports/runs?source_bulk_export_id=${id}`)).body;
    expect(runsOf).toHaveLength(3);

    const cancelled = await call('PATCH', `/bulk-exports/${id}`, { status: 'Cancelled' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('Cancelled');
    expect((await call('PATCH', `/bulk-exports/${id}`, { status: 'Cancelled' })).status).toBe(409);
  });

  it('cancels a one-off export: its runs stop and it stays Cancelled', async () => {
    await setup();
    const created = await createExport({
      start_time: '2026-01-01T00:00:00Z',
      end_time: '2026-11-03T00:00:00Z',
      compression: 'gzip',
    });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    const cancelled = await call('PATCH', `/bulk-exports/${id}`, { status: 'Cancelled' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('Cancelled');
    await new Promise((r) => setTimeout(r, 1500));
    const runsOf = (await call('GET', `/bulk-exports/${id}/runs`)).body;
    expect(runsOf).toHaveLength(306);
    const statuses = new Set(runsOf.map((r) => r.status));
    expect([...statuses].every((s) => s === 'Cancelled' || s === 'Completed')).toBe(true);
    expect(runsOf.filter((r) => r.status === 'Cancelled').length).toBeGreaterThan(250);
    expect((await call('GET', `/bulk-exports/${id}`)).body.status).toBe('Cancelled');
    expect((await call('GET', `/bulk-exports/${randomUUID()}`)).status).toBe(404);
  });
});
