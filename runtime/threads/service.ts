// Threads: persistent conversations, their checkpointed state, and its history.
import type { RunnableConfig } from '@langchain/core/runnables';
import type { StateSnapshot } from '@langchain/langgraph';
import { uuid7 as uuidv7 } from '../../common/ids/index.js';
import {
  withTransaction,
  type EmbeddedStatement,
  type Pool,
  type PoolClient,
} from '../../common/db/index.js';
import { AppError, badRequest, conflict, notFound } from '../../common/errors/index.js';
import type { Logger } from '../../common/logging/index.js';
import { CHECKPOINT_METADATA_KEY, type CheckpointStore } from '../checkpoints/index.js';
import {
  accessRuntime,
  toGraphCommand,
  type AnyGraph,
  type GraphRegistry,
} from '../graphs/index.js';
import {
  STATE_BODY_VERSION,
  checkpointRef,
  isoDates,
  emptyThreadState,
  needsParentForWrites,
  toJson,
  toThreadState,
  type ThreadStateBody,
} from '../state/index.js';
import type { z } from 'zod';
import type { Thread } from './schemas.js';
import type {
  CheckpointSelectorBody,
  HistoryOptions,
  StateUpdateBody,
  ThreadCountBody,
  ThreadCreateBody,
  ThreadField,
  ThreadPatchBody,
  ThreadSearchBody,
  ThreadStatus,
  TtlInput,
} from './schemas.js';
import { extractPath, extractRoot } from './extract.js';
import { threadInsertBatcher, type ThreadInsertBatcher } from './insert-batcher.js';
import { threadRowLoader, type ThreadRowLoader } from './row-loader.js';
import type { AuthFilter } from '../auth/index.js';
import type { ThreadRow, ThreadStore, Ttl } from './store.js';

export interface ThreadServiceDeps {
  pool: Pool;
  store: ThreadStore;
  checkpoints: CheckpointStore;
  graphs: GraphRegistry;
  logger: Logger;
  /** `checkpointer.ttl.default_ttl`: the TTL of threads created without one. */
  defaultTtl?: Ttl | undefined;
}

type Superstep = NonNullable<ThreadCreateBody['supersteps']>[number];

function toTtl(input: TtlInput | null | undefined): Ttl | undefined {
  if (input == null) return undefined;
  if (typeof input === 'number') return { minutes: input, strategy: 'delete' };
  return { minutes: input.ttl, strategy: input.strategy ?? 'delete' };
}

export type ThreadBody = z.infer<typeof Thread> & { ttl?: unknown };

/** The public shape of a thread; TTL details only when asked for. */
export function threadBody(row: Partial<ThreadRow>, includeTtl = false): ThreadBody {
  const { ttl_minutes, ttl_strategy, expires_at, error, ...rest } = row;
  const body: Record<string, unknown> = isoDates(rest);
  if (error !== null && error !== undefined) body.error = error;
  if (includeTtl) {
    body.ttl =
      ttl_minutes == null
        ? null
        : {
            ttl: ttl_minutes,
            strategy: ttl_strategy,
            expires_at: expires_at?.toISOString() ?? null,
          };
  }
  return body as ThreadBody;
}

function interruptsOf(snapshot: StateSnapshot): Record<string, unknown> {
  const map: Record<string, unknown> = {};
  for (const task of snapshot.tasks) {
    if (task.interrupts?.length) map[task.id] = toJson(task.interrupts);
  }
  return map;
}

/** SQLSTATE of a transaction PostgreSQL rolled back to break a deadlock. */
const DEADLOCK = '40P01';

export class ThreadService {
  /** Reads of single threads, batched per turn of the event loop (see `threadRowLoader`). */
  private readonly rows: ThreadRowLoader;
  /** Creations of threads, batched the same way (see `threadInsertBatcher`). */
  private readonly inserts: ThreadInsertBatcher;

  constructor(private readonly deps: ThreadServiceDeps) {
    this.rows = threadRowLoader(deps.store);
    this.inserts = threadInsertBatcher(deps.store);
  }

  async create(body: ThreadCreateBody): Promise<ThreadRow> {
    const threadId = body.thread_id ?? uuidv7();
    const metadata = body.metadata ?? {};
    const supersteps = body.supersteps ?? [];
    const graphId = typeof metadata.graph_id === 'string' ? metadata.graph_id : undefined;
    if (supersteps.length) {
      if (!graphId)
        throw badRequest(
          `Thread ${threadId} has no graph ID: supersteps need metadata.graph_id (graphId in the JS SDK, graph_id in the Python SDK)`,
        );
      if (!this.deps.graphs.has(graphId)) throw notFound(`Graph "${graphId}" not found`);
    }
    const inserted = await this.inserts.load({
      thread_id: threadId,
      metadata,
      ttl: toTtl(body.ttl) ?? this.deps.defaultTtl,
    });
    if (!inserted) {
      if (body.if_exists === 'do_nothing') return this.getRow(threadId);
      throw conflict('Thread already exists');
    }
    if (!supersteps.length || !graphId) return inserted;
    try {
      await this.applySupersteps(threadId, graphId, supersteps);
    } catch (err) {
      // A thread whose initial state could not be written is not left half-made.
      await this.deleteMany([threadId]);
      if (err instanceof AppError) throw err;
      throw badRequest(`Could not apply supersteps: ${(err as Error).message}`);
    }
    return this.getRow(threadId);
  }

  private async applySupersteps(
    threadId: string,
    graphId: string,
    supersteps: Superstep[],
  ): Promise<void> {
    const graph = await this.threadGraph(threadId, graphId, 'threads.update');
    let config: RunnableConfig = { configurable: { thread_id: threadId, checkpoint_ns: '' } };
    for (const step of supersteps) {
      const writes = Object.fromEntries(step.updates.map((u) => [u.as_node, toJson(u.values)]));
      config = await graph.bulkUpdateState(withMetadata(config, { graph_id: graphId, writes }), [
        {
          updates: step.updates.map((u) => ({
            values: u.command ? toGraphCommand(u.command) : u.values,
            asNode: u.as_node,
          })),
        },
      ]);
    }
    await this.syncValues(threadId, graph, graphId);
  }

  /**
   * Copies the latest checkpoint's values onto the thread row (for reads and search), with the
   * full state as the cache for state reads.
   */
  private async syncValues(
    threadId: string,
    graph: AnyGraph,
    graphId: string,
    db?: PoolClient,
  ): Promise<StateSnapshot | undefined> {
    const { state, latest } = await this.latestForRow(threadId, graph, graphId);
    await this.deps.store.setState(threadId, state, db);
    return latest;
  }

  /** What the thread row should hold for its latest checkpoint: values, interrupts, cache. */
  private async latestForRow(threadId: string, graph: AnyGraph, graphId: string) {
    // The key is read before the state: if another write lands in between, the cache is keyed
    // older than what it holds and the next read recomputes; it is never keyed newer.
    const stateKey = await this.deps.store.latestStateKey(threadId);
    const snapshot = await graph.getState({
      configurable: { thread_id: threadId, checkpoint_ns: '' },
    });
    const body = snapshot.createdAt ? await this.snapshotBody(graph, snapshot, graphId) : undefined;
    return {
      state: {
        values: toJson(snapshot.values ?? {}),
        interrupts: interruptsOf(snapshot),
        cache: body ? await this.cacheEntry(graphId, stateKey, body) : undefined,
      },
      latest: snapshot.createdAt ? snapshot : undefined,
    };
  }

  /** A cache entry for `body` when it is the state `stateKey` names, else nothing. */
  private async cacheEntry(graphId: string, stateKey: string | null, body: ThreadStateBody) {
    if (!stateKey || stateKey.split(':')[0] !== body.checkpoint_id) return undefined;
    const key = await this.cacheKey(graphId, stateKey);
    return key ? { key, body } : undefined;
  }

  /**
   * What a cached state is valid for: the body's shape, the graph's structure and the state's key.
   * A factory's graph may differ from one config to the next, so its threads are never cached.
   */
  private async cacheKey(graphId: string, stateKey: string): Promise<string | undefined> {
    if (this.deps.graphs.isFactory(graphId)) return undefined;
    return `${STATE_BODY_VERSION}.${await this.deps.graphs.fingerprint(graphId)}|${stateKey}`;
  }

  /** The latest state, served from the thread row when its cache key still matches. */
  private async latestState(threadId: string, visibleTo?: AuthFilter): Promise<ThreadStateBody> {
    const found = await this.deps.store.getWithStateCache(threadId, visibleTo);
    if (!found) throw notFound(`Thread with ID ${threadId} not found`);
    const graphId = this.graphIdOf(found.row);
    if (!graphId || !found.stateKey) return emptyThreadState();
    // A running graph writes pending writes that the key may not see; busy threads skip the cache.
    const cacheable = found.row.status !== 'busy';
    const key = await this.cacheKey(graphId, found.stateKey);
    if (cacheable && key && found.cacheKey === key) return found.cache as ThreadStateBody;
    const graph = await this.threadGraph(threadId, graphId, 'threads.read');
    const snapshot = await graph.getState({
      configurable: { thread_id: threadId, checkpoint_ns: '' },
    });
    if (!snapshot.createdAt) return emptyThreadState();
    const body = await this.snapshotBody(graph, snapshot, graphId);
    const entry = cacheable ? await this.cacheEntry(graphId, found.stateKey, body) : undefined;
    if (entry) await this.deps.store.saveStateCache(threadId, entry.key, entry.body);
    return body;
  }

  /** Creates the thread a stateless run executes on. */
  /** Creates an idle thread with this id unless one exists (a cron's `if_not_exists`). */
  async createIfMissing(threadId: string, metadata: Record<string, unknown>): Promise<void> {
    await this.deps.store.insert({ thread_id: threadId, metadata, ttl: this.deps.defaultTtl });
  }

  /**
   * A new thread for a run, created busy (and so, until the creating transaction commits, as
   * locked as `lockForRun` leaves one). False when the id is taken.
   */
  async createForRun(
    threadId: string,
    metadata: Record<string, unknown>,
    db: PoolClient,
  ): Promise<boolean> {
    const row = await this.deps.store.insert(
      { thread_id: threadId, metadata, ttl: this.deps.defaultTtl, status: 'busy' },
      db,
    );
    return row !== undefined;
  }

  /**
   * `createForRun` as a statement for the runs store to embed in a run's insert; with `onlyIf`
   * (another store's condition), it does nothing when that is false.
   */
  newBusyThread(
    threadId: string,
    metadata: Record<string, unknown>,
    onlyIf?: EmbeddedStatement,
  ): EmbeddedStatement {
    return this.deps.store.insertBusyStatement(threadId, metadata, this.deps.defaultTtl, onlyIf);
  }

  /**
   * `newBusyThread` or, when the thread exists, `lockedBusyThread` (with `lockMetadata`), as one
   * statement: a run on a thread that may not exist yet (`if_not_exists: "create"`). It reports
   * whether it created the thread.
   */
  newOrLockedBusyThread(
    threadId: string,
    metadata: Record<string, unknown>,
    lockMetadata: Record<string, unknown>,
    onlyIf?: EmbeddedStatement,
    visibleTo?: AuthFilter,
    uninterrupted = false,
  ): EmbeddedStatement & { reportsCreated: true } {
    return this.deps.store.upsertBusyStatement(
      threadId,
      metadata,
      this.deps.defaultTtl,
      lockMetadata,
      onlyIf,
      visibleTo,
      uninterrupted,
    );
  }

  /**
   * `lockForRun` as a statement for the runs store to embed in a run's insert (see above). With
   * `uninterrupted`, a thread with interrupts recorded is left alone as if missing.
   */
  lockedBusyThread(
    threadId: string,
    metadata: Record<string, unknown>,
    onlyIf?: EmbeddedStatement,
    visibleTo?: AuthFilter,
    uninterrupted = false,
  ): EmbeddedStatement {
    return this.deps.store.lockBusyStatement(threadId, metadata, onlyIf, visibleTo, uninterrupted);
  }

  /**
   * Locks the thread a run is being created on and marks it busy (undone if the creating
   * transaction rolls back, e.g. when a `reject` strategy refuses the run). False when the
   * thread does not exist, or does not match `visibleTo` (the caller's authorization filter).
   */
  lockForRun(
    threadId: string,
    metadata: Record<string, unknown>,
    db: PoolClient,
    visibleTo?: AuthFilter,
  ): Promise<boolean> {
    return this.deps.store.lockBusy(threadId, metadata, db, visibleTo);
  }

  /**
   * 404 unless the thread has this checkpoint of its root graph. LangGraph would start a run or
   * an update from an empty state when it finds no such checkpoint, so a mistyped id would
   * replace the thread's values with nothing but the new input.
   */
  async requireCheckpoint(threadId: string, checkpointId: string): Promise<void> {
    if (!(await this.deps.checkpoints.has(threadId, checkpointId, this.deps.pool)))
      throw notFound('Checkpoint not found');
  }

  /** Whether a run already wrote checkpoints (a retried run then continues from them). */
  runHasCheckpoints(threadId: string, runId: string): Promise<boolean> {
    return this.deps.checkpoints.hasRun(threadId, runId, this.deps.pool);
  }

  /**
   * Deletes the checkpoints a rolled-back run wrote; `first` runs first in the same transaction
   * (the run's lease check: a run taken over must not delete its successor's checkpoints).
   */
  discardRun(
    threadId: string,
    runId: string,
    first?: (db: PoolClient) => Promise<unknown>,
  ): Promise<void> {
    return withTransaction(this.deps.pool, async (db) => {
      await first?.(db);
      await this.deps.checkpoints.deleteRun(threadId, runId, db);
    });
  }

  /**
   * After a run ends: values follow the latest checkpoint; the status is `error` if it failed,
   * `interrupted` if the graph stopped with work left (interrupt() or a breakpoint), `busy` while
   * other runs wait, else `idle`. The cached full state is dropped, not rebuilt: the first state
   * read rebuilds it, so a run does not pay for a read that may never come.
   */
  async settleAfterRun(
    threadId: string,
    graphId: string,
    error: unknown,
    inSameTransaction?: (db: PoolClient) => Promise<unknown>,
    completedWith?: unknown,
  ): Promise<{ runsPending: boolean }> {
    const { status, state } =
      completedWith !== undefined && !error
        ? // The run ran to its end: nothing is next, and its last values are the state's.
          { status: 'idle' as const, state: { values: completedWith, interrupts: {} } }
        : await this.stateAfterRun(threadId, graphId, error);
    // The run's final status and the thread's change together: no reader sees one without the other.
    return withTransaction(this.deps.pool, async (db) => {
      await inSameTransaction?.(db);
      return this.deps.store.settle(threadId, status, error, db, state);
    });
  }

  /**
   * `settleAfterRun` for a run that ran to its end with `values`, as a statement the runs store
   * embeds in the one that finishes run `runId` (see RunStore.finishWithThread).
   */
  settleCompletedStatement(threadId: string, runId: string, values: unknown): EmbeddedStatement {
    return this.deps.store.settleStatement(threadId, runId, 'idle', { values, interrupts: {} });
  }

  private async stateAfterRun(threadId: string, graphId: string, error: unknown) {
    const graph = await this.threadGraph(threadId, graphId, 'threads.read');
    const snapshot = await graph.getState({
      configurable: { thread_id: threadId, checkpoint_ns: '' },
    });
    const latest = snapshot.createdAt ? snapshot : undefined;
    const stopped =
      latest !== undefined &&
      (latest.next.length > 0 || Object.keys(interruptsOf(latest)).length > 0);
    const status: ThreadStatus = error ? 'error' : stopped ? 'interrupted' : 'idle';
    return {
      status,
      state: { values: toJson(snapshot.values ?? {}), interrupts: interruptsOf(snapshot) },
    };
  }

  /**
   * A run ended before it started (cancelled while pending): its thread is `idle` at once, as
   * the official servers leave it, or `busy` while other runs wait. Its state did not change.
   */
  async settleUnstarted(
    threadId: string,
    inSameTransaction: (db: PoolClient) => Promise<unknown>,
  ): Promise<void> {
    await withTransaction(this.deps.pool, async (db) => {
      await inSameTransaction(db);
      await this.deps.store.settle(threadId, 'idle', null, db);
    });
  }

  /** Ends a run whose thread state cannot be read: the thread goes to `error`, its values stay. */
  async settleWithoutState(
    threadId: string,
    error: unknown,
    inSameTransaction: (db: PoolClient) => Promise<unknown>,
  ): Promise<{ runsPending: boolean }> {
    return withTransaction(this.deps.pool, async (db) => {
      await inSameTransaction(db);
      return this.deps.store.settle(threadId, 'error', error, db);
    });
  }

  /**
   * With `visibleTo` (the caller's authorization filter), a thread that does not match is not
   * found either: the read itself applies the filter, with no lookup of its own.
   */
  async getRow(threadId: string, visibleTo?: AuthFilter): Promise<ThreadRow> {
    const row = visibleTo
      ? await this.deps.store.getVisible(threadId, visibleTo)
      : await this.rows.load(threadId);
    if (!row) throw notFound(`Thread with ID ${threadId} not found`);
    return row;
  }

  /** A thread's interrupts, undefined when it does not exist (its values, maybe large, unread). */
  interruptsOf(threadId: string): Promise<Record<string, unknown> | undefined> {
    return this.deps.store.interrupts(threadId);
  }

  async patch(threadId: string, body: ThreadPatchBody): Promise<ThreadRow> {
    const row = await this.deps.store.patch(threadId, {
      metadata: body.metadata ?? undefined,
      ttl: toTtl(body.ttl),
    });
    if (!row) throw notFound(`Thread with ID ${threadId} not found`);
    return row;
  }

  async delete(threadId: string): Promise<void> {
    const deleted = await this.deleteMany([threadId]);
    if (!deleted.length) throw notFound(`Thread with ID ${threadId} not found`);
  }

  /** Deletes threads and their checkpoints in one transaction. */
  async deleteMany(threadIds: string[]): Promise<string[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await withTransaction(this.deps.pool, (db) => this.deleteIn(db, threadIds));
      } catch (err) {
        // A deadlock with a transaction that locks a thread before its runs (a run created
        // with multitask 'interrupt'): PostgreSQL rolled this one back; it can go again.
        if ((err as { code?: string }).code !== DEADLOCK || attempt >= 5) throw err;
      }
    }
  }

  private async deleteIn(db: PoolClient, threadIds: string[]): Promise<string[]> {
    const deleted = await this.deps.store.deleteMany(threadIds, db);
    await this.deps.checkpoints.deleteThreads(deleted, db);
    return deleted;
  }

  /** Deletes a run's temporary thread and its checkpoints in the transaction that ends the run. */
  async deleteAfterRun(
    threadId: string,
    inSameTransaction: (db: PoolClient) => Promise<unknown>,
  ): Promise<void> {
    await withTransaction(this.deps.pool, async (db) => {
      await inSameTransaction(db);
      await this.deleteIn(db, [threadId]);
    });
  }

  /**
   * `deleteAfterRun` as statements the runs store embeds in the one that finishes the run (see
   * RunStore.finishDeleting): the thread (and with it the run) and its checkpoints.
   */
  deleteAfterRunStatements(threadId: string): EmbeddedStatement[] {
    return [
      this.deps.store.deleteStatement(threadId),
      ...this.deps.checkpoints.deleteThreadStatements(threadId),
    ];
  }

  async deleteThreadsOfAssistant(assistantId: string): Promise<void> {
    const ids = await this.deps.store.idsByMetadata({ assistant_id: assistantId });
    if (ids.length) await this.deleteMany(ids);
  }

  /** With `extract`, each thread carries what its paths lead to, whatever `select` keeps. */
  async search(body: ThreadSearchBody, auth?: AuthFilter) {
    const paths = Object.entries(body.extract ?? {});
    const roots = [...new Set(paths.map(([, path]) => extractRoot(path)))] as ThreadField[];
    const select = body.select?.length ? body.select : undefined;
    const added = select ? roots.filter((root) => !select.includes(root)) : [];
    const found = await this.deps.store.search({
      auth,
      metadata: body.metadata,
      values: body.values,
      status: body.status,
      ids: body.ids,
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
      sortBy: body.sort_by ?? 'created_at',
      sortOrder: body.sort_order ?? 'desc',
      select: select && [...select, ...added],
    });
    if (!paths.length) return found;
    for (const row of found.rows as Record<string, unknown>[]) {
      row.extracted = Object.fromEntries(
        paths.map(([alias, path]) => [alias, extractPath(row, path)]),
      );
      for (const column of added) delete row[column];
    }
    return found;
  }

  count(body: ThreadCountBody, auth?: AuthFilter): Promise<number> {
    return this.deps.store.count({ ...body, auth });
  }

  async copy(threadId: string): Promise<ThreadRow> {
    const newId = uuidv7();
    const row = await withTransaction(this.deps.pool, async (db) => {
      const copied = await this.deps.store.copy(threadId, newId, db);
      if (copied) await this.deps.checkpoints.copyThread(threadId, newId, db);
      return copied;
    });
    if (!row) throw notFound(`Thread with ID ${threadId} not found`);
    return row;
  }

  async prune(
    threadIds: string[],
    strategy: 'delete' | 'keep_latest',
  ): Promise<{ pruned_count: number }> {
    if (!threadIds.length) return { pruned_count: 0 };
    if (strategy === 'delete') return { pruned_count: (await this.deleteMany(threadIds)).length };
    const pruned = await withTransaction(this.deps.pool, async (db) => {
      const { rows } = await db.query<{ thread_id: string }>(
        'SELECT thread_id FROM threads WHERE thread_id = ANY($1::uuid[])',
        [threadIds],
      );
      const ids = rows.map((r) => r.thread_id);
      await this.deps.checkpoints.keepLatest(ids, db);
      // The cached state names a parent checkpoint that no longer exists.
      await this.deps.store.clearStateCache(ids, db);
      return ids.length;
    });
    return { pruned_count: pruned };
  }

  /** Deletes (or prunes) threads whose TTL has passed; returns how many were swept. */
  async sweepExpired(limit = 1000): Promise<number> {
    return withTransaction(this.deps.pool, async (db) => {
      const expired = await this.deps.store.claimExpired(limit, db);
      const toDelete = expired
        .filter((t) => t.ttl_strategy !== 'keep_latest')
        .map((t) => t.thread_id);
      const toPrune = expired
        .filter((t) => t.ttl_strategy === 'keep_latest')
        .map((t) => t.thread_id);
      await this.deleteIn(db, toDelete);
      await this.deps.checkpoints.keepLatest(toPrune, db);
      await this.deps.store.clearStateCache(toPrune, db);
      await this.deps.store.clearExpiry(toPrune, db);
      return expired.length;
    });
  }

  /**
   * The graph a thread's state is read and written with. A factory (`(config, runtime) => graph`)
   * may build a different graph for each config: it is given the config of the thread's newest
   * run, as the official server builds it with the config the thread's runs left on it, and
   * `access` (a read or a write of state) as the runtime's access context.
   */
  private async threadGraph(
    threadId: string,
    graphId: string,
    access: 'threads.read' | 'threads.update',
  ): Promise<AnyGraph> {
    const config = this.deps.graphs.isFactory(graphId)
      ? await this.deps.store.latestRunConfig(threadId)
      : undefined;
    const graph = await this.deps.graphs.get(graphId, config ?? {}, accessRuntime(access));
    if (!graph) throw notFound(`Graph "${graphId}" not found`);
    return graph;
  }

  private graphIdOf(row: ThreadRow): string | undefined {
    const id = row.metadata.graph_id;
    return typeof id === 'string' && this.deps.graphs.has(id) ? id : undefined;
  }

  private async snapshotBody(
    graph: AnyGraph,
    snapshot: StateSnapshot,
    graphId: string,
    parent?: StateSnapshot,
  ) {
    const resolvedParent =
      parent ??
      (needsParentForWrites(snapshot) && snapshot.parentConfig
        ? await graph.getState(snapshot.parentConfig)
        : undefined);
    const body = toThreadState(snapshot, resolvedParent);
    body.metadata.graph_id ??= graphId;
    return body;
  }

  /** `visibleTo`: as for `getRow`. */
  async state(
    threadId: string,
    options: { subgraphs?: boolean; checkpoint?: CheckpointSelectorBody | undefined } = {},
    visibleTo?: AuthFilter,
  ): Promise<ThreadStateBody> {
    if (!options.checkpoint && !options.subgraphs) return this.latestState(threadId, visibleTo);
    const row = await this.getRow(threadId, visibleTo);
    const graphId = this.graphIdOf(row);
    if (!graphId) {
      if (options.checkpoint?.checkpoint_id) throw notFound('Checkpoint not found');
      return emptyThreadState();
    }
    const graph = await this.threadGraph(threadId, graphId, 'threads.read');
    const config = checkpointConfig(threadId, options.checkpoint);
    const snapshot = await graph.getState(config, { subgraphs: options.subgraphs ?? false });
    if (!snapshot.createdAt) {
      if (options.checkpoint?.checkpoint_id) throw notFound('Checkpoint not found');
      return emptyThreadState();
    }
    return this.snapshotBody(graph, snapshot, graphId);
  }

  /**
   * The Python SDK reads `checkpoint`; the JS SDK's type is a RunnableConfig (`configurable`).
   * Both are returned so either client sees the new checkpoint, and `checkpoint_id` as well, as
   * the Python server still returns it.
   */
  async updateState(
    threadId: string,
    body: StateUpdateBody,
  ): Promise<{ checkpoint: unknown; configurable: unknown; checkpoint_id: unknown }> {
    const row = await this.getRow(threadId);
    if (row.status === 'busy') throw conflict('Thread is busy');
    const graphId = this.graphIdOf(row);
    if (!graphId) throw badRequest(`Thread ${threadId} has no graph ID`);
    const graph = await this.threadGraph(threadId, graphId, 'threads.update');
    const selector =
      body.checkpoint ?? (body.checkpoint_id ? { checkpoint_id: body.checkpoint_id } : undefined);
    if (selector?.checkpoint_id && !selector.checkpoint_ns)
      await this.requireCheckpoint(threadId, selector.checkpoint_id);
    const asNode = body.as_node ?? undefined;
    const writes = asNode ? { [asNode]: toJson(body.values) } : null;
    let next: RunnableConfig;
    try {
      next = await graph.updateState(
        withMetadata(checkpointConfig(threadId, selector), { graph_id: graphId, writes }),
        body.values,
        asNode,
      );
    } catch (err) {
      throw badRequest(`Could not update state: ${(err as Error).message}`);
    }
    await this.syncValues(threadId, graph, graphId);
    const checkpoint = checkpointRef(next);
    return {
      checkpoint,
      configurable: checkpoint,
      checkpoint_id: checkpoint?.checkpoint_id ?? null,
    };
  }

  /** `visibleTo`: as for `getRow`. */
  async history(
    threadId: string,
    options: HistoryOptions,
    visibleTo?: AuthFilter,
  ): Promise<ThreadStateBody[]> {
    const row = await this.getRow(threadId, visibleTo);
    const graphId = this.graphIdOf(row);
    if (!graphId) return [];
    const graph = await this.threadGraph(threadId, graphId, 'threads.read');
    const limit = options.limit ?? 10;
    const before =
      typeof options.before === 'string' ? { checkpoint_id: options.before } : options.before;
    const snapshots: StateSnapshot[] = [];
    // One snapshot more than asked: each snapshot's parent supplies its `writes`.
    for await (const s of graph.getStateHistory(
      checkpointConfig(threadId, options.checkpoint ?? undefined),
      {
        limit: limit + 1,
        ...(before?.checkpoint_id ? { before: checkpointConfig(threadId, before) } : {}),
        ...(options.metadata ? { filter: options.metadata } : {}),
      },
    )) {
      snapshots.push(s);
    }
    const page = snapshots.slice(0, limit);
    return Promise.all(
      page.map((s, i) => {
        const parent = snapshots[i + 1];
        const isParent =
          parent &&
          s.parentConfig?.configurable?.checkpoint_id === parent.config.configurable?.checkpoint_id;
        return this.snapshotBody(graph, s, graphId, isParent ? parent : undefined);
      }),
    );
  }
}

function checkpointConfig(
  threadId: string,
  selector: CheckpointSelectorBody | null | undefined,
): RunnableConfig {
  const configurable: Record<string, unknown> = {
    thread_id: threadId,
    checkpoint_ns: selector?.checkpoint_ns ?? '',
  };
  if (selector?.checkpoint_id) configurable.checkpoint_id = selector.checkpoint_id;
  if (selector?.checkpoint_map) configurable.checkpoint_map = selector.checkpoint_map;
  return { configurable };
}

function withMetadata(config: RunnableConfig, metadata: Record<string, unknown>): RunnableConfig {
  return {
    ...config,
    configurable: { ...config.configurable, [CHECKPOINT_METADATA_KEY]: metadata },
  };
}
