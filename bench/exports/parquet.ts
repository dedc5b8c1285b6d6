// Parquet writer candidates for bulk export, each writing the same realistic runs (~2 KB, the
// 29 exportable fields typed as the trace store holds them) to a local file in row groups of
// `--group` rows, generated batch by batch so only the writer can make memory grow. Each
// candidate runs in its own process; peak RSS is that process's maxRSS.
//
//   npx tsx bench/exports/parquet.ts [--rows 1000000] [--group 10000] [--codec zstd]
//                                    [--only hyparquet,parquet-wasm,parquetjs,duckdb]
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { rowBatches } from './rows.js';
import { EXPORT_FIELDS, ParquetRunWriter, type Compression } from '../../exports/parquet.js';
import type { ExportRow } from '../../exports/parquet.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    group: { type: 'string', default: '10000' },
    codec: { type: 'string', default: 'zstd' },
    only: { type: 'string', default: 'hyparquet,parquet-wasm,parquetjs,duckdb' },
    candidate: { type: 'string' },
    out: { type: 'string' },
  },
});
const ROWS = Number(values.rows);
const GROUP = Number(values.group);
const CODEC = values.codec as Compression;

type Candidate = (file: string) => Promise<void>;

const hyparquet: Candidate = async (file) => {
  const handle = await open(file, 'w');
  const writer = new ParquetRunWriter(EXPORT_FIELDS, CODEC, async (chunk) => {
    await handle.write(chunk);
  });
  for (const rows of rowBatches(ROWS, GROUP)) await writer.writeRowGroup(rows);
  await writer.finish();
  await handle.close();
};

const parquetWasm: Candidate = async (file) => {
  const arrow = await import('apache-arrow');
  const wasm = await import('parquet-wasm/node');
  const micro = new arrow.TimestampMicrosecond('UTC');
  const list = () => new arrow.List(new arrow.Field('element', new arrow.Utf8(), false));
  const types: Record<string, InstanceType<typeof arrow.DataType>> = {
    start_time: micro,
    end_time: micro,
    first_token_time: micro,
    is_root: new arrow.Bool(),
    total_tokens: new arrow.Int64(),
    prompt_tokens: new arrow.Int64(),
    completion_tokens: new arrow.Int64(),
    total_cost: new arrow.Float64(),
    prompt_cost: new arrow.Float64(),
    completion_cost: new arrow.Float64(),
    parent_run_ids: list(),
    tags: list(),
  };
  // apache-arrow's micro-second setter takes milliseconds (see the reference notes): build the
  // BigInt64 buffers directly so no precision is lost.
  const column = (name: keyof ExportRow, rows: ExportRow[]) => {
    const type = types[name] ?? new arrow.Utf8();
    if (type instanceof arrow.Timestamp || type instanceof arrow.Int64) {
      const data = new BigInt64Array(rows.length);
      const valid = new Uint8Array(Math.ceil(rows.length / 8));
      let nulls = 0;
      rows.forEach((r, i) => {
        const v = r[name] as string | null;
        if (v === null) nulls++;
        else {
          data[i] = BigInt(v);
          valid[i >> 3]! |= 1 << (i & 7);
        }
      });
      return arrow.makeVector(
        arrow.makeData({
          type,
          length: rows.length,
          nullCount: nulls,
          data,
          nullBitmap: valid,
        } as never),
      );
    }
    return arrow.vectorFromArray(
      rows.map((r) => r[name]),
      type,
    );
  };
  const props = new wasm.WriterPropertiesBuilder()
    .setCompression(
      {
        none: wasm.Compression.UNCOMPRESSED,
        snappy: wasm.Compression.SNAPPY,
        gzip: wasm.Compression.GZIP,
        zstd: wasm.Compression.ZSTD,
      }[CODEC],
    )
    .setMaxRowGroupSize(GROUP)
    .build();
  const batches = rowBatches(ROWS, GROUP);
  const source = new ReadableStream({
    pull(controller) {
      const next = batches.next();
      if (next.done) return controller.close();
      const rows = next.value;
      const table = new arrow.Table(
        Object.fromEntries(EXPORT_FIELDS.map((name) => [name, column(name, rows)])),
      );
      const ipc = arrow.tableToIPC(table, 'stream');
      for (const batch of wasm.Table.fromIPCStream(ipc).recordBatches()) controller.enqueue(batch);
    },
  });
  const out = await wasm.transformParquetStream(source, props);
  await pipeline(Readable.fromWeb(out as never), createWriteStream(file));
};

const parquetjs: Candidate = async (file) => {
  const { ParquetSchema, ParquetWriter } = await import('@dsnp/parquetjs');
  // No ZSTD in parquetjs: GZIP stands in for it.
  const compression = { none: 'UNCOMPRESSED', gzip: 'GZIP', snappy: 'SNAPPY', zstd: 'GZIP' }[CODEC];
  const fields: Record<string, unknown> = {};
  const kinds: Record<string, string> = {
    start_time: 'TIMESTAMP_MICROS',
    end_time: 'TIMESTAMP_MICROS',
    first_token_time: 'TIMESTAMP_MICROS',
    is_root: 'BOOLEAN',
    total_tokens: 'INT64',
    prompt_tokens: 'INT64',
    completion_tokens: 'INT64',
    total_cost: 'DOUBLE',
    prompt_cost: 'DOUBLE',
    completion_cost: 'DOUBLE',
    inputs: 'JSON',
    outputs: 'JSON',
    extra: 'JSON',
    events: 'JSON',
    feedback_stats: 'JSON',
  };
  for (const name of EXPORT_FIELDS) {
    const repeated = name === 'tags' || name === 'parent_run_ids';
    fields[name] = {
      type: kinds[name] ?? 'UTF8',
      optional: !repeated,
      repeated,
      compression,
    };
  }
  const writer = await ParquetWriter.openFile(new ParquetSchema(fields as never), file, {
    rowGroupSize: GROUP,
  });
  const big = (v: string | null) => (v === null ? null : BigInt(v));
  for (const rows of rowBatches(ROWS, GROUP))
    for (const r of rows)
      await writer.appendRow({
        ...r,
        start_time: big(r.start_time),
        end_time: big(r.end_time),
        first_token_time: big(r.first_token_time),
        total_tokens: big(r.total_tokens),
        prompt_tokens: big(r.prompt_tokens),
        completion_tokens: big(r.completion_tokens),
      });
  await writer.close();
};

const duckdb: Candidate = async (file) => {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  // An on-disk database with a memory limit, so the appended rows spill instead of growing RSS.
  const dir = mkdtempSync(join(tmpdir(), 'duck-'));
  const db = await DuckDBInstance.create(join(dir, 'x.db'), {
    memory_limit: '200MB',
    threads: '2',
  });
  const conn = await db.connect();
  await conn.run(`CREATE TABLE runs (id VARCHAR, tenant_id VARCHAR, session_id VARCHAR,
    trace_id VARCHAR, parent_run_id VARCHAR, parent_run_ids VARCHAR[], reference_example_id VARCHAR,
    name VARCHAR, run_type VARCHAR, start_time BIGINT, end_time BIGINT, status VARCHAR,
    is_root BOOLEAN, dotted_order VARCHAR, trace_tier VARCHAR, inputs VARCHAR, outputs VARCHAR,
    error VARCHAR, extra VARCHAR, events VARCHAR, tags VARCHAR[], feedback_stats VARCHAR,
    total_tokens BIGINT, prompt_tokens BIGINT, completion_tokens BIGINT, total_cost DOUBLE,
    prompt_cost DOUBLE, completion_cost DOUBLE, first_token_time BIGINT)`);
  const { LIST, VARCHAR } = await import('@duckdb/node-api');
  const listType = LIST(VARCHAR);
  const appender = await conn.createAppender('runs');
  const big = (v: string | null) => (v === null ? null : BigInt(v));
  for (const rows of rowBatches(ROWS, GROUP)) {
    for (const r of rows) {
      for (const name of EXPORT_FIELDS) {
        const v = r[name];
        if (v === null) appender.appendNull();
        else if (Array.isArray(v)) appender.appendList(v, listType);
        else if (typeof v === 'boolean') appender.appendBoolean(v);
        else if (typeof v === 'number') appender.appendDouble(v);
        else if (name.endsWith('_time') || name.endsWith('_tokens')) appender.appendBigInt(big(v)!);
        else appender.appendVarchar(v);
      }
      appender.endRow();
    }
    appender.flushSync();
  }
  appender.closeSync();
  const time = (c: string) => `make_timestamp(${c})::TIMESTAMPTZ AS ${c}`;
  const codec = { none: 'uncompressed', gzip: 'gzip', snappy: 'snappy', zstd: 'zstd' }[CODEC];
  await conn.run(
    `COPY (SELECT * REPLACE (${time('start_time')}, ${time('end_time')},
       ${time('first_token_time')}, inputs::JSON AS inputs, outputs::JSON AS outputs,
       extra::JSON AS extra, events::JSON AS events, feedback_stats::JSON AS feedback_stats)
       FROM runs) TO '${file}' (FORMAT parquet, COMPRESSION ${codec}, ROW_GROUP_SIZE ${GROUP})`,
  );
  conn.closeSync();
  rmSync(dir, { recursive: true, force: true });
};

const CANDIDATES: Record<string, Candidate> = {
  hyparquet,
  'parquet-wasm': parquetWasm,
  parquetjs,
  duckdb,
};

if (values.candidate) {
  const run = CANDIDATES[values.candidate]!;
  const file = values.out!;
  const t0 = performance.now();
  await run(file);
  const seconds = (performance.now() - t0) / 1000;
  console.log(
    JSON.stringify({
      candidate: values.candidate,
      seconds,
      rowsPerSecond: Math.round(ROWS / seconds),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      fileMb: +(statSync(file).size / 1e6).toFixed(1),
    }),
  );
} else {
  const dir = mkdtempSync(join(tmpdir(), 'parquet-bench-'));
  console.log(`${ROWS} rows, row groups of ${GROUP}, codec ${CODEC}`);
  for (const name of values.only.split(',')) {
    const out = join(dir, `${name}.parquet`);
    const child = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        import.meta.filename,
        '--candidate',
        name,
        '--out',
        out,
        '--rows',
        String(ROWS),
        '--group',
        String(GROUP),
        '--codec',
        CODEC,
      ],
      { encoding: 'utf8', timeout: 15 * 60_000 },
    );
    const last = child.stdout.trim().split('\n').at(-1) ?? '';
    console.log(child.status === 0 ? last : `${name} failed: ${child.stderr.slice(-600)}`);
    // Read back with DuckDB as a check that the file is sound.
    if (child.status === 0) {
      const check = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import {DuckDBInstance} from '@duckdb/node-api';
           const c = await (await DuckDBInstance.create()).connect();
           const r = await c.runAndReadAll("SELECT count(*)::INT n, count(DISTINCT id)::INT d FROM '${out}'");
           console.log(JSON.stringify(r.getRowObjects()[0]));`,
        ],
        { encoding: 'utf8', cwd: join(import.meta.dirname, '..', '..') },
      );
      console.log(`  read back: ${check.stdout.trim() || check.stderr.slice(-300)}`);
    }
    rmSync(out, { force: true });
  }
  rmSync(dir, { recursive: true, force: true });
}
