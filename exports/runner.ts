// The export-run engine: executes one run (a day of one export) from its last committed cursor.
// Rows stream from the trace store page by page in keyset order into Parquet row groups, and the
// file streams to S3 as a multipart upload. The cursor moves only after the object is uploaded
// and verified (HeadObject size and ETag), and file names depend only on the run and the file's
// position, so a crash at any point neither loses nor duplicates a row: the retry rewrites the
// same object from the same cursor.
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { SqlParams } from '../common/db/index.js';
import type { ExportRunnerSettings } from '../common/config/index.js';
import type { Logger } from '../common/logging/index.js';
import { compileFilter, type ExportedRun, type TraceStore } from '../traces/index.js';
import { decodeCursor, encodeCursor, fileName, runFolder, type Cursor } from './model.js';
import { EXPORT_FIELDS, ParquetRunWriter, type Compression } from './parquet.js';
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
    const fields = exp.export_fields?.length ? exp.export_fields : EXPORT_FIELDS;
    const folder = runFolder(
      '',
      { exportId: exp.id, tenantId: exp.tenant_id, sessionId: exp.session_id },
      new Date(run.start_time),
    );
    const page = (after: Cursor | undefined) => {
      const params = new SqlParams();
      const conditions = exp.filter ? [compileFilter(exp.filter, params)] : [];
      return this.traces.exportPage(
        exp.tenant_id,
        {
          sessionId: exp.session_id,
          start: run.start_time,
          end: run.end_time,
          after,
          limit: this.settings.rowGroupSize,
          conditions,
        },
        params,
      );
    };
    let committed = run.cursor;
    let seq = run.files.length;
    let rows = await page(decodeCursor(committed));
    while (rows.length) {
      if (isLost()) throw new LeaseLost();
      const key = target.key(`${folder}/${fileName(run.id, seq)}`);
      const { last, count, next } = await this.writeFile(
        run,
        owner,
        exp,
        fields,
        target,
        key,
        rows,
        page,
      );
      const cursor = encodeCursor({ startMicros: last.start_time, id: last.id });
      if (
        !(await this.store.commitFile(run.id, owner, committed, {
          cursor,
          file: target.pathOf(key),
          rows: count,
        }))
      )
        throw new LeaseLost();
      run.cursor = cursor;
      committed = cursor;
      seq++;
      rows = next;
    }
  }

  /**
   * Writes `first` and the pages after it to one object, up to `rowsPerFile` rows; returns the
   * last row written and the page after the file (empty at the window's end).
   */
  private async writeFile(
    run: RunRow,
    owner: string,
    exp: { compression: string },
    fields: readonly string[],
    target: ExportTarget,
    key: string,
    first: ExportedRun[],
    page: (after: Cursor | undefined) => Promise<ExportedRun[]>,
  ): Promise<{ last: ExportedRun; count: number; next: ExportedRun[] }> {
    const body = new PassThrough();
    const upload = new Upload({
      client: target.client,
      params: {
        Bucket: target.bucket,
        Key: key,
        Body: body,
        ContentType: 'application/vnd.apache.parquet',
      },
      partSize: this.settings.partSize,
      queueSize: this.settings.queueSize,
      leavePartsOnError: false,
    });
    let bytes = 0;
    const done = upload.done();
    // A failed upload stops reading: fail the writer too instead of waiting for a drain.
    done.catch((err: unknown) => body.destroy(err as Error));
    const writer = new ParquetRunWriter(fields, compressionOf(exp.compression), async (chunk) => {
      bytes += chunk.length;
      if (!body.write(chunk)) await once(body, 'drain');
    });
    try {
      let rows = first;
      let count = 0;
      let last = first.at(-1)!;
      await this.store.setPending(run.id, owner, {
        file_path: target.pathOf(key),
        from_cursor: run.cursor,
      });
      for (;;) {
        last = rows.at(-1)!;
        // Read the next page while this one is encoded.
        const full = rows.length === this.settings.rowGroupSize;
        const nextPage = full ? page({ startMicros: last.start_time, id: last.id }) : undefined;
        nextPage?.catch(() => undefined);
        await writer.writeRowGroup(rows);
        count += rows.length;
        rows = nextPage ? await nextPage : [];
        if (!rows.length || count >= this.settings.rowsPerFile) break;
      }
      await writer.finish();
      body.end();
      const result = await done;
      // Verify before the cursor moves: the object is there, whole, and the one just written.
      const head = await target.client.send(
        new HeadObjectCommand({ Bucket: target.bucket, Key: key }),
      );
      if (head.ContentLength !== bytes || (result.ETag && head.ETag !== result.ETag))
        throw new Error(
          `uploaded object ${key} does not verify: ${head.ContentLength} bytes (${head.ETag}), wrote ${bytes} (${result.ETag})`,
        );
      return { last, count, next: rows };
    } catch (err) {
      // No partial object: lib-storage aborts the multipart upload when a part fails; abort it
      // here too when the failure was ours (a read, the encoder).
      await upload.abort().catch(() => undefined);
      body.destroy();
      throw err;
    }
  }
}

function compressionOf(value: string): Compression {
  return value === 'zstandard' ? 'zstd' : (value as Compression);
}
