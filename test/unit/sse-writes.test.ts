// How events are encoded and written: each event's data is turned into JSON once, for the log and
// every stream, and the SSE frames of one turn of the event loop share one socket write. The
// request and reply are fakes recording what is done to them: this is pure logic; the streaming
// integration tests read the same frames over HTTP.
import { EventEmitter } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { RunEventLog } from '../../runtime/runs/event-log.js';
import type { Notifier } from '../../runtime/runs/notifier.js';
import { writeSse, type SseFrame } from '../../runtime/runs/sse.js';
import { dataJson, eventsJson, type RunEvent, type RunStore } from '../../runtime/runs/store.js';

function fakeHttp() {
  const calls: string[] = [];
  const res = Object.assign(new EventEmitter(), {
    writeHead: () => undefined,
    flushHeaders: () => undefined,
    cork: () => calls.push('cork'),
    uncork: () => calls.push('uncork'),
    write: (frame: string) => (calls.push(`write ${frame.split('\n')[1]}`), true),
    end: () => calls.push('end'),
  });
  const request = {
    raw: { socket: new EventEmitter() },
    log: { warn: () => undefined },
  } as unknown as FastifyRequest;
  const reply = { hijack: () => undefined, raw: res } as unknown as FastifyReply;
  return { calls, request, reply };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('writeSse', () => {
  it('sends the first frame at once, the later frames of one turn in one write, nothing after the end', async () => {
    const { calls, request, reply } = fakeHttp();
    async function* frames(): AsyncGenerator<SseFrame> {
      yield { event: 'metadata', data: { run_id: 'r' } };
      yield { event: 'values', data: { ignored: true }, json: '{"n":1}' };
      yield { event: 'values', data: { n: 2 } };
      await tick();
      yield { event: 'values', data: { n: 3 } };
    }
    await writeSse(request, reply, () => frames(), { headers: {} });
    await tick();
    expect(calls).toEqual([
      'cork',
      'write data: {"run_id":"r"}',
      // The headers and the first frame go out without waiting for the turn to end.
      'uncork',
      'cork',
      'write data: {"n":1}',
      'write data: {"n":2}',
      'uncork',
      'cork',
      'write data: {"n":3}',
      // Uncorked before the end: since Node 22 a corked response's chunks would otherwise
      // follow the terminating chunk on the wire.
      'uncork',
      'end',
    ]);
  });
});

describe('event encoding', () => {
  it('turns an event into JSON once, for the log and for streams', async () => {
    let encoded = 0;
    const data = { toJSON: () => (encoded++, { text: 'hi' }) };
    const appended: RunEvent[][] = [];
    const store = {
      appendEvents: (_runId: string, batch: RunEvent[]) => (
        appended.push(batch),
        Promise.resolve()
      ),
    } as unknown as RunStore;
    const notifier = {
      on: () => () => undefined,
      remotePayload: (p: string) => p,
    } as unknown as Notifier;
    const writer = new RunEventLog(store, notifier).writer('r', 1);
    writer.push('custom', data);
    await writer.flush();
    const [event] = appended[0] ?? [];
    expect(event).toBeDefined();
    expect(JSON.parse(eventsJson(appended[0]!))).toEqual([
      { seq: 1, event: 'custom', data: { text: 'hi' } },
    ]);
    expect(dataJson(event!)).toBe('{"text":"hi"}');
    expect(encoded).toBe(1);
  });

  it('encodes events without known JSON as JSON.stringify would, and none as null', () => {
    const events: RunEvent[] = [
      { seq: 0, event: 'metadata', data: { run_id: 'r', attempt: 1 } },
      { seq: 1, event: 'a "quoted" name', data: undefined },
    ];
    expect(JSON.parse(eventsJson(events))).toEqual([
      { seq: 0, event: 'metadata', data: { run_id: 'r', attempt: 1 } },
      { seq: 1, event: 'a "quoted" name', data: null },
    ]);
  });
});
