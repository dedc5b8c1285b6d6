// Parquet encoding of exported runs with hyparquet-writer (chosen in bench/exports/parquet.ts:
// the fastest candidate whose memory stays flat while streaming). One schema for every file:
// the run data format's exportable fields, typed as the trace store holds them.
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';
import { ParquetWriter, ByteWriter } from 'hyparquet-writer';
import type { DuckDBInstance } from '@duckdb/node-api';
import type { SchemaElement } from 'hyparquet';
import type { Writer } from 'hyparquet-writer/src/types.js';
import { EXPORT_CSV, type ExportedRun } from '../traces/index.js';

/** A run as the export reads it (the trace store's export page). */
export type ExportRow = ExportedRun;

type Kind = 'string' | 'json' | 'time' | 'int64' | 'double' | 'bool' | 'list';

/** The exportable fields (LangSmith's 29, in its order) and their Parquet kinds. */
export const EXPORT_COLUMNS: readonly (readonly [keyof ExportRow, Kind, boolean])[] = [
  ['id', 'string', false],
  ['tenant_id', 'string', false],
  ['session_id', 'string', false],
  ['trace_id', 'string', false],
  ['parent_run_id', 'string', true],
  ['parent_run_ids', 'list', false],
  ['reference_example_id', 'string', true],
  ['name', 'string', false],
  ['run_type', 'string', false],
  ['start_time', 'time', false],
  ['end_time', 'time', true],
  ['status', 'string', false],
  ['is_root', 'bool', false],
  ['dotted_order', 'string', false],
  ['trace_tier', 'string', true],
  ['inputs', 'json', true],
  ['outputs', 'json', true],
  ['error', 'string', true],
  ['extra', 'json', true],
  ['events', 'json', true],
  ['tags', 'list', false],
  ['feedback_stats', 'json', true],
  ['total_tokens', 'int64', true],
  ['prompt_tokens', 'int64', true],
  ['completion_tokens', 'int64', true],
  ['total_cost', 'double', true],
  ['prompt_cost', 'double', true],
  ['completion_cost', 'double', true],
  ['first_token_time', 'time', true],
];

export const EXPORT_FIELDS = EXPORT_COLUMNS.map(([name]) => name);

export const COMPRESSIONS = ['none', 'gzip', 'snappy', 'zstd'] as const;
export type Compression = (typeof COMPRESSIONS)[number];

const CODEC = {
  none: 'UNCOMPRESSED',
  gzip: 'GZIP',
  snappy: 'SNAPPY',
  zstd: 'ZSTD',
} as const;

function schemaOf(fields: readonly string[]): SchemaElement[] {
  const schema: SchemaElement[] = [{ name: 'root', num_children: fields.length }];
  for (const [name, kind, nullable] of EXPORT_COLUMNS) {
    if (!fields.includes(name)) continue;
    const repetition_type = nullable ? 'OPTIONAL' : 'REQUIRED';
    switch (kind) {
      case 'string':
        schema.push({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type });
        break;
      case 'json':
        // Text as stored: encoded as UTF8 (hyparquet-writer would JSON.stringify a JSON column's
        // values again), annotated JSON in the footer by finish().
        schema.push({
          name,
          type: 'BYTE_ARRAY',
          converted_type: 'UTF8',
          logical_type: { type: 'JSON' },
          repetition_type,
        });
        break;
      case 'time':
        schema.push({
          name,
          type: 'INT64',
          logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
          repetition_type,
        });
        break;
      case 'int64':
        schema.push({ name, type: 'INT64', repetition_type });
        break;
      case 'double':
        schema.push({ name, type: 'DOUBLE', repetition_type });
        break;
      case 'bool':
        schema.push({ name, type: 'BOOLEAN', repetition_type });
        break;
      case 'list':
        schema.push(
          { name, repetition_type, converted_type: 'LIST', num_children: 1 },
          { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
          {
            name: 'element',
            type: 'BYTE_ARRAY',
            converted_type: 'UTF8',
            repetition_type: 'REQUIRED',
          },
        );
        break;
    }
  }
  return schema;
}

type Compress = (input: Uint8Array) => Uint8Array;
let zstd: Compress | undefined;

/**
 * ZSTD: Node's own zlib from 22.15 on (the image's Node 24); on Node 20 the optional native
 * `zstd-napi`, loaded only when a zstd export runs.
 */
function zstdCompress(): Compress {
  if (zstd) return zstd;
  const native = (zlib as { zstdCompressSync?: Compress }).zstdCompressSync;
  zstd = native
    ? (input) => native(input)
    : (createRequire(import.meta.url)('zstd-napi') as { compress: Compress }).compress;
  return zstd;
}

const big = (v: string | null) => (v === null ? null : BigInt(v));

/**
 * Writes one Parquet file row group by row group. Bytes leave through `sink` after each row
 * group (and at the end), so memory holds one row group and its encoding, never the file.
 */
export class ParquetRunWriter {
  private readonly writer: ParquetWriter;
  private readonly bytes: ByteWriter;
  private readonly columns: (readonly [keyof ExportRow, Kind, boolean])[];
  rows = 0;

  constructor(
    fields: readonly string[],
    compression: Compression,
    private readonly sink: (chunk: Uint8Array) => Promise<void>,
  ) {
    this.columns = EXPORT_COLUMNS.filter(([name]) => fields.includes(name));
    const bytes = new ByteWriter(1 << 20) as ByteWriter & Pick<Writer, 'flush'>;
    // Hand the encoded row group to the sink and start the buffer over (hyparquet awaits this).
    const flush = (): Promise<void> | undefined => {
      const chunk = new Uint8Array(bytes.buffer.slice(0, bytes.index));
      bytes.index = 0;
      return chunk.length ? this.sink(chunk) : undefined;
    };
    bytes.flush = flush;
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- awaited by hyparquet-writer
    bytes.finish = flush;
    this.bytes = bytes;
    this.writer = new ParquetWriter({
      writer: this.bytes,
      schema: schemaOf(fields),
      codec: CODEC[compression],
      compressors: {
        GZIP: (input) => zlib.gzipSync(input),
        ZSTD: (input) => zstdCompress()(input),
      },
      statistics: false,
      createdBy: 'graphdock',
    });
  }

  /** Encodes `rows` as one row group and waits until the sink took it. */
  async writeRowGroup(rows: ExportRow[]): Promise<void> {
    if (!rows.length) return;
    const columnData = this.columns.map(([name, kind]) => {
      const data = new Array<unknown>(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const v = rows[i]![name];
        data[i] = kind === 'time' || kind === 'int64' ? big(v as string | null) : v;
      }
      return { name, data: data as never };
    });
    this.rows += rows.length;
    await this.writer.write({ columnData, rowGroupSize: rows.length });
  }

  async finish(): Promise<void> {
    for (const element of this.writer.schema)
      if (element.logical_type?.type === 'JSON') element.converted_type = 'JSON';
    await this.writer.finish();
  }
}

// The read_csv type of each kind, and the expression that gives the column its Parquet type.
const CSV_TYPE: Record<Kind, string> = {
  string: 'VARCHAR',
  json: 'JSON',
  time: 'BIGINT',
  int64: 'BIGINT',
  double: 'DOUBLE',
  bool: 'BOOLEAN',
  list: 'VARCHAR',
};

// The trace store keeps NUL and lone surrogates as U+FDD0 and four hex digits, and U+FDD0 itself
// doubled (common/db/jsonb.ts); a file holds what was sent. Parquet strings and DuckDB's JSON
// are UTF-8, which has no lone surrogates: those become U+FFFD, as a UTF-8 encoder makes them.
// The first step writes a doubled mark as the mark and its own code, so that every mark is
// followed by four hex digits.
const MARK = '\ufdd0';
const marked = (expr: string) => `regexp_replace(${expr}, '${MARK}${MARK}', '${MARK}fdd0', 'g')`;
const codeAt = (piece: string) => `TRY_CAST('0x' || ${piece}[1:4] AS INTEGER)`;
/** A string column as sent. */
const decodedText = (expr: string) =>
  `CASE WHEN contains(${expr}, '${MARK}') THEN array_to_string(list_transform(
     string_split(${marked(expr)}, '${MARK}'),
     (p, i) -> CASE WHEN i = 1 THEN p
       ELSE coalesce(CASE WHEN ${codeAt('p')} BETWEEN 55296 AND 57343 THEN '\ufffd'
                          ELSE chr(${codeAt('p')}) END, '${MARK}' || p[1:4]) || p[5:] END), '')
   ELSE ${expr} END`;
/** A JSON column with its escapes as sent (`\\u0000`). */
const decodedJson = (expr: string) =>
  `CASE WHEN contains(${expr}::VARCHAR, '${MARK}') THEN regexp_replace(regexp_replace(
     ${marked(`${expr}::VARCHAR`)}, '${MARK}[dD][89a-fA-F][0-9a-fA-F]{2}', '\\\\ufffd', 'g'),
     '${MARK}([0-9a-fA-F]{4})', '\\\\u\\1', 'g')::JSON
   ELSE ${expr} END`;
/** Columns of free text (the rest of the strings and lists are ids and dotted orders). */
const FREE_TEXT = new Set(['name', 'run_type', 'status', 'trace_tier', 'error', 'tags']);
function column(name: string, kind: Kind): string {
  const free = FREE_TEXT.has(name);
  switch (kind) {
    case 'time':
      return `make_timestamp(${name})::TIMESTAMPTZ AS ${name}`;
    case 'list': {
      const list = `from_json(${name}, '["VARCHAR"]')`;
      return free
        ? `CASE WHEN contains(${name}, '${MARK}')
             THEN list_transform(${list}, x -> ${decodedText('x')}) ELSE ${list} END AS ${name}`
        : `${list} AS ${name}`;
    }
    case 'string':
      return free ? `${decodedText(name)} AS ${name}` : name;
    case 'json':
      return `${decodedJson(name)} AS ${name}`;
    case 'int64':
    case 'double':
    case 'bool':
      return name;
  }
}

const DUCKDB_CODEC = {
  none: 'uncompressed',
  gzip: 'gzip',
  snappy: 'snappy',
  zstd: 'zstd',
} as const;

/**
 * A DuckDB instance for one file, closed after it: memory it allocated goes back with it, so
 * the exporting process does not grow file after file. Loaded on the first export (a native
 * library the other commands never need); one thread, bounded memory.
 */
async function openDuckdb(memoryLimitBytes: number): Promise<DuckDBInstance> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  return DuckDBInstance.create(':memory:', {
    threads: '1',
    memory_limit: `${Math.ceil(memoryLimitBytes / MiB)}MiB`,
  });
}

const quote = (path: string) => `'${path.replaceAll("'", "''")}'`;

const MiB = 1024 * 1024;

/**
 * DuckDB's settings for a file whose longest row has `longestRow` bytes and whose row groups
 * hold about `rowGroupBytes`. DuckDB's default CSV buffers (32 MiB, several held at once) were
 * the largest part of the exporting process's peak RSS; 4 MiB buffers encode as fast. DuckDB
 * refuses a line over `max_line_size` (2 MiB by default) and needs a buffer of at least twice
 * the longest line (a line may straddle two), so both grow with a file's longest row. The
 * memory limit grows with both: a 10 MB run needed more than 8 buffers' worth, and a row group
 * near the limit made the encode spill and take three times the CPU (50,000 rows of 1.6 KB at
 * 128 MiB), which three row groups' worth avoids.
 */
export function duckdbLimits(
  longestRow: number,
  rowGroupBytes = 0,
): {
  maxLineSize: number;
  bufferSize: number;
  memoryLimit: number;
} {
  const maxLineSize = Math.max(2 * MiB, longestRow + 1024);
  const bufferSize = Math.max(4 * MiB, 2 * maxLineSize);
  const memoryLimit = Math.max(128 * MiB, 16 * bufferSize, Math.ceil(3 * rowGroupBytes));
  return { maxLineSize, bufferSize, memoryLimit };
}

/**
 * Encodes a CSV chunk written by the trace store (`copyExportRows` in `EXPORT_CSV`, columns `fields` in the
 * export's order, rows of at most `rows.longest` bytes and `rows.average` on average) as one Parquet file with DuckDB's native
 * writer: the same schema as ParquetRunWriter's (strings, JSON, TIMESTAMP(MICROS, UTC), int64,
 * double, boolean, LIST<UTF8>). Returns the rows written.
 */
export async function encodeCsvChunk(
  csvPath: string,
  parquetPath: string,
  fields: readonly string[],
  compression: Compression,
  rowGroupSize: number,
  rows: { longest: number; average: number },
): Promise<number> {
  const columns = EXPORT_COLUMNS.filter(([name]) => fields.includes(name));
  const types = columns.map(([name, kind]) => `'${name}': '${CSV_TYPE[kind]}'`).join(', ');
  const { maxLineSize, bufferSize, memoryLimit } = duckdbLimits(
    rows.longest,
    rowGroupSize * rows.average,
  );
  // PostgreSQL's CSV in the trace store's dialect: NULL is an empty unquoted field, an empty
  // string an empty quoted one (allow_quoted_nulls off keeps it a string); quotes are doubled.
  const { delimiter, quote: q } = EXPORT_CSV;
  const source = `read_csv(${quote(csvPath)}, header = false, auto_detect = false,
    delim = '${delimiter}', quote = '${q}', escape = '${q}', allow_quoted_nulls = false, columns = {${types}},
    max_line_size = ${maxLineSize}, buffer_size = ${bufferSize})`;
  // An instance per file: runs executing side by side each get their own.
  const db = await openDuckdb(memoryLimit);
  const conn = await db.connect();
  try {
    // Epoch microseconds to TIMESTAMPTZ exactly, whatever the host's zone.
    await conn.run(`SET TimeZone = 'UTC'`);
    const result = await conn.run(
      `COPY (SELECT ${columns.map(([name, kind]) => column(name, kind)).join(', ')} FROM ${source})
         TO ${quote(parquetPath)} (FORMAT parquet, COMPRESSION ${DUCKDB_CODEC[compression]},
         ROW_GROUP_SIZE ${Math.max(1, Math.floor(rowGroupSize))})`,
    );
    return Number(result.rowsChanged);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}
