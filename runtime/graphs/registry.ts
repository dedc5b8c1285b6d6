// Loads the graphs named in `langgraph.json` and hands out compiled graphs bound to the
// process's checkpointer and store.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BaseCheckpointSaver, BaseStore } from '@langchain/langgraph-checkpoint';
import type { Pregel } from '@langchain/langgraph/pregel';
import { importUserModule, type LoadedConfig } from '../config/index.js';

// Graph state types are the user's; the server treats every graph alike.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyGraph = Pregel<any, any, any, any, any, any>;

/** Why a graph is built, as the official JS server names it to two-argument factories. */
export type GraphAccessContext =
  'threads.create_run' | 'threads.read' | 'threads.update' | 'assistants.read';

/**
 * The second argument of a graph factory, shaped as the official JS server passes it: only a
 * graph built to execute a run gets an `executionRuntime` (with the run's context).
 */
export type ServerRuntime =
  | {
      accessContext: 'threads.create_run';
      executionRuntime: { context: Record<string, unknown> | undefined };
    }
  | {
      accessContext: Exclude<GraphAccessContext, 'threads.create_run'>;
      executionRuntime: null;
    };

/** The runtime for a graph built to run; `context` is the run's (assistant's merged with its own). */
export function executionRuntime(context: Record<string, unknown> | undefined): ServerRuntime {
  return { accessContext: 'threads.create_run', executionRuntime: { context } };
}

/** The runtime for a graph built only to read or write state, or to describe it. */
export function accessRuntime(
  accessContext: Exclude<GraphAccessContext, 'threads.create_run'>,
): ServerRuntime {
  return { accessContext, executionRuntime: null };
}

type GraphFactory = (config: Record<string, unknown>, runtime: ServerRuntime) => unknown;

export interface GraphEntry {
  graphId: string;
  file: string;
  exportName: string;
  description: string | null;
  graph: AnyGraph | undefined;
  factory: GraphFactory | undefined;
}

export class GraphLoadError extends Error {
  override name = 'GraphLoadError';
}

function isCompiled(value: unknown): value is AnyGraph {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { invoke?: unknown }).invoke === 'function' &&
    typeof (value as { getGraphAsync?: unknown }).getGraphAsync === 'function'
  );
}

function hasCompile(value: unknown): value is { compile(): unknown } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { compile?: unknown }).compile === 'function'
  );
}

async function toGraph(value: unknown): Promise<AnyGraph | undefined> {
  const awaited = await value;
  if (isCompiled(awaited)) return awaited;
  if (hasCompile(awaited)) {
    const compiled = awaited.compile();
    if (isCompiled(compiled)) return compiled;
  }
  return undefined;
}

function parseSpec(
  graphId: string,
  spec: string | { path: string; description?: string | undefined },
  dir: string,
) {
  const path = typeof spec === 'string' ? spec : spec.path;
  const colon = path.lastIndexOf(':');
  // `C:\...` style drive letters have their colon at index 1.
  const hasExport = colon > 1;
  const file = resolve(dir, hasExport ? path.slice(0, colon) : path);
  const exportName = hasExport ? path.slice(colon + 1) : 'default';
  const description = typeof spec === 'string' ? null : (spec.description ?? null);
  return { graphId, file, exportName, description };
}

async function loadEntry(base: ReturnType<typeof parseSpec>): Promise<GraphEntry> {
  const where = `graph "${base.graphId}" from ${base.file}`;
  if (!existsSync(base.file)) throw new GraphLoadError(`Failed to load ${where}: file not found`);
  let mod: Record<string, unknown>;
  try {
    mod = await importUserModule(base.file);
  } catch (err) {
    throw new GraphLoadError(`Failed to load ${where}: ${(err as Error).message}`, { cause: err });
  }
  if (!(base.exportName in mod)) {
    throw new GraphLoadError(
      `Failed to load ${where}: the module has no export named "${base.exportName}"`,
    );
  }
  const exported = mod[base.exportName];
  if (typeof exported === 'function' && !isCompiled(exported)) {
    return { ...base, graph: undefined, factory: exported as GraphFactory };
  }
  let graph: AnyGraph | undefined;
  try {
    graph = await toGraph(exported);
  } catch (err) {
    throw new GraphLoadError(`Failed to load ${where}: ${(err as Error).message}`, { cause: err });
  }
  if (!graph) {
    throw new GraphLoadError(
      `Failed to load ${where}: export "${base.exportName}" is not a graph (expected a compiled graph, a StateGraph, or a factory function)`,
    );
  }
  return { ...base, graph, factory: undefined };
}

export class GraphRegistry {
  private readonly fingerprints = new Map<string, Promise<string>>();

  private constructor(
    private readonly entries: Map<string, GraphEntry>,
    private readonly checkpointer: BaseCheckpointSaver | undefined,
    private readonly store: BaseStore | undefined,
  ) {}

  static async load(
    loaded: LoadedConfig,
    checkpointer?: BaseCheckpointSaver,
    store?: BaseStore,
  ): Promise<GraphRegistry> {
    const entries = new Map<string, GraphEntry>();
    for (const [graphId, spec] of Object.entries(loaded.config.graphs)) {
      entries.set(graphId, await loadEntry(parseSpec(graphId, spec, loaded.dir)));
    }
    return new GraphRegistry(entries, checkpointer, store);
  }

  ids(): string[] {
    return [...this.entries.keys()];
  }

  has(graphId: string): boolean {
    return this.entries.has(graphId);
  }

  entry(graphId: string): GraphEntry | undefined {
    return this.entries.get(graphId);
  }

  /** Whether the graph is built by a factory from each use's config (see `get`). */
  isFactory(graphId: string): boolean {
    return this.entries.get(graphId)?.factory !== undefined;
  }

  /**
   * A digest of the graph's structure (nodes and edges). Derived data such as a cached state
   * snapshot's `next` and `tasks` depends on it, so caches key on it and a redeploy with a
   * changed graph misses them.
   */
  fingerprint(graphId: string): Promise<string> {
    let digest = this.fingerprints.get(graphId);
    if (!digest) {
      digest = this.get(graphId, {}, accessRuntime('assistants.read')).then(async (graph) => {
        const drawing = graph ? (await graph.getGraphAsync({})).toJSON() : null;
        return createHash('sha256').update(JSON.stringify(drawing)).digest('hex').slice(0, 16);
      });
      this.fingerprints.set(graphId, digest);
    }
    return digest;
  }

  /**
   * A graph bound to the shared checkpointer and store (`getStore()` inside nodes). Compiled
   * graphs are copied shallowly so the module's own instance is never mutated; factories are
   * called with the use's config and `runtime` (what the graph is built for), as the official
   * JS server calls them (by default: to describe the graph); one-argument factories ignore it.
   */
  async get(
    graphId: string,
    config: Record<string, unknown> = {},
    runtime: ServerRuntime = accessRuntime('assistants.read'),
  ): Promise<AnyGraph | undefined> {
    const entry = this.entries.get(graphId);
    if (!entry) return undefined;
    const base = entry.graph ?? (await toGraph(entry.factory?.(config, runtime)));
    if (!base) throw new GraphLoadError(`graph factory "${graphId}" did not return a graph`);
    const bound = Object.assign(
      Object.create(Object.getPrototypeOf(base) as object) as AnyGraph,
      base,
    );
    bound.checkpointer = this.checkpointer;
    bound.store = this.store;
    return bound;
  }
}
