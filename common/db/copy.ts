// `COPY … TO STDOUT` into a local file, on a pool client. PostgreSQL sends one CopyData message
// per row; they are gathered into a large buffer and written in big slices, pausing the socket
// while a write is pending, so memory holds one buffer however many rows the copy has. Written
// buffers are reused: a fresh one per slice left hundreds of MB of garbage per file to the GC.
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import pg from 'pg';
import type { PoolClient } from './pool.js';

const BUFFER_BYTES = 4 << 20;

// pg's own conversion of a bound value to its text (not in its typings).
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue: (value: unknown) => unknown;
};

interface Connection {
  query(text: string): void;
  stream: { pause(): void; resume(): void };
}

/**
 * COPY takes no bind parameters: `$n` in `text` become the literals pg would have sent for
 * `values` (text of unknown type, the same value the server would have parsed from the bind).
 */
export function inlineParams(text: string, values: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const v = prepareValue(values[Number(n) - 1]) as string | Buffer | null;
    if (v === null) return 'NULL';
    if (Buffer.isBuffer(v)) throw new Error('COPY parameters cannot be binary');
    return pg.escapeLiteral(v);
  });
}

/** What a copy wrote: its rows, and the longest one (one CopyData message) in bytes. */
export interface CopyResult {
  rows: number;
  longestRow: number;
}

/** Runs `copySql` (a `COPY (…) TO STDOUT …`) and writes its output to `path`. */
export async function copyToFile(
  client: PoolClient,
  copySql: string,
  path: string,
): Promise<CopyResult> {
  const file = await open(path, 'w');
  try {
    return await new Promise<CopyResult>((resolve, reject) => {
      const spare: Buffer[] = [];
      let buffer: Buffer = Buffer.allocUnsafe(BUFFER_BYTES);
      let used = 0;
      let rows = 0;
      let longestRow = 0;
      let writing: Promise<unknown> = Promise.resolve();
      let failed: unknown;
      let connection: Connection | undefined;
      const flush = () => {
        if (!used) return;
        const written = buffer;
        const full = buffer.subarray(0, used);
        buffer = spare.pop() ?? Buffer.allocUnsafe(BUFFER_BYTES);
        used = 0;
        connection?.stream.pause();
        writing = writing
          .then(() => file.write(full))
          .then(
            () => {
              // An oversized buffer (one row longer than BUFFER_BYTES) is not kept.
              if (written.length === BUFFER_BYTES) spare.push(written);
              connection?.stream.resume();
            },
            (err: unknown) => {
              failed ??= err;
              connection?.stream.resume();
            },
          );
      };
      const submittable = {
        submit(c: Connection) {
          connection = c;
          c.query(copySql);
        },
        handleCopyData(msg: { chunk: Buffer }) {
          // The chunk is a view of pg's read buffer: copy it out before the next read.
          if (msg.chunk.length > longestRow) longestRow = msg.chunk.length;
          if (used + msg.chunk.length > buffer.length) {
            flush();
            if (msg.chunk.length > buffer.length) buffer = Buffer.allocUnsafe(msg.chunk.length);
          }
          used += msg.chunk.copy(buffer, used);
        },
        handleCommandComplete(msg: { text: string }) {
          rows = Number(/^COPY (\d+)/.exec(msg.text)?.[1] ?? 0);
        },
        handleReadyForQuery() {
          flush();
          writing.then(
            () => (failed ? reject(failed as Error) : resolve({ rows, longestRow })),
            reject,
          );
        },
        handleError(err: Error) {
          writing.then(() => reject(err), reject);
        },
        handleRowDescription() {},
        handleDataRow() {},
        handleEmptyQuery() {},
        handlePortalSuspended() {},
      };
      void client.query(submittable as never);
    });
  } finally {
    await file.close();
  }
}
