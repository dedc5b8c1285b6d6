// Server-Sent Events for a run: `event:`, `data:` and `id:` lines (the id is the event's sequence
// number, so a client resumes with Last-Event-ID), heartbeat comments to keep proxies open, and
// backpressure: a reader that stops reading stops us reading the log, never grows a buffer.
import { once } from 'node:events';
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DATABASE_UNAVAILABLE, isUnavailable } from '../../common/db/index.js';
import { READ_FAILED, type RunEventLog } from './event-log.js';
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
  /** Only events of these stream modes (a join's `stream_mode`); all when undefined or empty. */
  modes?: readonly string[] | undefined;
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
    (signal) =>
      framesOf(
        events.read(options.runId, options.afterSeq, signal, { created: options.created }),
        options.modes?.length ? modeFilter(options.modes) : undefined,
      ),
    options,
  );
}

async function* framesOf(
  events: AsyncIterable<RunEvent>,
  keep?: (event: string) => boolean,
): AsyncGenerator<SseFrame> {
  for await (const e of events)
    if (!keep || keep(e.event))
      yield { id: e.seq, event: e.event, data: e.data, json: dataJson(e) };
}

/** Events that are about the run, not one of its modes: a filtered join still gets them. */
const MODELESS_EVENTS = new Set(['metadata', 'error', 'feedback']);

/**
 * Whether an event belongs to one of `modes`: its name, or its name before a subgraph's
 * `|namespace`; every `messages/...` event for `messages` or `messages-tuple`.
 */
function modeFilter(modes: readonly string[]): (event: string) => boolean {
  const wanted = new Set(modes);
  const messages = wanted.has('messages') || wanted.has('messages-tuple');
  return (event) => {
    const base = event.split('|', 1)[0] ?? event;
    return (
      MODELESS_EVENTS.has(base) ||
      wanted.has(base) ||
      (messages && (base === 'messages' || base.startsWith('messages/')))
    );
  };
}

/**
 * The headers that hooks set on the reply (CORS among them): a hijacked reply would not send
 * them, and a browser then refuses to read the stream.
 */
export function hookHeaders(reply: FastifyReply): OutgoingHttpHeaders {
  return reply.getHeaders() as OutgoingHttpHeaders;
}

/**
 * The `error` event that ends a stream whose source failed (its log could not be read). A
 * database that is away is said so, not with the driver's message (it names the server's address).
 */
function errorFrame(err: unknown): string {
  const message = isUnavailable(err)
    ? DATABASE_UNAVAILABLE
    : err instanceof Error
      ? err.message
      : String(err);
  const data = JSON.stringify({ error: READ_FAILED, message: `stream read failed: ${message}` });
  return `event: error\ndata: ${data}\n\n`;
}

/** Frames held for one turn of the event loop are sent early past this many characters. */
const MAX_HELD_CHARS = 64 * 1024;

export async function writeSse(
  request: FastifyRequest,
  reply: FastifyReply,
  /** Frames one by one, or in batches (the frames of a batch are held and sent together). */
  source: (signal: AbortSignal) => AsyncIterable<SseFrame | SseFrame[]>,
  options: SseOptions,
): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  // Every socket write costs a system call and loopback TCP work, so frames are held and sent
  // together: the headers with the first frame, at once; the later frames of one turn of the
  // event loop (a step's events, say) in one write; the last ones with the terminating chunk.
  let held = '';
  let firstFrame = true;
  let flushQueued = false;
  const flush = () => {
    flushQueued = false;
    if (held === '') return;
    const frames = held;
    held = '';
    res.write(frames);
  };
  const hold = (frame: string) => {
    held += frame;
    if (held.length > MAX_HELD_CHARS) flush();
    else if (!flushQueued) {
      flushQueued = true;
      setImmediate(flush);
    }
  };
  res.writeHead(200, {
    ...hookHeaders(reply),
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
    ...options.headers,
  });
  // A stream with nothing to send yet (a join on a quiet run, a subscription to a thread with no
  // run yet) still answers with its headers. `headersSent` cannot tell: it is true from
  // `writeHead` on, though the headers wait in the response for its first write.
  setImmediate(() => {
    if (firstFrame && !res.writableEnded) res.flushHeaders();
  });
  const controller = new AbortController();
  let ended = false;
  const onClose = () => {
    if (ended) return;
    controller.abort();
    options.onDisconnect?.();
  };
  request.raw.socket.once('close', onClose);
  res.once('close', onClose);
  // A comment line alone, with no blank line after it: a blank line ends an event, and the
  // official SDK's decoder turns a blank line after a comment into an event with no name.
  const heartbeat = setInterval(() => hold(': heartbeat\n'), HEARTBEAT_MS);
  try {
    for await (const item of source(controller.signal)) {
      for (const event of Array.isArray(item) ? item : [item]) {
        const id = event.id === undefined ? '' : `id: ${event.id}\n`;
        const data = event.json ?? JSON.stringify(event.data);
        const frame = `event: ${event.event}\ndata: ${data}\n${id}\n`;
        if (firstFrame) {
          firstFrame = false;
          res.write(frame);
        } else hold(frame);
      }
      // Backpressure: a reader that stops reading stops us reading the log.
      if (res.writableNeedDrain)
        await once(res, 'drain', { signal: controller.signal }).catch(() => undefined);
    }
    ended = true;
  } catch (err) {
    request.log.warn({ err }, 'event stream failed');
    // Said in the stream, so that a client does not take the end for the run's end.
    if (!controller.signal.aborted) hold(errorFrame(err));
  } finally {
    ended = true;
    clearInterval(heartbeat);
    request.raw.socket.off('close', onClose);
    const last = held;
    held = '';
    if (last === '') res.end();
    else res.end(last);
  }
}
