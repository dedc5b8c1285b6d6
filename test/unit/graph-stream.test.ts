// graphStream: the chunks of `graph.stream()`, without re-entering the run's config per chunk.
import { CallbackManager } from '@langchain/core/callbacks/manager';
import {
  Annotation,
  END,
  MemorySaver,
  START,
  StateGraph,
  getConfig,
  type LangGraphRunnableConfig,
} from '@langchain/langgraph';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { graphStream } from '../../runtime/runs/graph-stream.js';
import { collect } from '../support/iterables.js';

const State = Annotation.Root({
  events: Annotation<number>({ reducer: (_, n) => n, default: () => 0 }),
  seen: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

const child = new StateGraph(State)
  .addNode('inner', (state, config: LangGraphRunnableConfig) => {
    config.writer?.({ from: 'inner' });
    return { seen: [`inner:${String(getConfig()?.metadata?.tag)}`] };
  })
  .addEdge(START, 'inner')
  .addEdge('inner', END)
  .compile();

function emitting() {
  return new StateGraph(State)
    .addNode('emit', (state, config: LangGraphRunnableConfig) => {
      for (let i = 0; i < state.events; i++) config.writer?.({ i });
      return { seen: [`emit:${String(getConfig()?.metadata?.tag)}`] };
    })
    .addNode('child', child)
    .addEdge(START, 'emit')
    .addEdge('emit', 'child')
    .addEdge('child', END)
    .compile({ checkpointer: new MemorySaver() });
}

const options = (thread: string, signal = new AbortController().signal) => ({
  configurable: { thread_id: thread },
  metadata: { tag: 'run-1' },
  streamMode: ['values', 'updates', 'custom'] as never,
  subgraphs: true,
  signal,
});

afterEach(() => vi.restoreAllMocks());

describe('graphStream', () => {
  it('gives the chunks graph.stream gives: modes, subgraph namespaces, the config in nodes', async () => {
    const expected = await collect(await emitting().stream({ events: 3 }, options('a') as never));
    const actual = await collect(graphStream(emitting(), { events: 3 }, options('a')));
    // Subgraph namespaces carry a task id, which differs between the two runs.
    const shape = (chunks: unknown[]) =>
      JSON.stringify(chunks).replace(/child:[0-9a-f-]{36}/g, 'child:<task>');
    expect(shape(actual)).toBe(shape(expected));
    expect(actual.length).toBeGreaterThan(8);
    expect(JSON.stringify(actual)).toContain('"inner:run-1"');
    expect(JSON.stringify(actual)).toContain('"emit:run-1"');
  });

  it('configures the callback manager a fixed number of times, not once per chunk', async () => {
    const configured = vi.spyOn(CallbackManager, '_configureSync');
    const count = async (events: number, read: 'stream' | 'graphStream') => {
      configured.mockClear();
      const graph = emitting();
      const chunks =
        read === 'stream'
          ? await collect(await graph.stream({ events }, options(read) as never))
          : await collect(graphStream(graph, { events }, options(read)));
      expect(chunks.length).toBeGreaterThan(events);
      return configured.mock.calls.length;
    };
    // Through stream() every chunk pays one; through graphStream the count does not grow.
    expect((await count(200, 'stream')) - (await count(10, 'stream'))).toBeGreaterThanOrEqual(190);
    expect(await count(200, 'graphStream')).toBe(await count(10, 'graphStream'));
  });

  it('stops the graph when the reader stops early', async () => {
    let aborted = false;
    const graph = new StateGraph(State)
      .addNode('slow', async (state, config: LangGraphRunnableConfig) => {
        config.writer?.({ started: true });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 10_000);
          config.signal?.addEventListener('abort', () => {
            aborted = true;
            clearTimeout(timer);
            resolve();
          });
        });
        return {};
      })
      .addEdge(START, 'slow')
      .addEdge('slow', END)
      .compile();
    const started = Date.now();
    const stream = graphStream(graph, {}, { ...options('early'), streamMode: ['custom'] as never });
    for await (const chunk of stream) {
      expect(JSON.stringify(chunk)).toContain('started');
      break;
    }
    expect(aborted).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("ends promptly when the caller's signal aborts, even in a node that ignores it", async () => {
    const controller = new AbortController();
    const deaf = new StateGraph(State)
      .addNode('deaf', async (state, config: LangGraphRunnableConfig) => {
        config.writer?.({ started: true });
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        return {};
      })
      .addEdge(START, 'deaf')
      .addEdge('deaf', END)
      .compile();
    const started = Date.now();
    const stream = graphStream(
      deaf,
      {},
      {
        ...options('cancel', controller.signal),
        streamMode: ['custom'] as never,
      },
    );
    const reading = (async () => {
      for await (const chunk of stream) {
        void chunk;
        setTimeout(() => controller.abort('cancel'), 50);
      }
    })();
    await expect(reading).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('goes through stream() for a graph that replaces it', async () => {
    const calls: unknown[] = [];
    const replaced = Object.create(emitting()) as ReturnType<typeof emitting>;
    replaced.stream = (async (input: unknown) => {
      calls.push(input);
      return (async function* () {
        yield ['replaced', input];
      })();
    }) as never;
    const chunks = await collect(graphStream(replaced, { events: 1 }, options('w')));
    expect(calls).toEqual([{ events: 1 }]);
    expect(chunks).toEqual([['replaced', { events: 1 }]]);
  });
});
