// The export-run engine: executes one run (a day of one export) from its last committed cursor.
// Rows stream from the trace store page by page in keyset order into Parquet row groups, and the
// file streams to S3 as a multipart upload. The cursor moves only after the object is uploaded
// and verified (HeadObject size and ETag), and file names depend only on the run and the file's
// position, so a crash at any point neither loses nor duplicates a row: the retry rewrites the
// same object from the same cursor.
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { SqlParams } from '../common/db/index.js';
import type { ExportRunnerSettings } from '../common/config/index.js';
import type { Logger } from '../common/logging/index.js';
import { compileFilter, type ExportedRun, type TraceStore } from '../traces/index.js';
import { decodeCursor, encodeCursor, fileName, runFolder, type Cursor } from './model.js';
import { EXPORT_FIELDS, encodeCsvChunk, type Compression } from './parquet.js';
import type { ExportRow, ExportStore, RunRow } from './store.js';

/** Where an export writes: a client with the destination's credentials and its bucket. */
export interface ExportTarget {
  client: S3Client;
  /** The `Bucket` of every command. */
  bucket: string;
  /** The object key of `path` under the destination's prefix. */
  key(path: string): string;
  /** The object's name in a run's `exported_files` (`bucket/key` unless the bucket is in the endpoint). */
  pathOf(key: string): string;
  close(): void;
}

/** Resolves a destination to a target, with the credentials current at this moment. */
export type TargetResolver = (tenantId: string, destinationId: string) => Promise<ExportTarget>;

/** How export runs are executed (`GRAPHDOCK_EXPORT_*`, parsed in common/config). */
export type RunnerSettings = ExportRunnerSettings;

export const DEFAULT_RUNNER_SETTINGS: RunnerSettings = {
  rowsPerFile: 250_000,
  rowGroupSize: 10_000,
  maxAttempts: 20,
  leaseMs: 60_000,
  retryDelayMs: 30_000,
  partSize: 8 * 1024 * 1024,
  queueSize: 2,
};

/** Destination errors no retry cures (LangSmith does not retry storage errors either). */
const FINAL_S3_ERRORS = new Set([
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'NoSuchBucket',
  'InvalidBucketName',
]);

export type RunOutcome = 'Completed' | 'Retrying' | 'Failed' | 'NotClaimed' | 'Lost';

class LeaseLost extends Error {}

export class ExportRunner {
  constructor(
    private readonly store: ExportStore,
    private readonly traces: TraceStore,
    private readonly resolveTarget: TargetResolver,
    private readonly settings: RunnerSettings,
    private readonly logger: Logger,
  ) {}

  /** Executes one attempt of run `runId` as `owner`. */
  async execute(runId: string, owner: string): Promise<RunOutcome> {
    const run = await this.store.claimRun(runId, owner, this.settings.leaseMs);
    if (!run) return 'NotClaimed';
    const log = this.logger.child({ exportRun: run.id, export: run.bulk_export_id });
    let lost = false;
    const heartbeat = setInterval(() => {
      this.store.renewLease(run.id, owner, this.settings.leaseMs).then(
        (held) => (lost ||= !held),
        (err: unknown) => log.warn({ err }, 'export run lease renewal failed'),
      );
    }, this.settings.leaseMs / 3);
    try {
      await this.copy(run, owner, () => lost);
      if (!(await this.store.completeRun(run.id, owner))) return 'Lost';
      log.info('export run completed');
      return 'Completed';
    } catch (err) {
      if (err instanceof LeaseLost) return 'Lost';
      const name = (err as { name?: string }).name ?? '';
      const message = err instanceof Error ? `${name}: ${err.message}` : String(err);
      log.warn({ err }, 'export run attempt failed');
      const status = await this.store.failAttempt(
        run.id,
        owner,
        message,
        this.settings.maxAttempts,
        FINAL_S3_ERRORS.has(name),
        this.settings.retryDelayMs,
      );
      return status === 'Failed' ? 'Failed' : status ? 'Retrying' : 'Lost';
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async copy(run: RunRow, owner: string, isLost: () => boolean): Promise<void> {
    const exp = await this.store.exportById(run.bulk_export_id);
    if (!exp) throw new Error(`export ${run.bulk_export_id} is gone`);
    // Resolved once: a run finishes with the credentials it started with.
    const target = await this.resolveTarget(exp.tenant_id, exp.bulk_export_destination_id);
    try {
      await this.copyTo(target, exp, run, owner, isLost);
    } finally {
      target.close();
    }
  }

  private async copyTo(
    target: ExportTarget,
    exp: ExportRow,
    run: RunRow,
    owner: string,
    isLost: () => boolean,
  ): Promise<void> {
    // In the schema's order, whatever the request's: the CSV columns and the encoder agree.
    const chosen = exp.export_fields?.length ? exp.export_fields : EXPORT_FIELDS;
    const fields = EXPORT_FIELDS.filter((f) => chosen.includes(f));
    const folder = runFolder(
      '',
      { exportId: exp.id, tenantId: exp.tenant_id, sessionId: exp.session_id },
      new Date(run.start_time),
    );
    // Filter parameters are numbered from 1 in each statement: a fresh set per query.
    const query = (after: Cursor | undefined) => {
      const params = new SqlParams();
      const conditions = exp.filter ? [compileFilter(exp.filter, params)] : [];
      return {
        params,
        query: {
          sessionId: exp.session_id,
          start: run.start_time,
          end: run.end_time,
          after,
          limit: this.settings.rowsPerFile,
          conditions,
        },
      };
    };
    const dir = await mkdtemp(join(this.settings.tempDir ?? tmpdir(), 'graphdock-export-'));
    let made = 0;
    // The end of each file is fixed in order (the 250,000th row after the previous end), so a
    // COPY reads exactly (after, end] and a retry reads the same rows; `frontier` is where the
    // next file starts, or null once no row is left.
    let frontier: Promise<Cursor | undefined | null> = Promise.resolve(decodeCursor(run.cursor));
    const copyNext = (): Promise<Chunk | undefined> => {
      const range = frontier.then(async (after) => {
        if (after === null) return null;
        const chunk = query(after);
        const end = await this.traces.exportChunkEnd(exp.tenant_id, chunk.query, chunk.params);
        return end ? { after, last: end.last } : null;
      });
      frontier = range.then((r) => r?.last ?? null);
      const copied = range.then(async (r) => {
        if (!r) return undefined;
        const csv = join(dir, `chunk-${made++}.csv`);
        const copy = query(r.after);
        const t0 = performance.now();
        const { rows, longestRow } = await this.traces.copyExportRows(
          exp.tenant_id,
          { ...copy.query, until: r.last },
          fields,
          csv,
          copy.params,
        );
        return { csv, rows, longestRow, last: r.last, copyMs: performance.now() - t0 };
      });
      copied.catch(() => undefined);
      return copied;
    };
    // PostgreSQL copies the next files while one is encoded and uploaded: two copies in flight
    // keep both cores busy at the start and while DuckDB encodes (copies are the longer part).
    const ahead = Array.from({ length: COPIES_AHEAD }, copyNext);
    try {
      let seq = run.files.length;
      for (;;) {
        const chunk = await ahead.shift();
        if (!chunk) break;
        if (isLost()) throw new LeaseLost();
        ahead.push(copyNext());
        const key = target.key(`${folder}/${fileName(run.id, seq)}`);
        const rows = await this.writeFile(run, owner, exp, fields, target, key, chunk);
        const cursor = encodeCursor(chunk.last);
        if (
          !(await this.store.commitFile(run.id, owner, run.cursor, {
            cursor,
            file: target.pathOf(key),
            rows,
          }))
        )
          throw new LeaseLost();
        run.cursor = cursor;
        seq++;
      }
    } finally {
      // Copies still running write into the folder: let them end before removing it.
      await Promise.all(ahead.map((p) => p.catch(() => undefined)));
      await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * Writes a copied chunk to one object: DuckDB encodes its CSV as Parquet in row groups, and
   * the file streams to S3 as a multipart upload, verified before this returns the rows it
   * holds. Local files are removed either way.
   */
  private async writeFile(
    run: RunRow,
    owner: string,
    exp: ExportRow,
    fields: readonly (keyof ExportedRun)[],
    target: ExportTarget,
    key: string,
    chunk: Chunk,
  ): Promise<number> {
    const parquet = chunk.csv.replace(/\.csv$/, '.parquet');
    let upload: Upload | undefined;
    try {
      await this.store.setPending(run.id, owner, {
        file_path: target.pathOf(key),
        from_cursor: run.cursor,
      });
      const t0 = performance.now();
      const rows = await encodeCsvChunk(
        chunk.csv,
        parquet,
        fields,
        compressionOf(exp.compression),
        this.settings.rowGroupSize,
        {
          longest: chunk.longestRow,
          average: (await stat(chunk.csv)).size / Math.max(1, chunk.rows),
        },
      );
      await rm(chunk.csv, { force: true });
      if (rows !== chunk.rows) throw new Error(`encoded ${rows} rows of the ${chunk.rows} copied`);
      const t1 = performance.now();
      const bytes = (await stat(parquet)).size;
      upload = new Upload({
        client: target.client,
        params: {
          Bucket: target.bucket,
          Key: key,
          Body: createReadStream(parquet),
          ContentLength: bytes,
          ContentType: 'application/vnd.apache.parquet',
        },
        partSize: this.settings.partSize,
        queueSize: this.settings.queueSize,
        leavePartsOnError: false,
      });
      const result = await upload.done();
      // Verify before the cursor moves: the object is there, whole, and the one just written.
      const head = await target.client.send(
        new HeadObjectCommand({ Bucket: target.bucket, Key: key }),
      );
      if (head.ContentLength !== bytes || (result.ETag && head.ETag !== result.ETag))
        throw new Error(
          `uploaded object ${key} does not verify: ${head.ContentLength} bytes (${head.ETag}), wrote ${bytes} (${result.ETag})`,
        );
      // Where a file's time goes, for tuning (bench/exports/run.ts prints it).
      this.logger.debug(
        {
          exportRun: run.id,
          rows,
          bytes,
          copyMs: Math.round(chunk.copyMs),
          encodeMs: Math.round(t1 - t0),
          uploadMs: Math.round(performance.now() - t1),
        },
        'export file written',
      );
      return rows;
    } catch (err) {
      // No partial object: lib-storage aborts the multipart upload when a part fails; abort it
      // here too when the failure was ours.
      await upload?.abort().catch(() => undefined);
      throw err;
    } finally {
      await rm(chunk.csv, { force: true });
      await rm(parquet, { force: true });
    }
  }
}

/** One file's rows, copied out of PostgreSQL into a local CSV and not yet encoded. */
/** Files copied out of PostgreSQL ahead of the one being encoded (each a CSV on local disk). */
const COPIES_AHEAD = 2;

interface Chunk {
  csv: string;
  rows: number;
  /** Its longest row in bytes (sizes the CSV reader's buffers). */
  longestRow: number;
  /** The cursor of its last row. */
  last: Cursor;
  copyMs: number;
}

function compressionOf(value: string): Compression {
  return value === 'zstandard' ? 'zstd' : (value as Compression);
}
