// How events are encoded and written: each event's data is turned into JSON once, for the log and
// every stream, and the SSE frames of one turn of the event loop share one socket write, the
// last ones with the end of the response. The request and reply are fakes recording what is done
// to them: this is pure logic; the streaming integration tests read the same frames over HTTP.
import { EventEmitter } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { RunEventLog } from '../../runtime/runs/event-log.js';
import type { Notifier } from '../../runtime/runs/notifier.js';
import { writeSse, type SseFrame } from '../../runtime/runs/sse.js';
import { dataJson, eventsJson, type RunEvent, type RunStore } from '../../runtime/runs/store.js';

function fakeHttp() {
  const calls: string[] = [];
  // Each call names the `data:` lines of the frames it carries, in order.
  const frames = (text: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith('data: ') || line.startsWith(': '))
      .join(' + ');
  const res = Object.assign(new EventEmitter(), {
    headersSent: false,
    writableEnded: false,
    writableNeedDrain: false,
    writeHead: () => undefined,
    flushHeaders: () => (calls.push('headers'), (res.headersSent = true)),
    write: (text: string) => (calls.push(`write ${frames(text)}`), (res.headersSent = true)),
    end: (text?: string) => {
      calls.push(text === undefined ? 'end' : `end with ${frames(text)}`);
      res.writableEnded = true;
    },
  });
  const request = {
    raw: { socket: new EventEmitter() },
    log: { warn: () => undefined },
  } as unknown as FastifyRequest;
  const reply = {
    hijack: () => undefined,
    getHeaders: () => ({}),
    raw: res,
  } as unknown as FastifyReply;
  return { calls, request, reply };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('writeSse', () => {
  it('sends the first frame at once, the later frames of one turn in one write, the last with the end', async () => {
    const { calls, request, reply } = fakeHttp();
    async function* frames(): AsyncGenerator<SseFrame> {
      yield { event: 'metadata', data: { run_id: 'r' } };
      yield { event: 'values', data: { ignored: true }, json: '{"n":1}' };
      yield { event: 'values', data: { n: 2 } };
      await tick();
      yield { event: 'values', data: { n: 3 } };
      yield { event: 'values', data: { n: 4 } };
    }
    await writeSse(request, reply, () => frames(), { headers: {} });
    await tick();
    expect(calls).toEqual([
      // The headers go out with the first frame, without waiting for the turn to end.
      'write data: {"run_id":"r"}',
      'write data: {"n":1} + data: {"n":2}',
      'end with data: {"n":3} + data: {"n":4}',
    ]);
  });

  it('sends the headers on the next turn when no frame comes', async () => {
    const { calls, request, reply } = fakeHttp();
    async function* frames(): AsyncGenerator<SseFrame> {
      await tick();
      yield { event: 'values', data: { n: 1 } };
    }
    await writeSse(request, reply, () => frames(), { headers: {} });
    expect(calls).toEqual(['headers', 'write data: {"n":1}', 'end']);
  });

  it('sends held frames early once they pass 64 KiB in one turn', async () => {
    const { calls, request, reply } = fakeHttp();
    const big = 'x'.repeat(40 * 1024);
    async function* frames(): AsyncGenerator<SseFrame> {
      yield { event: 'metadata', data: 'm' };
      for (let i = 0; i < 3; i++) yield { event: 'values', data: `${i}${big}` };
    }
    await writeSse(request, reply, () => frames(), { headers: {} });
    expect(calls.map((c) => c.replace(/x+/g, '…'))).toEqual([
      'write data: "m"',
      'write data: "0…" + data: "1…"',
      'end with data: "2…"',
    ]);
  });

  it('waits for the socket to drain before reading more of the source', async () => {
    const { calls, request, reply } = fakeHttp();
    const res = reply.raw as unknown as EventEmitter & { writableNeedDrain: boolean };
    let read = 0;
    async function* frames(): AsyncGenerator<SseFrame> {
      for (; read < 3;) {
        read++;
        yield { event: 'values', data: { n: read } };
      }
    }
    res.writableNeedDrain = true;
    const done = writeSse(request, reply, () => frames(), { headers: {} });
    await tick();
    expect(read).toBe(1);
    res.writableNeedDrain = false;
    res.emit('drain');
    await done;
    expect(read).toBe(3);
    expect(calls[0]).toBe('write data: {"n":1}');
    expect(calls.at(-1)).toBe('end with data: {"n":2} + data: {"n":3}');
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
      { first: 1, last: 1, events: [[1, 'custom', { text: 'hi' }]] },
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
      {
        first: 0,
        last: 1,
        events: [
          [0, 'metadata', { run_id: 'r', attempt: 1 }],
          [1, 'a "quoted" name', null],
        ],
      },
    ]);
  });

  it('splits a batch into log rows of at most 500 events or 512 KB, a larger event alone', () => {
    const events = (count: number, size: number): RunEvent[] =>
      Array.from({ length: count }, (_, seq) => ({ seq, event: 'custom', data: 'x'.repeat(size) }));
    const rows = (batch: RunEvent[]) =>
      (JSON.parse(eventsJson(batch)) as { first: number; last: number; events: unknown[] }[]).map(
        (r) => [r.first, r.last, r.events.length],
      );
    expect(rows(events(1001, 1))).toEqual([
      [0, 499, 500],
      [500, 999, 500],
      [1000, 1000, 1],
    ]);
    // 200 KB each: two fit in 512 KB, the third starts a row.
    expect(rows(events(5, 200 * 1024))).toEqual([
      [0, 1, 2],
      [2, 3, 2],
      [4, 4, 1],
    ]);
    expect(
      rows([...events(1, 10), { seq: 1, event: 'big', data: 'y'.repeat(600 * 1024) }]),
    ).toEqual([
      [0, 0, 1],
      [1, 1, 1],
    ]);
    expect(JSON.parse(eventsJson([]))).toEqual([]);
  });
});
