// Assistants: versioned configurations of a graph. One system assistant exists per graph.
import { validate as isUuid } from 'uuid';
import { uuid7 as uuidv7 } from '../../common/ids/index.js';
import {
  sameTurnReads,
  withTransaction,
  type EmbeddedStatement,
  type Pool,
} from '../../common/db/index.js';
import { AppError, conflict, invalid, notFound } from '../../common/errors/index.js';
import { MAX_INT4 } from '../../common/limits/index.js';
import type { Logger } from '../../common/logging/index.js';
import {
  accessRuntime,
  graphDrawing,
  graphSchemas,
  runtimeSchemas,
  subgraphSchemas,
  systemAssistantId,
  type AnyGraph,
  type GraphRegistry,
  type TypedSchemaResolver,
} from '../graphs/index.js';
import type {
  AssistantCountBody,
  AssistantCreateBody,
  AssistantPatchBody,
  AssistantSearchBody,
} from './schemas.js';
import type { AuthFilter } from '../auth/index.js';
import type { AssistantRow, AssistantStore } from './store.js';
import type { SystemAssistantDefaults } from './system-defaults.js';

/** Removes the threads of a deleted assistant; provided by the threads context. */
export interface AssistantThreadCleanup {
  deleteThreadsOfAssistant(assistantId: string): Promise<void>;
}

export interface AssistantServiceDeps {
  pool: Pool;
  store: AssistantStore;
  graphs: GraphRegistry;
  threads: AssistantThreadCleanup;
  logger: Logger;
  /** Schemas from graphs' TypeScript types, for graphs that carry none at run time. */
  typedSchemas?: TypedSchemaResolver;
}

/** Assistants remembered for runs (see `forRun`); the map starts over when it is full. */
const MAX_REMEMBERED = 1000;

/** An assistant as a new run uses it, and whether it may have changed since it was read. */
export interface AssistantForRun {
  assistant: AssistantRow;
  /**
   * For an assistant remembered from an earlier read: a condition that it is unchanged, for the
   * statement that creates the run. A run created under a false one must not be kept.
   */
  unchanged?: EmbeddedStatement;
}

export class AssistantService {
  /** Assistants read for runs, with their row versions, by assistant id. */
  private readonly remembered = new Map<string, { row: AssistantRow; rowVersion: string }>();
  /** System assistant ids of registered graphs (a fixed set), derived once each. */
  private readonly systemIds = new Map<string, string>();
  /** Searches and counts: identical ones asked in one turn of the event loop share one query. */
  private readonly searchSameTurn: AssistantStore['search'];
  private readonly countSameTurn: AssistantStore['count'];

  constructor(private readonly deps: AssistantServiceDeps) {
    this.searchSameTurn = sameTurnReads((query) => deps.store.search(query));
    this.countSameTurn = sameTurnReads((filter) => deps.store.count(filter));
  }

  /**
   * The assistant a new run uses. With `remembered`, one read before for a run is used again,
   * with a condition that it is unchanged: a run's creation then needs no read of its assistant.
   */
  async forRun(idOrGraph: string, remembered: boolean): Promise<AssistantForRun> {
    // Neither an id nor a graph: no such assistant (404, as the official JS server answers).
    if (!isUuid(idOrGraph) && !this.deps.graphs.has(idOrGraph))
      throw notFound('Assistant not found');
    // A run names its assistant in the request body.
    const id = this.resolveId(idOrGraph, 'body');
    const known = remembered ? this.remembered.get(id) : undefined;
    if (known)
      return {
        assistant: known.row,
        unchanged: this.deps.store.unchangedCondition(id, known.rowVersion),
      };
    const found = await this.deps.store.getVersioned(id);
    if (!found) {
      this.remembered.delete(id);
      throw notFound('Assistant not found');
    }
    if (this.remembered.size >= MAX_REMEMBERED) this.remembered.clear();
    this.remembered.set(id, found);
    return { assistant: found.row };
  }

  /**
   * Creates the system assistant of every registered graph that has none, with its `defaults`
   * (LANGGRAPH_CONFIG) if any; safe to run on every replica.
   */
  async ensureSystemAssistants(
    defaults: Map<string, SystemAssistantDefaults> = new Map(),
  ): Promise<void> {
    for (const graphId of this.deps.graphs.ids()) {
      const own = defaults.get(graphId);
      await this.deps.store.insert({
        assistant_id: systemAssistantId(graphId),
        graph_id: graphId,
        name: graphId,
        description: this.deps.graphs.entry(graphId)?.description ?? null,
        config: own?.config ?? {},
        context: own?.context ?? {},
        metadata: { created_by: 'system' },
      });
    }
  }

  /**
   * Accepts an assistant UUID or a graph id (meaning that graph's system assistant). `where`:
   * the part of the request the id came from, which a 422 names.
   */
  resolveId(idOrGraph: string, where: 'path' | 'body' = 'path'): string {
    if (isUuid(idOrGraph)) return idOrGraph;
    if (this.deps.graphs.has(idOrGraph)) {
      // Every run that names its graph asks again, and each id is a SHA-1.
      let id = this.systemIds.get(idOrGraph);
      if (id === undefined) this.systemIds.set(idOrGraph, (id = systemAssistantId(idOrGraph)));
      return id;
    }
    throw invalid(
      [where, 'assistant_id'],
      `Invalid assistant ID: must be a UUID or a registered graph ID, got "${idOrGraph}"`,
    );
  }

  private requireGraph(graphId: string): void {
    if (!this.deps.graphs.has(graphId)) throw notFound(`Graph "${graphId}" not found`);
  }

  async create(body: AssistantCreateBody): Promise<AssistantRow> {
    this.requireGraph(body.graph_id);
    const assistantId = body.assistant_id ?? uuidv7();
    const inserted = await this.deps.store.insert({
      assistant_id: assistantId,
      graph_id: body.graph_id,
      name: body.name ?? 'Untitled',
      description: body.description ?? null,
      config: body.config ?? {},
      context: body.context ?? {},
      metadata: body.metadata ?? {},
    });
    if (inserted) return inserted;
    if (body.if_exists === 'do_nothing') return this.get(assistantId);
    throw conflict('Assistant already exists');
  }

  async get(idOrGraph: string): Promise<AssistantRow> {
    const row = await this.deps.store.get(this.resolveId(idOrGraph));
    if (!row) throw notFound('Assistant not found');
    return row;
  }

  async patch(idOrGraph: string, body: AssistantPatchBody): Promise<AssistantRow> {
    if (body.graph_id) this.requireGraph(body.graph_id);
    const id = this.resolveId(idOrGraph);
    const row = await withTransaction(this.deps.pool, (db) =>
      this.deps.store.addVersion(
        id,
        {
          ...(body.graph_id ? { graph_id: body.graph_id } : {}),
          ...(body.name != null ? { name: body.name } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.config ? { config: body.config } : {}),
          ...(body.context ? { context: body.context } : {}),
          ...(body.metadata ? { metadata: body.metadata } : {}),
        },
        db,
      ),
    );
    if (!row) throw notFound('Assistant not found');
    return row;
  }

  async delete(idOrGraph: string, deleteThreads: boolean): Promise<string[]> {
    const id = this.resolveId(idOrGraph);
    if (!(await this.deps.store.delete(id))) throw notFound('Assistant not found');
    if (deleteThreads) await this.deps.threads.deleteThreadsOfAssistant(id);
    return [id];
  }

  /** One page of matching assistants; the rows are shared with identical searches, unchanged. */
  async search(body: AssistantSearchBody, auth?: AuthFilter) {
    return this.searchSameTurn({
      auth,
      metadata: body.metadata,
      graph_id: body.graph_id,
      name: body.name,
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
      sortBy: body.sort_by ?? 'created_at',
      sortOrder: body.sort_order ?? 'desc',
      select: body.select,
    });
  }

  count(body: AssistantCountBody, auth?: AuthFilter): Promise<number> {
    return this.countSameTurn({
      auth,
      metadata: body.metadata,
      graph_id: body.graph_id,
      name: body.name,
    });
  }

  async versions(
    idOrGraph: string,
    body: {
      metadata?: Record<string, unknown> | null;
      limit?: number | null;
      offset?: number | null;
    },
  ) {
    const id = this.resolveId(idOrGraph);
    const rows = await this.deps.store.versions(id, {
      metadata: body.metadata,
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
    });
    if (!rows.length && !(await this.deps.store.get(id))) throw notFound('Assistant not found');
    return rows;
  }

  async setLatest(idOrGraph: string, version: number): Promise<AssistantRow> {
    const id = this.resolveId(idOrGraph);
    // Versions are integers in the database: a larger one cannot exist.
    const row = version <= MAX_INT4 ? await this.deps.store.setLatest(id, version) : undefined;
    if (row) return row;
    if (!(await this.deps.store.get(id))) throw notFound('Assistant not found');
    throw notFound('Assistant version not found');
  }

  private async graphOf(idOrGraph: string): Promise<{ assistant: AssistantRow; graph: AnyGraph }> {
    const assistant = await this.get(idOrGraph);
    const graph = await this.deps.graphs.get(
      assistant.graph_id,
      { configurable: assistant.config.configurable ?? {} },
      accessRuntime('assistants.read'),
    );
    if (!graph) throw notFound(`Graph "${assistant.graph_id}" not found`);
    return { assistant, graph };
  }

  async drawing(idOrGraph: string, xray: boolean | number): Promise<unknown> {
    const { graph } = await this.graphOf(idOrGraph);
    try {
      return await graphDrawing(graph, xray);
    } catch (err) {
      throw new AppError('BAD_REQUEST', `Could not draw graph: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /**
   * The graph's JSON Schemas. `waitForTypes: false` (A2A, which needs only the input keys on the
   * path of a message) takes the types only if they were read already, never waiting seconds.
   */
  async schemas(idOrGraph: string, options: { waitForTypes?: boolean } = {}) {
    const { assistant, graph } = await this.graphOf(idOrGraph);
    const resolver = this.deps.typedSchemas;
    // Only when the graph carries no schema: reading the types costs seconds the first time.
    const typed =
      resolver && !runtimeSchemas(graph)
        ? options.waitForTypes === false
          ? resolver.ready(assistant.graph_id)
          : await resolver.resolve(assistant.graph_id)
        : undefined;
    return { graph_id: assistant.graph_id, ...graphSchemas(graph, typed) };
  }

  async subgraphs(idOrGraph: string, namespace: string | undefined, recurse: boolean) {
    const { graph } = await this.graphOf(idOrGraph);
    return subgraphSchemas(graph, namespace, recurse);
  }
}
