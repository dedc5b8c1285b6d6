// CPU of the protocol's delivery path alone, in this process, without the graph, the database or
// the network: a run's events as the protocol mapper pushes them, through the run event log's
// in-memory hand-over and the thread's protocol event stream, to SSE frame text, for one reader.
// What is left of a run's CPU once LangGraph, PostgreSQL and HTTP are taken out, so that a change
// to this path shows its effect even on a loaded machine (CPU time, not wall time).
//
//   npx tsx bench/protocol/delivery.ts -- [--runs 2000] [--events 200]
import { parseArgs } from 'node:util';
import * as threadEvents from '../../runtime/protocol/thread-events.js';
import { matches } from '../../runtime/protocol/filter.js';
import { RunEventLog } from '../../runtime/runs/event-log.js';
import { ProtocolEventMapper } from '../../runtime/runs/protocol-mapper.js';
import type { Notifier, ProtocolRunRef, RunStore } from '../../runtime/runs/index.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '2000' },
    events: { type: 'string', default: '200' },
  },
});
const RUNS = Number(values.runs);
const EVENTS = Number(values.events);
const FILTER = { channels: ['lifecycle', 'custom'] };
// Before the events were spliced (see encodeEvent), each frame was serialised whole.
const { threadProtocolEvents } = threadEvents;
const encodeEvent = (threadEvents as { encodeEvent?: (e: unknown, json?: string) => string })
  .encodeEvent;

// The one run of each thread, active; its status once it ended.
let current: ProtocolRunRef | undefined;
const store = {
  appendEvents: () => Promise.resolve(),
  getById: () => Promise.resolve({ status: 'success' }),
  nextProtocolRun: () => {
    const run = current;
    current = undefined;
    return Promise.resolve(run ? { thread: true, run } : { thread: true });
  },
  eventsAfter: () => Promise.resolve({ events: [], more: false }),
  isActive: () => Promise.resolve(true),
} as unknown as RunStore;
const notifier = {
  on: () => () => undefined,
  remotePayload: (p: string) => p,
} as unknown as Notifier;
const log = new RunEventLog(store, notifier);

/** One run: produced as the executor does, read as an SSE stream does; resolves with its text. */
async function run(i: number): Promise<number> {
  const runId = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  log.startedHere(runId, [{ seq: 0, event: 'metadata', data: { run_id: runId, attempt: 1 } }], {
    batchMs: 50,
    live: true,
  });
  current = { run_id: runId, created_us: String(i), status: 'running', index: 0 };
  const stop = new AbortController();
  let chars = 0;
  const reading = (async () => {
    const source = threadProtocolEvents(
      { runs: store, events: log, notifier },
      runId,
      { afterUs: -1n },
      stop.signal,
    ) as AsyncIterable<unknown>;
    for await (const item of source) {
      // Batches ({event, paramsJson}[]) on the new path, single events on the old one.
      const batch = (Array.isArray(item) ? item : [{ event: item }]) as {
        event: Parameters<typeof matches>[0];
        paramsJson?: string;
      }[];
      for (const { event, paramsJson } of batch) {
        if (!matches(event, FILTER)) continue;
        const data = encodeEvent ? encodeEvent(event, paramsJson) : JSON.stringify(event);
        chars += `event: ${event.method}\ndata: ${data}\nid: ${event.event_id}\n\n`.length;
        const ended = event.method === 'lifecycle' && !event.params.namespace.length;
        if (ended && (event.params.data as { event: string }).event !== 'running') stop.abort();
      }
    }
  })();
  const writer = log.writer(runId, 1);
  const mapper = new ProtocolEventMapper((event, data) => writer.push(event, data), 'emit');
  mapper.start(0);
  for (let n = 0; n < EVENTS; n++) {
    mapper.event({
      method: 'custom',
      params: { namespace: [], timestamp: Date.now(), data: { payload: { i: n } } },
    });
    // LangGraph hands events over one by one, across promise turns.
    await Promise.resolve();
  }
  log.publish(runId, await writer.closingBatch());
  await reading;
  log.forget(runId);
  return chars;
}

for (let i = 0; i < 200; i++) await run(i);
const cpu = process.cpuUsage();
const started = performance.now();
let chars = 0;
for (let i = 0; i < RUNS; i++) chars += await run(1000 + i);
const used = process.cpuUsage(cpu);
console.log(
  `${RUNS} runs of ${EVENTS} events: ${((used.user + used.system) / 1000 / RUNS).toFixed(3)} ms CPU per run ` +
    `(${((performance.now() - started) / RUNS).toFixed(3)} ms wall), ${(chars / RUNS).toFixed(0)} chars per run`,
);
