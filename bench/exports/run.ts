// The bulk export benchmark (issue 22): N realistic runs (~2 KB each, bench/exports/rows.ts) in
// the real trace store schema of a PostgreSQL this bench starts, exported through the real
// export runner (COPY → DuckDB Parquet → multipart upload, cursor committed per verified file)
// to a MinIO it starts too (test/support/s3.ts). Reports wall time, rows/s and peak RSS of the
// exporting process (a child of its own, so seeding does not count), and reads the objects back
// with DuckDB (count, distinct ids). In the same run, as floor and baseline:
// - `copy floor`: PostgreSQL's `COPY (the same SELECT) TO STDOUT` of all the rows into a file;
// - `previous path`: pg row objects page by page into hyparquet-writer (ParquetRunWriter), the
//   runner's writer before this change, encoding to a discarded sink (no upload).
//
//   npx tsx bench/exports/run.ts [--rows 1000000] [--days 1] [--codec zstd]
//                                [--baseline-rows 200000] [--profile]
//                                [--repeat N] [--alt-env K=V,K2=V2]
//
// --repeat exports the same seeded rows N times (a fresh export each), --alt-env runs every
// second repeat with these environment variables, so two variants interleave in the same minutes.
//
// Seeding: 20,000 rows from the generator inserted with json_populate_recordset, then copied
// set-based (INSERT … SELECT) with fresh ids, traces and times until --rows, spread over --days.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { createPool, SqlParams, startPostgresServer } from '../../common/db/index.js';
import { createLogger } from '../../common/logging/index.js';
import {
  DEFAULT_RUNNER_SETTINGS,
  EXPORT_FIELDS,
  ExportRunner,
  ExportStore,
  migrateExportsDatabase,
  ParquetRunWriter,
} from '../../exports/index.js';
import { migrateTraceDatabase, TraceStore } from '../../traces/index.js';
import { startS3Server, type S3Credentials } from '../../test/support/s3.js';
import { cpuMs } from '../footprint/proc.js';
import { rowBatches } from './rows.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    days: { type: 'string', default: '1' },
    codec: { type: 'string', default: 'zstd' },
    'baseline-rows': { type: 'string', default: '200000' },
    profile: { type: 'boolean', default: false },
    repeat: { type: 'string', default: '1' },
    'alt-env': { type: 'string' },
    // Internal: the child that exports (or runs the baseline).
    child: { type: 'string' },
    spec: { type: 'string' },
  },
});

const BUCKET = 'bench';
const SEED_ROWS = 20_000;
const DAY0 = Date.parse('2026-11-01T00:00:00Z');
const day = (i: number) => new Date(DAY0 + i * 86_400_000).toISOString().slice(0, 10);

interface Spec {
  dbUrl: string;
  tenant: string;
  session: string;
  runIds: string[];
  endpoint: string;
  credentials: S3Credentials;
  start: string;
  end: string;
  rows: number;
}

const rss = () => Math.round(process.resourceUsage().maxRSS / 1024);

/**
 * GRAPHDOCK_BENCH_RSS_TRACE=1: the exporting child prints its RSS (anon and file-backed) and
 * V8's heap and external memory every 20 ms when RSS reaches a new high, to see what the peak is.
 */
function rssTrace() {
  const kb = (t: string, k: string) =>
    Math.round(Number(new RegExp(k + ':\\s+(\\d+)').exec(t)?.[1]) / 1024);
  let max = 0;
  const timer = setInterval(() => {
    const t = readFileSync('/proc/self/status', 'utf8');
    const m = process.memoryUsage();
    const r = kb(t, 'VmRSS');
    if (r > max) {
      max = Math.max(max, r);
      console.log(
        `RSS ${(performance.now() / 1000).toFixed(2)} rss=${r} anon=${kb(t, 'RssAnon')} file=${kb(t, 'RssFile')} heap=${Math.round(m.heapUsed / 1048576)} ext=${Math.round(m.external / 1048576)} ab=${Math.round(m.arrayBuffers / 1048576)}`,
      );
    }
  }, 20);
  return { stop: () => clearInterval(timer) };
}

/** The exporting process: executes the export's runs one after the other through the runner. */
async function exportChild(spec: Spec) {
  const trace = process.env.GRAPHDOCK_BENCH_RSS_TRACE ? rssTrace() : undefined;
  const pool = createPool({ url: spec.dbUrl, max: 4 });
  const { S3Client } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    endpoint: spec.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: {
      accessKeyId: spec.credentials.access_key_id,
      secretAccessKey: spec.credentials.secret_access_key,
    },
  });
  const runner = new ExportRunner(
    new ExportStore(pool),
    new TraceStore(pool),
    async () => ({
      client,
      bucket: BUCKET,
      key: (path) => `exports/${path}`,
      pathOf: (key) => `${BUCKET}/${key}`,
      close: () => undefined,
    }),
    DEFAULT_RUNNER_SETTINGS,
    createLogger({ level: 'debug' }),
  );
  const t0 = performance.now();
  const outcomes = [];
  for (const id of spec.runIds) outcomes.push(await runner.execute(id, 'bench'));
  const seconds = (performance.now() - t0) / 1000;
  await pool.end();
  trace?.stop();
  // CPU of the exporting process (DuckDB's thread included; PostgreSQL's is not), less noisy
  // than wall time on a loaded machine.
  const cpu = process.cpuUsage();
  const cpuSeconds = +((cpu.user + cpu.system) / 1e6).toFixed(1);
  return { seconds, outcomes, peakRssMb: rss(), cpuSeconds };
}

/** The previous path: pg row objects, 10,000 a page, into hyparquet-writer (no upload). */
async function previousChild(spec: Spec) {
  const pool = createPool({ url: spec.dbUrl, max: 2 });
  const traces = new TraceStore(pool);
  const t0 = performance.now();
  let bytes = 0;
  let rows = 0;
  let writer = new ParquetRunWriter(EXPORT_FIELDS, values.codec as 'zstd', async (c) => {
    bytes += c.length;
  });
  let after: { startMicros: string; id: string } | undefined;
  while (rows < spec.rows) {
    const page = await traces.exportPage(spec.tenant, {
      sessionId: spec.session,
      start: spec.start,
      end: spec.end,
      after,
      limit: Math.min(10_000, spec.rows - rows),
    });
    if (!page.length) break;
    await writer.writeRowGroup(page);
    rows += page.length;
    const last = page.at(-1)!;
    after = { startMicros: last.start_time, id: last.id };
    if (rows % DEFAULT_RUNNER_SETTINGS.rowsPerFile === 0) {
      await writer.finish();
      writer = new ParquetRunWriter(EXPORT_FIELDS, values.codec as 'zstd', async (c) => {
        bytes += c.length;
      });
    }
  }
  await writer.finish();
  const seconds = (performance.now() - t0) / 1000;
  await pool.end();
  return { seconds, rows, mb: +(bytes / 1e6).toFixed(1), peakRssMb: rss() };
}

/** The floor: PostgreSQL's COPY of the same columns for every row, into a local file. */
async function copyFloorChild(spec: Spec) {
  const pool = createPool({ url: spec.dbUrl, max: 2 });
  const traces = new TraceStore(pool);
  const file = join(mkdtempSync(join(tmpdir(), 'copy-floor-')), 'rows.csv');
  const t0 = performance.now();
  const last = await traces.exportChunkEnd(spec.tenant, {
    sessionId: spec.session,
    start: spec.start,
    end: spec.end,
    limit: spec.rows,
  });
  const { rows } = await traces.copyExportRows(
    spec.tenant,
    { sessionId: spec.session, start: spec.start, end: spec.end, limit: 0, until: last!.last },
    EXPORT_FIELDS,
    file,
    new SqlParams(),
  );
  const seconds = (performance.now() - t0) / 1000;
  const mb = +(statSync(file).size / 1e6).toFixed(1);
  rmSync(file);
  await pool.end();
  return { seconds, rows, mb, peakRssMb: rss() };
}

async function seed(
  url: string,
  tenant: ReturnType<typeof randomUUID>,
  session: ReturnType<typeof randomUUID>,
  rows: number,
  days: number,
) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const t0 = performance.now();
  // The generator's runs step 50 ms over ~42 minutes; copies shift by a fraction of that step
  // and by whole days, so every day holds rows/days runs interleaved in time.
  const seedRows = Math.min(SEED_ROWS, rows);
  for (const batch of rowBatches(seedRows, 2000, tenant, session, BigInt(DAY0) * 1000n)) {
    const json = batch.map((r) => ({
      ...r,
      start_time: new Date(Number(BigInt(r.start_time) / 1000n)).toISOString(),
      end_time: r.end_time && new Date(Number(BigInt(r.end_time) / 1000n)).toISOString(),
      first_token_time:
        r.first_token_time && new Date(Number(BigInt(r.first_token_time) / 1000n)).toISOString(),
      inputs: r.inputs && (JSON.parse(r.inputs) as unknown),
      outputs: r.outputs && (JSON.parse(r.outputs) as unknown),
      extra: r.extra && (JSON.parse(r.extra) as unknown),
      events: r.events && (JSON.parse(r.events) as unknown),
      received_at: new Date().toISOString(),
      thread_id: (JSON.parse(r.extra!) as { metadata: { thread_id: string } }).metadata.thread_id,
    }));
    await client.query(
      `INSERT INTO trace_runs SELECT * FROM json_populate_recordset(NULL::trace_runs, $1)`,
      [JSON.stringify(json)],
    );
  }
  await client.query('CREATE TEMP TABLE seed AS SELECT * FROM trace_runs');
  const copies = Math.ceil(rows / seedRows);
  const perDay = Math.ceil(copies / days);
  const STEP_US = 50_000;
  for (let k = 1; k < copies; k++) {
    const dayIndex = Math.floor(k / perDay);
    const shiftUs = dayIndex * 86_400_000_000 + (k % perDay) * Math.floor(STEP_US / perDay);
    const take = Math.min(seedRows, rows - k * seedRows);
    // Fresh ids (md5 of the original and the copy), the same trace shape, shifted times.
    const ren = (col: string) => `md5(${col}::text || '-${k}')::uuid`;
    await client.query(
      `INSERT INTO trace_runs (tenant_id, id, session_id, trace_id, parent_run_id, parent_run_ids,
         is_root, dotted_order, name, run_type, start_time, end_time, status, inputs, outputs,
         error, extra, events, tags, serialized, reference_example_id, trace_tier, prompt_tokens,
         completion_tokens, total_tokens, prompt_cost, completion_cost, total_cost,
         first_token_time, thread_id)
       SELECT tenant_id, ${ren('id')}, session_id, ${ren('trace_id')}, ${ren('parent_run_id')},
         ARRAY(SELECT ${ren('p')} FROM unnest(parent_run_ids) p), is_root,
         (SELECT string_agg(left(seg, -36) || ${ren('right(seg, 36)')}::text, '.' ORDER BY o)
            FROM unnest(string_to_array(dotted_order, '.')) WITH ORDINALITY AS t(seg, o)),
         name, run_type,
         start_time + ${shiftUs} * interval '1 microsecond',
         end_time + ${shiftUs} * interval '1 microsecond', status, inputs, outputs, error, extra,
         events, tags, serialized, reference_example_id, trace_tier, prompt_tokens,
         completion_tokens, total_tokens, prompt_cost, completion_cost, total_cost,
         first_token_time + ${shiftUs} * interval '1 microsecond', thread_id
       FROM (SELECT * FROM seed ORDER BY start_time, id LIMIT ${take}) s`,
    );
  }
  await client.query('VACUUM ANALYZE trace_runs');
  const { rows: count } = await client.query<{ n: string; mb: string }>(
    `SELECT count(*) AS n, round(avg(length(inputs::text) + length(outputs::text) +
       length(extra::text) + length(events::text) + length(dotted_order) + 200)) AS bytes
       FROM trace_runs WHERE tenant_id = $1`,
    [tenant],
  );
  await client.end();
  return { seconds: (performance.now() - t0) / 1000, ...count[0] };
}

function child(kind: string, spec: Spec, profileDir?: string, env: Record<string, string> = {}) {
  const args = ['--import', 'tsx'];
  if (profileDir) args.push('--cpu-prof', '--cpu-prof-dir', profileDir);
  args.push(import.meta.filename, '--child', kind, '--spec', JSON.stringify(spec));
  args.push('--codec', values.codec);
  const res = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    timeout: 60 * 60_000,
    env: { ...process.env, ...env },
  });
  const lines = res.stdout.trim().split('\n');
  const last = lines.find((l) => l.startsWith('RESULT '))?.slice(7) ?? '';
  // The runner's per-file timings (debug log lines).
  for (const line of lines)
    if (line.includes('export file written')) {
      const f = JSON.parse(line) as Record<string, number>;
      console.log(
        `  file: ${f.rows} rows, ${(f.bytes! / 1e6).toFixed(1)} MB, copy ${f.copyMs} ms, encode ${f.encodeMs} ms, upload+verify ${f.uploadMs} ms`,
      );
    }
  if (process.env.GRAPHDOCK_BENCH_RSS_TRACE)
    for (const line of lines) if (line.startsWith('RSS ')) console.log(`  ${line}`);
  if (res.status !== 0) throw new Error(`${kind} failed: ${res.stderr.slice(-2000)}`);
  return JSON.parse(last) as Record<string, unknown>;
}

async function main() {
  const rows = Number(values.rows);
  const days = Number(values.days);
  const dir = mkdtempSync(join(tmpdir(), 'graphdock-bench-exports-'));
  const pgServer = await startPostgresServer({ dataDir: join(dir, 'pg'), ephemeral: true });
  const s3 = await startS3Server({ buckets: [BUCKET] });
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
  try {
    console.log(
      `machine: ${cpus().length} × ${cpus()[0]?.model}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}; load ${load()}`,
    );
    const pool = createPool({ url: pgServer.url, max: 2 });
    await migrateTraceDatabase(pool);
    await migrateExportsDatabase(pool);
    const traces = new TraceStore(pool);
    await traces.ensurePartitions(Array.from({ length: days }, (_, i) => day(i)));
    const tenant = randomUUID();
    const session = randomUUID();
    const seeded = await seed(pgServer.url, tenant, session, rows, days);
    console.log(`seeded ${JSON.stringify(seeded)} in ${seeded.seconds.toFixed(1)} s`);

    // One export over the same rows per repeat: a fresh export id (its own objects), fresh runs.
    const newExport = async () => {
      const exportId = randomUUID();
      const runIds = Array.from({ length: days }, () => randomUUID());
      await new ExportStore(pool).createExport(
        {
          id: exportId,
          tenant_id: tenant,
          bulk_export_destination_id: randomUUID(),
          session_id: session,
          start_time: start,
          end_time: end,
          filter: null,
          format: 'Parquet',
          compression: values.codec,
          interval_hours: null,
          export_fields: null,
          status: 'Created',
          source_bulk_export_id: null,
          next_window_start: null,
        },
        runIds.map((id, i) => ({
          id,
          start_time: `${day(i)}T00:00:00Z`,
          end_time: `${day(i + 1)}T00:00:00Z`,
        })),
      );
      return { exportId, runIds };
    };
    const start = `${day(0)}T00:00:00Z`;
    const end = `${day(days)}T00:00:00Z`;
    const spec: Spec = {
      dbUrl: pgServer.url,
      tenant,
      session,
      runIds: [],
      endpoint: s3.endpoint,
      credentials: s3.writer,
      start,
      end,
      rows,
    };

    // CPU of the servers the export uses (PostgreSQL's backends end with their connections and
    // are counted in the postmaster's children's time), from /proc around each child.
    const postmaster = Number(
      readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0],
    );
    const serverCpu = () => ({ pg: cpuMs(postmaster), s3: cpuMs(s3.pid() ?? 0) });
    const floorBefore = serverCpu();
    const floor = child('copy-floor', spec);
    console.log(
      `copy floor (${rows} rows, load ${load()}): ${JSON.stringify(floor)}; CPU PostgreSQL ${((serverCpu().pg - floorBefore.pg) / 1000).toFixed(1)} s`,
    );

    const profileDir = values.profile ? join(process.cwd(), '.cache', 'export-profile') : undefined;
    if (profileDir) mkdirSync(profileDir, { recursive: true });
    // --alt-env K=V,…: every second repeat runs with these variables, so A and B interleave.
    const altEnv = Object.fromEntries(
      (values['alt-env'] ?? '')
        .split(',')
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
    const repeats = Number(values.repeat);
    for (let i = 0; i < repeats; i++) {
      const variant = i % 2 === 1 && Object.keys(altEnv).length ? altEnv : {};
      const { exportId, runIds } = await newExport();
      const loadBefore = load();
      const before = serverCpu();
      const exported = child('export', { ...spec, runIds }, profileDir, variant);
      const after = serverCpu();
      const secs = exported.seconds as number;
      console.log(
        `export ${i + 1}/${repeats}${Object.keys(variant).length ? ` with ${JSON.stringify(variant)}` : ''} through the runner (load ${loadBefore} → ${load()}): ${JSON.stringify(exported)}, ${Math.round(rows / secs)} rows/s; CPU PostgreSQL ${((after.pg - before.pg) / 1000).toFixed(1)} s, MinIO ${((after.s3 - before.s3) / 1000).toFixed(1)} s`,
      );

      // Read back with DuckDB.
      const keys = await s3.listKeys(BUCKET, `exports/export_id=${exportId}/`);
      const files: string[] = [];
      let objectBytes = 0;
      for (const key of keys) {
        const obj = await s3.client().send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
        const bytes = await obj.Body!.transformToByteArray();
        objectBytes += bytes.length;
        const file = join(dir, `${files.length}.parquet`);
        writeFileSync(file, bytes);
        files.push(file);
      }
      const conn = await (await DuckDBInstance.create()).connect();
      const check = await conn.runAndReadAll(
        `SELECT count(*)::INT AS n, count(DISTINCT id)::INT AS d
           FROM read_parquet([${files.map((f) => `'${f}'`).join(',')}])`,
      );
      conn.closeSync();
      for (const f of files) rmSync(f);
      console.log(
        `read back: ${keys.length} objects, ${(objectBytes / 1e6).toFixed(1)} MB, ${JSON.stringify(check.getRowObjectsJson()[0])}`,
      );
      console.log(
        `targets: ${secs.toFixed(1)} s (< 30 s: ${secs < 30 ? 'met' : 'NOT met'}), peak RSS ${String(exported.peakRssMb)} MB (< 400 MB: ${(exported.peakRssMb as number) < 400 ? 'met' : 'NOT met'})`,
      );
    }
    await pool.end();

    const baselineRows = Math.min(rows, Number(values['baseline-rows']));
    if (baselineRows > 0) {
      const previous = child('previous', { ...spec, rows: baselineRows });
      const ps = previous.seconds as number;
      console.log(
        `previous path, ${baselineRows} rows (load ${load()}): ${JSON.stringify(previous)}, ${Math.round(baselineRows / ps)} rows/s`,
      );
    }
  } catch (err) {
    console.error(err);
    process.exitCode = 1;
  } finally {
    await s3.close();
    await pgServer.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (values.child) {
  const spec = JSON.parse(values.spec!) as Spec;
  const run = { export: exportChild, previous: previousChild, 'copy-floor': copyFloorChild }[
    values.child as 'export'
  ];
  console.log(`RESULT ${JSON.stringify(await run(spec))}`);
  process.exit(0);
} else {
  await main();
}
