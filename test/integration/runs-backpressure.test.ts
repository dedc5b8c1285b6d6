// A client that stops reading its stream: the server stops reading the run's log for it instead
// of buffering what the run writes, so the run can write far more than the server's heap may
// hold; once the client reads again, every event arrives, in order, then the end.
import { Client } from '@langchain/langgraph-sdk';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { REPO_ROOT, startServer, type RunningServer } from '../support/server.js';

const FLOOD_CONFIG = join(REPO_ROOT, 'test', 'fixtures', 'flood', 'langgraph.json');
/** 100 MiB of events, more than the server may grow its heap to (below). */
const COUNT = 400;
const SIZE = 256 * 1024;
const OLD_SPACE_MIB = 128;

let db: TestDatabase;
let server: RunningServer;
let client: Client;
beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  server = await startServer({
    databaseUrl: db.url,
    config: FLOOD_CONFIG,
    // A server that held a stalled reader's events would run out of heap and die.
    node: { binary: process.execPath, flags: [`--max-old-space-size=${OLD_SPACE_MIB}`] },
  });
  client = new Client({ apiUrl: server.url, apiKey: null });
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

/** Sends a raw streaming request and resolves with the response head; the body is left unread. */
function openStream(body: unknown, path: string): Promise<{ socket: Socket; head: string }> {
  const json = JSON.stringify(body);
  const socket = connect(server.port, '127.0.0.1');
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
  );
  return new Promise((resolve, reject) => {
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.pause();
      // What came with the head goes back to the socket, to be read with the rest.
      socket.unshift(Buffer.from(received.slice(end + 4), 'latin1'));
      resolve({ socket, head: received.slice(0, end) });
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

/** Reads a chunked SSE body to its end: the `custom` events' indexes, in order. */
async function readCustomEvents(socket: Socket): Promise<number[]> {
  const chunks: Buffer[] = [];
  socket.resume();
  for await (const chunk of socket) {
    chunks.push(chunk as Buffer);
    if ((chunk as Buffer).toString('latin1').endsWith('0\r\n\r\n')) break;
  }
  socket.destroy();
  // Undo the chunked framing, then split the frames.
  let raw = Buffer.concat(chunks).toString('utf8');
  let body = '';
  for (;;) {
    const line = raw.indexOf('\r\n');
    const size = parseInt(raw.slice(0, line), 16);
    if (!size) break;
    body += raw.slice(line + 2, line + 2 + size);
    raw = raw.slice(line + 2 + size + 2);
  }
  // Heartbeats are comment lines of their own, between frames.
  body = body.replace(/^:.*\n/gm, '');
  const indexes: number[] = [];
  for (const frame of body.split('\n\n')) {
    if (!frame.startsWith('event: custom\n')) continue;
    const data = frame.split('\n').find((l) => l.startsWith('data: '))!;
    const parsed = JSON.parse(data.slice(6)) as { i: number; filler: string };
    expect(parsed.filler.length).toBe(SIZE);
    indexes.push(parsed.i);
  }
  return indexes;
}

describe('a stream whose client stops reading', () => {
  it('does not grow the server with the run, and sends everything once read again', async () => {
    const thread = await client.threads.create().catch((err: unknown) => {
      throw new Error(`${String(err)}\n${server.output()}`);
    });
    const { socket, head } = await openStream(
      {
        assistant_id: 'flood',
        input: { count: COUNT, size: SIZE, pause_ms: 3 },
        stream_mode: ['custom'],
      },
      `/threads/${thread.thread_id}/runs/stream`,
    );
    expect(head).toMatch(/^HTTP\/1.1 200/);
    const runId = /content-location: \/threads\/[^/]+\/runs\/([0-9a-f-]{36})/i.exec(head)?.[1];
    expect(runId).toBeDefined();

    // The run writes all its events while the client reads nothing.
    await client.runs.join(thread.thread_id, runId!).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${server.output()}`);
    });
    const run = await client.runs.get(thread.thread_id, runId!);
    expect(run.status).toBe('success');
    const state = await client.threads.getState<{ sent: number }>(thread.thread_id);
    expect(state.values.sent).toBe(COUNT);

    const indexes = await readCustomEvents(socket);
    expect(indexes).toEqual(Array.from({ length: COUNT }, (_, i) => i));
    expect(server.process.exitCode).toBeNull();
  }, 180_000);
});
