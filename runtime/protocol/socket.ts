// One WebSocket on `GET /threads/{id}/stream/events`: command frames in; replies and the events
// of its subscriptions out. Each subscription reads the thread's durable event stream itself
// (from the newest run, or from `since`), so a socket on any replica sees the same events.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import { DATABASE_UNAVAILABLE, isUnavailable } from '../../common/db/index.js';
import { AppError } from '../../common/errors/index.js';
import {
  CARRIED_PROTOCOL_COMMAND,
  JSON_TOO_DEEP,
  jsonDepthExceeds,
  mayHoldUnstorable,
  unstorableStrings,
} from '../../common/json/index.js';
import { ProtocolError, errorEnvelope, invalidArgument, issueMessage, pathText } from './errors.js';
import { matches } from './filter.js';
import { CommandEnvelope, SubscribeParams, UnsubscribeParams } from './schemas.js';
import type { ProtocolService } from './service.js';
import { encodeEvent } from './thread-events.js';

/** Past this much unsent data a subscription waits for the socket to drain: no unbounded buffers. */
const MAX_BUFFERED = 1024 * 1024;
const DRAIN_POLL_MS = 10;

export function openSession(
  service: ProtocolService,
  threadId: string,
  socket: WebSocket,
  /** The connection under `socket`: a batch's frames are corked into one write. */
  connection: Duplex,
  headers: IncomingHttpHeaders,
  log: FastifyBaseLogger,
): void {
  const subscriptions = new Map<string, AbortController>();
  const send = (frame: unknown) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
  };
  const drained = async (signal: AbortSignal) => {
    while (socket.bufferedAmount > MAX_BUFFERED && !signal.aborted)
      await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
  };

  const subscribe = async (id: number, params: unknown) => {
    const parsed = SubscribeParams.safeParse(params ?? {});
    if (!parsed.success)
      throw invalidArgument(`subscription.subscribe: ${issueMessage(parsed.error)}`);
    const filter = parsed.data;
    const controller = new AbortController();
    const cursor = service.subscriptionCursor(threadId, filter.since, controller.signal);
    const start = await cursor.catch((err: unknown) => {
      controller.abort();
      throw err;
    });
    const subscriptionId = randomUUID();
    subscriptions.set(subscriptionId, controller);
    // The reply comes first, then the replayed events, then live ones.
    send({
      type: 'success',
      id,
      result: { subscription_id: subscriptionId, replayed_events: 0 },
      meta: { thread_id: threadId },
    });
    try {
      for await (const batch of service.events(threadId, start, controller.signal)) {
        // Without the cork each frame is its own system call (ws corks only header and payload).
        connection.cork();
        try {
          for (const { event, paramsJson } of batch)
            if (matches(event, filter) && socket.readyState === socket.OPEN)
              socket.send(encodeEvent(event, paramsJson));
        } finally {
          connection.uncork();
        }
        if (socket.bufferedAmount > MAX_BUFFERED) await drained(controller.signal);
      }
    } catch (err) {
      if (controller.signal.aborted) return;
      log.warn({ err, thread_id: threadId }, 'protocol subscription failed');
      send({ type: 'error', id: null, error: 'unknown_error', message: 'event stream failed' });
    } finally {
      subscriptions.delete(subscriptionId);
    }
  };

  const handle = async (text: string) => {
    // The checks a command sent over HTTP gets from the body parser (runtime/http/json-input.ts).
    if (jsonDepthExceeds(text)) {
      send(errorEnvelope(null, invalidArgument(JSON_TOO_DEEP)));
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      send(errorEnvelope(null, invalidArgument('frame is not valid JSON')));
      return;
    }
    const parsed = CommandEnvelope.safeParse(json);
    if (!parsed.success) {
      send(
        errorEnvelope(null, invalidArgument(`malformed command: ${issueMessage(parsed.error)}`)),
      );
      return;
    }
    const command = parsed.data;
    const [unstorable] = mayHoldUnstorable(text)
      ? unstorableStrings(json, CARRIED_PROTOCOL_COMMAND, 1)
      : [];
    if (unstorable) {
      send(
        errorEnvelope(
          command.id,
          invalidArgument(`${pathText(unstorable.path)}: ${unstorable.msg}`),
        ),
      );
      return;
    }
    try {
      if (command.method === 'subscription.subscribe') {
        await subscribe(command.id, command.params);
        return;
      }
      if (command.method === 'subscription.unsubscribe') {
        const { subscription_id } = UnsubscribeParams.parse(command.params ?? {});
        const subscription = subscriptions.get(subscription_id);
        if (!subscription)
          throw new ProtocolError(
            'no_such_subscription',
            `No subscription "${subscription_id}" on this connection.`,
          );
        subscription.abort();
        subscriptions.delete(subscription_id);
        send({ type: 'success', id: command.id, result: {}, meta: { thread_id: threadId } });
        return;
      }
      send(await service.command(threadId, command, headers));
    } catch (err) {
      if (err instanceof ProtocolError) send(errorEnvelope(command.id, err));
      else if (err instanceof AppError)
        // A run the runs context refuses (unknown assistant, `reject` conflict): over HTTP
        // this is the HTTP error; a socket gets it as an envelope.
        send(
          errorEnvelope(
            command.id,
            new ProtocolError(
              'unknown_error',
              typeof err.detail === 'string' ? err.detail : JSON.stringify(err.detail),
            ),
          ),
        );
      else if (err instanceof Error && err.name === 'ZodError')
        send(errorEnvelope(command.id, invalidArgument(`${command.method}: invalid params`)));
      else if (isUnavailable(err)) {
        log.warn({ err, thread_id: threadId }, 'protocol command refused: database unavailable');
        send(errorEnvelope(command.id, new ProtocolError('unknown_error', DATABASE_UNAVAILABLE)));
      } else {
        log.error({ err, thread_id: threadId }, 'protocol command failed');
        send(errorEnvelope(command.id, new ProtocolError('unknown_error', 'command failed')));
      }
    }
  };

  socket.on('message', (raw: Buffer) => void handle(raw.toString()));
  socket.on('close', () => {
    for (const subscription of subscriptions.values()) subscription.abort();
    subscriptions.clear();
  });
}
