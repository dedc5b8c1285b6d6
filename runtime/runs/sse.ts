// Server-Sent Events for a run: `event:`, `data:` and `id:` lines (the id is the event's sequence
// number, so a client resumes with Last-Event-ID), heartbeat comments to keep proxies open, and
// backpressure: a reader that stops reading stops us reading the log, never grows a buffer.
import { once } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RunEventLog } from './event-log.js';

const HEARTBEAT_MS = 5000;

export interface StreamOptions {
  runId: string;
  afterSeq: number;
  headers: Record<string, string>;
  /** Called when the client goes away before the run's events ended. */
  onDisconnect?: () => void;
}

export async function streamRunEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  events: RunEventLog,
  options: StreamOptions,
): Promise<void> {
  reply.hijack();
  const res = reply.raw;
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
    for await (const event of events.read(options.runId, options.afterSeq, controller.signal)) {
      const frame = `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\nid: ${event.seq}\n\n`;
      if (!res.write(frame))
        await once(res, 'drain', { signal: controller.signal }).catch(() => undefined);
    }
    ended = true;
  } catch (err) {
    request.log.warn({ err, run_id: options.runId }, 'run stream failed');
  } finally {
    ended = true;
    clearInterval(heartbeat);
    request.raw.socket.off('close', onClose);
    res.end();
  }
}
