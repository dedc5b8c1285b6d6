// A compiled graph's stream, read without the per-chunk wrapping of `Runnable.stream`.
//
// `graph.stream()` hands its chunks through a web ReadableStream whose every pull re-enters the
// run's config (`runWithConfig`), and so configures a callback manager and reads several
// environment variables, once per chunk. None of that reaches the graph: its loop runs in the
// context of the first pull, and with no parent run the context holds no run tree. A run of the
// protocol's channels yields hundreds of chunks, so the executor reads the generator behind the
// stream directly, with the config `stream()` would have built.
import { Pregel } from '@langchain/langgraph/pregel';
import { ensureConfig, type RunnableConfig } from '@langchain/core/runnables';

type StreamOptions = RunnableConfig & Record<string, unknown> & { signal: AbortSignal };

interface StreamableGraph {
  stream(input: unknown, options: StreamOptions): Promise<AsyncIterable<unknown>>;
}

/** What `Pregel.stream` reads of the graph, and the generator it wraps. */
interface PregelInternals {
  config?: { recursionLimit?: number };
  _streamIterator(input: unknown, config: RunnableConfig): AsyncGenerator<unknown>;
}

/**
 * The chunks `graph.stream(input, options)` would give. A graph whose class changes `stream`
 * (or one that is not a compiled graph) goes through `stream` itself.
 */
export async function* graphStream(
  graph: StreamableGraph,
  input: unknown,
  options: StreamOptions,
): AsyncGenerator<unknown> {
  if (!(graph instanceof Pregel) || graph.stream !== Pregel.prototype.stream) {
    yield* await graph.stream(input, options);
    return;
  }
  const internals = graph as unknown as PregelInternals;
  // As `stream` does: stopping early aborts the graph's loop before waiting for it.
  const local = new AbortController();
  const config = ensureConfig({
    recursionLimit: internals.config?.recursionLimit,
    ...options,
    signal: AbortSignal.any([options.signal, local.signal]),
  });
  const iterator = internals._streamIterator(input, config);
  let finished = false;
  try {
    for (;;) {
      const step = await iterator.next();
      if (step.done) {
        finished = true;
        return;
      }
      yield step.value;
    }
  } finally {
    if (!finished) {
      local.abort();
      await iterator.return(undefined);
    }
  }
}
