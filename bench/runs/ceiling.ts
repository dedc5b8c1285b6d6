// The ceiling for run throughput: the same echo graph called in this process with `invoke` (or
// `stream`), on the same PostgreSQL database and checkpointer as the server under test, with no
// HTTP, queue, event log or thread bookkeeping. The server's runs/s are judged as a share of it.
import { randomUUID } from 'node:crypto';
import { createPool, type Pool } from '../../common/db/index.js';
import { GraphdockCheckpointer } from '../../runtime/checkpoints/index.js';
import { loadLanggraphConfig } from '../../runtime/config/index.js';
import { GraphRegistry, type AnyGraph } from '../../runtime/graphs/index.js';
import { drain } from '../http/load.js';
import { EXAMPLES_CONFIG } from '../http/servers.js';

export type CeilingKind = 'stateful' | 'threadless' | 'stream';

export interface Ceiling {
  /** One run of the echo graph the way `kind` needs it, on `thread` unless threadless. */
  run(kind: CeilingKind, thread: string): Promise<void>;
  /** Nanoseconds from calling `stream` to its first chunk; the stream is then read to its end. */
  firstChunk(thread: string): Promise<bigint>;
  close(): Promise<void>;
}

export async function startCeiling(databaseUrl: string): Promise<Ceiling> {
  const pool: Pool = createPool({ url: databaseUrl, max: 20, applicationName: 'bench-ceiling' });
  const registry = await GraphRegistry.load(
    loadLanggraphConfig(EXAMPLES_CONFIG),
    new GraphdockCheckpointer(pool),
  );
  const graph = (await registry.get('echo')) as AnyGraph;
  const input = { messages: [{ role: 'user', content: 'ping' }] };
  return {
    async run(kind, thread) {
      const thread_id = kind === 'threadless' ? randomUUID() : thread;
      const config = { configurable: { thread_id } };
      if (kind === 'stream') {
        const stream = await graph.stream(input, { ...config, streamMode: ['values'] });
        // Consumed to the end, as a streaming client would.
        await drain(stream);
        return;
      }
      const out = (await graph.invoke(input, config)) as { messages: { content: unknown }[] };
      if (out.messages.at(-1)?.content !== 'echo: ping') throw new Error('no echo in the answer');
    },
    async firstChunk(thread) {
      const started = process.hrtime.bigint();
      let first: bigint | undefined;
      const stream = await graph.stream(input, {
        configurable: { thread_id: thread },
        streamMode: ['values'],
      });
      await drain(stream, () => (first ??= process.hrtime.bigint() - started));
      return first ?? process.hrtime.bigint() - started;
    },
    close: () => pool.end(),
  };
}
