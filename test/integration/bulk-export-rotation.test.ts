// Credential rotation while an export runs (issue 22): the destination's credentials are
// replaced through the api (PATCH) while a run is between two of its files; that run finishes
// with the credentials it started with, and the run started after the PATCH uses the new ones.
// Which identity wrote is enforced by MinIO: identity A may write only day 1's folder, B only
// day 2's (both may write the validation objects under tmp/). So a runner that re-read the
// credentials mid-run writes day 1's next file as B and is denied; one that kept A for the next
// run is denied on day 2. The api's executor is left idle (a day between polls); the runs
// execute in this process through the real runner and destination service, on its database.
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../common/logging/index.js';
import {
  createDestinationService,
  ExportRunner,
  ExportStore,
  exportTargets,
  type RunnerSettings,
} from '../../exports/index.js';
import { TraceStore } from '../../traces/index.js';
import { useS3Server } from '../support/s3.js';
import { traceApiCall, useTraceApi } from '../support/traces.js';

const BUCKET = 'rotation';
const PREFIX = 'rot';
const KEY_V1 = `v1:${randomBytes(32).toString('base64')}`;
const s3 = useS3Server({ buckets: [BUCKET] });
const api = useTraceApi({
  env: {
    GRAPHDOCK_BULK_EXPORT_ENCRYPTION_KEYS: KEY_V1,
    // The api's own executor never polls here: this file executes the runs itself.
    GRAPHDOCK_EXPORT_POLL_MS: String(86_400_000),
  },
});
const logger = createLogger({ level: 'silent' });

type Json = Record<string, unknown>;

const call = (method: string, path: string, json?: unknown) =>
  traceApiCall(api, method, path, json);

/** An identity that may write objects only under `folders` of the bucket (and tmp/). */
function onlyUnder(folders: string[]) {
  const objects = [`arn:aws:s3:::${BUCKET}/${PREFIX}/tmp/*`, ...folders];
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Action: ['s3:ListBucket', 's3:GetBucketLocation', 's3:ListBucketMultipartUploads'],
        Resource: [`arn:aws:s3:::${BUCKET}`],
      },
      {
        Effect: 'Allow',
        Action: [
          's3:PutObject',
          's3:GetObject',
          's3:DeleteObject',
          's3:AbortMultipartUpload',
          's3:ListMultipartUploadParts',
        ],
        Resource: objects,
      },
    ],
  };
}

const DAY1 = Date.parse('2026-11-01T00:00:00Z');
const DAY2 = Date.parse('2026-11-02T00:00:00Z');

function runs(sessionId: string, from: number, n: number) {
  return Array.from({ length: n }, (_, i) => {
    const start = new Date(from + 3_600_000 + i * 60_000);
    return {
      id: randomUUID(),
      session_id: sessionId,
      name: 'agent',
      run_type: 'chain',
      start_time: start.toISOString(),
      end_time: new Date(start.getTime() + 25).toISOString(),
      inputs: { question: `q${i}` },
      outputs: { answer: `a${i}` },
    };
  });
}

/** A trace store whose `gateAt`-th file copy waits for `release` (the run is then mid-way). */
class GatedTraces extends TraceStore {
  copies = 0;
  gateAt = Infinity;
  reached!: () => void;
  readonly atGate = new Promise<void>((resolve) => (this.reached = resolve));
  release!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.release = resolve));

  override async copyExportRows(...args: Parameters<TraceStore['copyExportRows']>) {
    if (++this.copies === this.gateAt) {
      this.reached();
      await this.gate;
    }
    return super.copyExportRows(...args);
  }
}

describe('bulk export credential rotation', () => {
  it('lets a run finish with the credentials it started with while new runs use the replaced ones', async () => {
    const day = (ms: number) => {
      const d = new Date(ms);
      return `year=${d.getUTCFullYear()}/month=${String(d.getUTCMonth() + 1).padStart(2, '0')}/day=${String(d.getUTCDate()).padStart(2, '0')}`;
    };
    const A = await s3.addUser(
      'rota',
      onlyUnder([`arn:aws:s3:::${BUCKET}/${PREFIX}/*/${day(DAY1)}/*`]),
    );
    const B = await s3.addUser(
      'rotb',
      onlyUnder([`arn:aws:s3:::${BUCKET}/${PREFIX}/*/${day(DAY2)}/*`]),
    );

    const dest = await call('POST', '/bulk-exports/destinations', {
      destination_type: 's3',
      display_name: 'rotation',
      config: { bucket_name: BUCKET, prefix: PREFIX, endpoint_url: s3.endpoint },
      credentials: A,
    });
    expect(dest.status, JSON.stringify(dest.body)).toBe(200);
    const session = await call('POST', '/sessions', { name: `rot-${randomUUID()}` });
    const sessionId = session.body.id as string;
    const posted = await call('POST', '/runs/batch', {
      post: [...runs(sessionId, DAY1, 90), ...runs(sessionId, DAY2, 60)],
    });
    expect(posted.status).toBe(202);
    const created = await call('POST', '/bulk-exports', {
      bulk_export_destination_id: dest.body.id,
      session_id: sessionId,
      start_time: new Date(DAY1).toISOString(),
      end_time: new Date(DAY2 + 86_400_000).toISOString(),
      format: 'Parquet',
      compression: 'zstd',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const exportId = created.body.id as string;
    const exportRuns = (await call('GET', `/bulk-exports/${exportId}/runs`)).body;
    const byStart = [...exportRuns].sort((a, b) =>
      String((a.metadata as Json).start_time).localeCompare(
        String((b.metadata as Json).start_time),
      ),
    );
    const [day1Run, day2Run] = byStart.map((r) => r.id as string);

    const destinations = await createDestinationService(api.pool, logger, {
      encryptionKeys: KEY_V1,
      allowDefaultCredentials: false,
    });
    const traces = new GatedTraces(api.pool);
    const store = new ExportStore(api.pool);
    const settings: RunnerSettings = {
      rowsPerFile: 30,
      rowGroupSize: 10,
      maxAttempts: 1,
      leaseMs: 30_000,
      retryDelayMs: 0,
      partSize: 5 * 1024 * 1024,
      queueSize: 2,
    };
    const runner = new ExportRunner(store, traces, exportTargets(destinations), settings, logger);

    // Day 1 (three files) starts as A and stops before its second file's rows are read.
    traces.gateAt = 2;
    const first = runner.execute(day1Run!, 'rotation-test');
    await traces.atGate;
    await expect
      .poll(async () => (await store.getRun(day1Run!))?.rows_written, { timeout: 30_000 })
      .toBe(30);
    expect((await store.getRun(day1Run!))!.status).toBe('Running');

    const patched = await call('PATCH', `/bulk-exports/destinations/${dest.body.id as string}`, {
      credentials: B,
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    traces.release();

    // The run executing at the PATCH ends as A: B may not write day 1's folder.
    expect(await first).toBe('Completed');
    const done1 = (await store.getRun(day1Run!))!;
    expect(done1.errors).toEqual({});
    expect(done1.rows_written).toBe(90);
    expect(done1.files).toHaveLength(3);

    // The run started after the PATCH writes as B: A may not write day 2's folder.
    expect(await runner.execute(day2Run!, 'rotation-test')).toBe('Completed');
    const done2 = (await store.getRun(day2Run!))!;
    expect(done2.errors).toEqual({});
    expect(done2.rows_written).toBe(60);

    const keys = await s3.listKeys(BUCKET, `${PREFIX}/export_id=${exportId}/`);
    expect(keys.filter((k) => k.includes(day(DAY1)))).toHaveLength(3);
    expect(keys.filter((k) => k.includes(day(DAY2)))).toHaveLength(2);
    expect((await call('GET', `/bulk-exports/${exportId}`)).body.status).toBe('Completed');
  });
});
