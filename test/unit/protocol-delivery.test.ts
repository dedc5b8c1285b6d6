// How a protocol run's events reach a stream in this process: from the run event log's memory, a
// batch at a time, each event's envelope spliced from the params JSON the log already holds (the
// same text JSON.stringify gives), and a reader that already has every event handed over live
// does not read the table again when they become durable. The store and notifier are fakes
// counting what is asked of them: this is pure logic; protocol.test.ts covers the same streams
// over HTTP and WebSockets on PostgreSQL.
import { describe, expect, it } from 'vitest';
import {
  encodeEvent,
  threadProtocolEvents,
  type EncodedEvent,
} from '../../runtime/protocol/thread-events.js';
import { RunEventLog } from '../../runtime/runs/event-log.js';
import type { Notifier } from '../../runtime/runs/notifier.js';
import { ProtocolEventMapper } from '../../runtime/runs/protocol-mapper.js';
import type { ProtocolRunRef, RunEvent, RunStore } from '../../runtime/runs/store.js';

const RUN = '00000000-0000-4000-8000-000000000001';

function fakes() {
  const asked = { eventsAfter: 0, getById: 0 };
  let run: ProtocolRunRef | undefined = {
    run_id: RUN,
    created_us: '1',
    status: 'running',
    index: 0,
  };
  const store = {
    appendEvents: () => Promise.resolve(),
    getById: () => {
      asked.getById++;
      return Promise.resolve({ status: 'success' });
    },
    nextProtocolRun: () => {
      const next = run;
      run = undefined;
      return Promise.resolve(next ? { run: next, later: false } : { later: false });
    },
    eventsAfter: () => {
      asked.eventsAfter++;
      return Promise.resolve({ events: [], more: false });
    },
    isActive: () => Promise.resolve(true),
  } as unknown as RunStore;
  const notifier = {
    on: () => () => undefined,
    remotePayload: (p: string) => p,
  } as unknown as Notifier;
  const log = new RunEventLog(store, notifier);
  const opening: RunEvent[] = [{ seq: 0, event: 'metadata', data: { run_id: RUN, attempt: 1 } }];
  log.startedHere(RUN, opening, { batchMs: 5, live: true });
  return { store, notifier, log, asked };
}

/** Reads the thread's stream until the run's root end; returns every batch. */
async function readToEnd(deps: ReturnType<typeof fakes>): Promise<EncodedEvent[][]> {
  const stop = new AbortController();
  const batches: EncodedEvent[][] = [];
  const deps2 = { runs: deps.store, events: deps.log, notifier: deps.notifier };
  for await (const batch of threadProtocolEvents(deps2, 'thread', { afterUs: -1n }, stop.signal)) {
    batches.push(batch);
    const last = batch.at(-1)!.event;
    const data = last.params.data as { event?: string };
    if (last.method === 'lifecycle' && !last.params.namespace.length && data.event !== 'running')
      stop.abort();
  }
  return batches;
}

describe('protocol delivery', () => {
  it('splices the logged params into the envelope: the text JSON.stringify gives', async () => {
    const deps = fakes();
    const reading = readToEnd(deps);
    const writer = deps.log.writer(RUN, 1);
    const mapper = new ProtocolEventMapper((event, data) => writer.push(event, data), 'emit');
    mapper.start(3);
    mapper.event({
      method: 'custom',
      params: { namespace: [], timestamp: 1, data: { name: 'x', payload: 'é"\n' } },
    });
    mapper.event({
      method: 'messages',
      params: { namespace: ['child:1'], timestamp: 2, node: 'n', data: { event: 'message-start' } },
    });
    mapper.event({
      method: 'updates',
      params: { namespace: [], timestamp: 3, data: { node: 'n', values: { a: [1, null] } } },
    });
    await new Promise((resolve) => setTimeout(resolve, 1));
    deps.log.publish(RUN, await writer.closingBatch());
    const events = (await reading).flat();
    expect(events.map((e) => e.event.method)).toEqual([
      'lifecycle',
      'custom',
      'messages',
      'updates',
      'lifecycle',
    ]);
    expect(events.map((e) => e.event.seq)).toEqual([
      3_000_000_001, 3_000_000_002, 3_000_000_003, 3_000_000_004, 3_000_000_005,
    ]);
    // Spliced where the log's text is the params (not the first: it carries the run's index).
    expect(events.map((e) => e.paramsJson !== undefined)).toEqual([false, true, true, true, false]);
    for (const { event, paramsJson } of events)
      expect(encodeEvent(event, paramsJson)).toBe(JSON.stringify(event));
  });

  it('hands a burst of events over in batches, in order, nothing lost', async () => {
    const deps = fakes();
    const reading = readToEnd(deps);
    const writer = deps.log.writer(RUN, 1);
    const mapper = new ProtocolEventMapper((event, data) => writer.push(event, data), 'emit');
    mapper.start(0);
    for (let i = 0; i < 300; i++) {
      mapper.event({ method: 'custom', params: { namespace: [], timestamp: i, data: { i } } });
      if (i % 7 === 0) await Promise.resolve();
    }
    deps.log.publish(RUN, await writer.closingBatch());
    const batches = await reading;
    const custom = batches.flat().filter((e) => e.event.method === 'custom');
    expect(custom.map((e) => (e.event.params.data as { i: number }).i)).toEqual(
      Array.from({ length: 300 }, (_, i) => i),
    );
    // Fewer turns than events: events that arrived together travel together.
    expect(batches.length).toBeLessThan(150);
  });

  it('a reader that has every event handed over live does not read them back once durable', async () => {
    const deps = fakes();
    const reading = readToEnd(deps);
    const writer = deps.log.writer(RUN, 1);
    const mapper = new ProtocolEventMapper((event, data) => writer.push(event, data), 'emit');
    mapper.start(0);
    for (let i = 0; i < 20; i++)
      mapper.event({ method: 'custom', params: { namespace: [], timestamp: i, data: { i } } });
    // The batch timer writes them (durable): the reader is woken with nothing new.
    await new Promise((resolve) => setTimeout(resolve, 30));
    await writer.flush();
    await new Promise((resolve) => setTimeout(resolve, 10));
    deps.log.publish(RUN, await writer.closingBatch());
    const events = (await reading).flat();
    expect(events.filter((e) => e.event.method === 'custom')).toHaveLength(20);
    expect(deps.asked.eventsAfter).toBe(0);
  });

  it('learns how a live run ended from its end marker, without reading the run', async () => {
    const deps = fakes();
    const reading = readToEnd(deps);
    const writer = deps.log.writer(RUN, 1);
    const mapper = new ProtocolEventMapper((event, data) => writer.push(event, data), 'emit');
    mapper.start(0);
    writer.push('error', { error: 'ValueError', message: 'boom' });
    deps.log.publish(RUN, await writer.closingBatch('error'));
    const last = (await reading).flat().at(-1)!.event;
    expect(last.method).toBe('lifecycle');
    expect(last.params.data).toEqual({ event: 'failed', error: 'boom', graph_name: 'emit' });
    expect(deps.asked.getById).toBe(0);
  });
});
