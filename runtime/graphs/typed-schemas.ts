// Schemas from graphs' TypeScript types, derived on the first request in a worker thread (the
// compiler is loaded there only) for every TypeScript graph of the project at once, within a time
// limit, and kept for the life of the process. A failure or a timeout only means the graphs are
// described as before (their channels).
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../common/logging/index.js';
import type { TypedSchemaReply, TypedSchemaRequest, TypedSchemas } from './typed-schemas-worker.js';

export type { TypedSchemas } from './typed-schemas-worker.js';

/** The official server's limit for one graph's extraction (`LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS`). */
export const DEFAULT_SCHEMA_TIMEOUT_MS = 30_000;

/** Source files the compiler reads; a graph written in JavaScript has no types to read. */
const TYPESCRIPT = /\.(?:ts|mts|cts|tsx)$/;

/** `LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS` as the official server reads it: a positive integer, else the default. */
export function schemaTimeoutFrom(value: string | undefined): number {
  const ms = Number.parseInt(value ?? '', 10);
  return Number.isNaN(ms) || ms <= 0 ? DEFAULT_SCHEMA_TIMEOUT_MS : ms;
}

const compiled = import.meta.url.endsWith('.js');
const WORKER_URL = new URL(`./typed-schemas-worker.${compiled ? 'js' : 'ts'}`, import.meta.url);

/**
 * The compiler's heap, capped: past it the worker alone stops (ERR_WORKER_OUT_OF_MEMORY), never
 * the server. Five small graphs use about 200 MB.
 */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 1024 };

function startWorker(): Worker {
  if (compiled) return new Worker(WORKER_URL, { resourceLimits: WORKER_LIMITS });
  // From the TypeScript sources (`graphdock dev`, tests): the worker loads tsx before the module.
  const tsx = import.meta.resolve('tsx/esm/api');
  const source = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`;
  return new Worker(source, { eval: true, resourceLimits: WORKER_LIMITS });
}

function extractInWorker(
  requests: TypedSchemaRequest[],
  timeoutMs: number,
): Promise<TypedSchemas[]> {
  return new Promise((resolve, reject) => {
    const worker = startWorker();
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const settle = () => {
      clearTimeout(timer);
      void worker.terminate();
    };
    worker.once('message', (reply: TypedSchemaReply) => {
      settle();
      if (reply.ok) resolve(reply.schemas);
      else reject(new Error(reply.error));
    });
    worker.once('error', (err) => {
      settle();
      reject(err);
    });
    worker.once('exit', (code) => {
      settle();
      reject(new Error(`the worker exited (${code}) without an answer`));
    });
    worker.postMessage(requests);
  });
}

export interface TypedSchemaSource {
  graphId: string;
  file: string;
  exportName: string;
}

export class TypedSchemaResolver {
  private readonly cache = new Map<string, Promise<TypedSchemas | undefined>>();
  /** Answers already settled, for callers that must not wait (see `ready`). */
  private readonly settled = new Map<string, TypedSchemas | undefined>();

  constructor(
    private readonly options: {
      /** Every graph of the project; those in TypeScript are read together. */
      sources: TypedSchemaSource[];
      timeoutMs: number;
      logger: Logger;
      /** The extraction itself; a worker thread unless a test replaces it. */
      extract?: (requests: TypedSchemaRequest[], timeoutMs: number) => Promise<TypedSchemas[]>;
    },
  ) {}

  /** The graph's typed schemas, or undefined when they cannot be derived (never throws). */
  resolve(graphId: string): Promise<TypedSchemas | undefined> {
    if (!this.cache.has(graphId)) this.extractPending();
    return this.cache.get(graphId) ?? Promise.resolve(undefined);
  }

  /** The graph's typed schemas if already derived; never starts or waits for an extraction. */
  ready(graphId: string): TypedSchemas | undefined {
    return this.settled.get(graphId);
  }

  /** Starts one extraction for every TypeScript graph not asked about before. */
  private extractPending(): void {
    const pending = this.options.sources.filter(
      (s) => !this.cache.has(s.graphId) && TYPESCRIPT.test(s.file),
    );
    for (const s of this.options.sources)
      if (!TYPESCRIPT.test(s.file)) this.cache.set(s.graphId, Promise.resolve(undefined));
    if (!pending.length) return;
    const { timeoutMs, logger } = this.options;
    const extract = this.options.extract ?? extractInWorker;
    const graphIds = pending.map((s) => s.graphId);
    const started = Date.now();
    // The official server allows each graph this long in a worker of its own; here they share one.
    const batch = extract(
      pending.map(({ file, exportName }) => ({ file, exportName })),
      timeoutMs * pending.length,
    ).then(
      (schemas) => {
        logger.info(
          { graph_ids: graphIds, ms: Date.now() - started },
          'graph schemas derived from their TypeScript types',
        );
        return schemas;
      },
      (err: Error) => {
        // Kept as a failure: asking again would cost the same seconds for the same answer.
        logger.warn(
          { graph_ids: graphIds, err: err.message },
          'could not derive graph schemas from their TypeScript types; describing their channels instead',
        );
        return [];
      },
    );
    pending.forEach((s, index) =>
      this.cache.set(
        s.graphId,
        batch.then((schemas) => {
          this.settled.set(s.graphId, schemas[index]);
          return schemas[index];
        }),
      ),
    );
  }
}
