// Server-Sent Events for a run: `event:`, `data:` and `id:` lines (the id is the event's sequence
// number, so a client resumes with Last-Event-ID), heartbeat comments to keep proxies open, and
// backpressure: a reader that stops reading stops us reading the log, never grows a buffer.
import { once } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RunEventLog } from './event-log.js';
import { dataJson, type RunEvent } from './store.js';

const HEARTBEAT_MS = 5000;

export interface SseFrame {
  id?: string | number;
  event: string;
  data: unknown;
  /** `data` as JSON, when already encoded. */
  json?: string;
}

export interface SseOptions {
  headers: Record<string, string>;
  /** Called when the client goes away before the source ended. */
  onDisconnect?: () => void;
}

export interface StreamOptions extends SseOptions {
  runId: string;
  afterSeq: number;
  /** The request created the run just now (see RunEventLog.read). */
  created?: boolean;
}

/** One run's events, from after `afterSeq`, ids being their sequence numbers. */
export function streamRunEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  events: RunEventLog,
  options: StreamOptions,
): Promise<void> {
  return writeSse(
    request,
    reply,
    (signal) => framesOf(events.read(options.runId, options.afterSeq, signal, options.created)),
    options,
  );
}

async function* framesOf(events: AsyncIterable<RunEvent>): AsyncGenerator<SseFrame> {
  for await (const e of events)
    yield { id: e.seq, event: e.event, data: e.data, json: dataJson(e) };
}

export async function writeSse(
  request: FastifyRequest,
  reply: FastifyReply,
  source: (signal: AbortSignal) => AsyncIterable<SseFrame>,
  options: SseOptions,
): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  // The headers wait for the first frame (or the next turn of the event loop) and go out with
  // it at once; later frames of one turn (a step's events, say) share one socket write.
  let corked = true;
  let firstFrame = true;
  const uncork = () => {
    if (!corked) return;
    corked = false;
    res.uncork();
  };
  res.cork();
  setImmediate(uncork);
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
    ...options.headers,
  });
  res.flushHeaders();
  const controller = new AbortController();
  let ended = false;
  const onClose = () => {
    if (ended) return;
    controller.abort();
    options.onDisconnect?.();
  };
  request.raw.socket.once('close', onClose);
  res.once('close', onClose);
  const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
  try {
    for await (const event of source(controller.signal)) {
      const id = event.id === undefined ? '' : `id: ${event.id}\n`;
      const data = event.json ?? JSON.stringify(event.data);
      const frame = `event: ${event.event}\ndata: ${data}\n${id}\n`;
      if (!corked) {
        corked = true;
        res.cork();
        setImmediate(uncork);
      }
      const written = res.write(frame);
      if (firstFrame) {
        firstFrame = false;
        uncork();
      }
      if (!written) await once(res, 'drain', { signal: controller.signal }).catch(() => undefined);
    }
    ended = true;
  } catch (err) {
    request.log.warn({ err }, 'event stream failed');
  } finally {
    ended = true;
    // What a cork held back goes out before the end: since Node 22, a response's chunked
    // writes under a cork wait for the uncork, and end() alone sent the terminating chunk first.
    uncork();
    clearInterval(heartbeat);
    request.raw.socket.off('close', onClose);
    res.end();
  }
}
