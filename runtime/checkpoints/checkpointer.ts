// The official Postgres checkpointer with three changes:
// - metadata the server wants recorded on a checkpoint (graph_id, the writes of a state update,
//   later run ids) rides in a private configurable key, because LangGraph JS copies only
//   `thread_id` from the config;
// - channel versions are unique strings, not bare integers. Blobs are keyed by version, so with
//   integers a fork from an older checkpoint reuses the other branch's blob (ON CONFLICT DO
//   NOTHING) and the fork silently loses its update;
// - a checkpoint with its blobs, and a task's writes, are each one statement (write-statements.ts),
//   without the base class's `empty` blob rows and with its metadata serialised once;
// - checkpoints holding chat messages are read back by a faster reviver (serde.ts);
// - while a run defers its thread's writes (`defer`, deferred.ts) they are collected, not sent;
// - a run's first read may have been made already, by the statement that started it (prefetch.ts);
// - a run's writes are fenced by its lease (RUN_FENCE_KEY): a worker that lost it writes nothing.
import type { RunnableConfig } from '@langchain/core/runnables';
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
  PendingWrite,
} from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import {
  encodeJsonText,
  jsonb,
  leaseLost,
  fencedStatement,
  type Pool,
  type RunFence,
} from '../../common/db/index.js';
import { randomHex } from '../../common/ids/index.js';
import { CheckpointDeferral, asOneStatement } from './deferred.js';
import {
  CHECKPOINT_SELECT_SQL,
  PREFETCHED_CHECKPOINT_KEY,
  type LatestCheckpointRow,
  type PrefetchedCheckpoint,
} from './prefetch.js';
import { CheckpointSerde } from './serde.js';
import { putCheckpointStatement, putWritesStatement } from './write-statements.js';

export const CHECKPOINT_METADATA_KEY = '__graphdock_checkpoint_metadata';
/**
 * Configurable key of a run whose thread was created for it (a threadless run's first attempt):
 * `{ unread: true }` until its first read, which then needs no query, as nothing is there yet.
 */
export const FRESH_THREAD_KEY = '__graphdock_fresh_thread';
/** Configurable key of a run whose checkpoint writes are deferred: its CheckpointDeferral. */
export const DEFERRED_WRITES_KEY = '__graphdock_deferred_writes';

/**
 * Configurable key of a run's lease (a RunFence): its checkpoint writes are written only while
 * it holds, and throw LeaseLostError once another worker took the run over.
 */
export const RUN_FENCE_KEY = '__graphdock_run_fence';

function fenceOf(config: RunnableConfig): RunFence | undefined {
  return config.configurable?.[RUN_FENCE_KEY] as RunFence | undefined;
}

/** The deferral a write's config carries, while it takes writes. */
function deferralOf(config: RunnableConfig): CheckpointDeferral | undefined {
  const deferral = config.configurable?.[DEFERRED_WRITES_KEY] as CheckpointDeferral | undefined;
  return deferral?.active ? deferral : undefined;
}

/** `<zero-padded counter>.<random>`: ordered as strings, never equal across branches. */
export function nextChannelVersion(current: string | number | undefined): string {
  const counter =
    current === undefined
      ? 0
      : typeof current === 'number'
        ? current
        : Number.parseInt(current.split('.')[0] ?? '0', 10);
  return `${String(counter + 1).padStart(32, '0')}.${randomHex(8)}`;
}

export class GraphdockCheckpointer extends PostgresSaver {
  /**
   * Writes still in flight, per thread. With asynchronous durability LangGraph may still be
   * writing a checkpoint when an aborted run's stream has already failed; whoever settles or
   * rolls back that run waits for these first.
   */
  private readonly inflight = new Map<string, Set<Promise<unknown>>>();

  constructor(private readonly db: Pool) {
    super(db, new CheckpointSerde());
    // The saver's reads (getTuple, list) with blobs looked up by key (see CHECKPOINT_SELECT_SQL).
    const statements = this as unknown as { SQL_STATEMENTS: Record<string, string> };
    statements.SQL_STATEMENTS = { ...statements.SQL_STATEMENTS, SELECT_SQL: CHECKPOINT_SELECT_SQL };
  }

  /**
   * A deferral for a run's writes to `threadId`: the run passes it in its configurable
   * (`DEFERRED_WRITES_KEY`), and its writes are collected until the deferral ends, then sent
   * together at most `maxDelayMs` after they were made. Only for a run whose durability is not
   * `sync`, which otherwise waits for each step's checkpoint. Other writers of the thread (a
   * state update through the API) are not deferred.
   */
  defer(threadId: string, maxDelayMs: number, fence?: RunFence): CheckpointDeferral {
    return new CheckpointDeferral(
      (inserts) =>
        this.trackThread(
          threadId,
          this.fencedQuery(
            fence ? fencedStatement(fence, inserts) : asOneStatement(inserts),
            fence,
          ),
        ),
      maxDelayMs,
    );
  }

  /** Runs a write; one with a fence whose lease is gone wrote nothing, and throws. */
  private async fencedQuery(
    statement: { text: string; values: unknown[] },
    fence: RunFence | undefined,
  ): Promise<void> {
    const { rows } = await this.db.query<{ held?: boolean }>(statement);
    if (fence && !rows[0]?.held) throw leaseLost(fence);
  }

  private track<T>(config: RunnableConfig, write: Promise<T>): Promise<T> {
    // Once anything is written, the thread is fresh no more, and what was read before is old.
    const fresh = config.configurable?.[FRESH_THREAD_KEY] as { unread: boolean } | undefined;
    if (fresh) fresh.unread = false;
    const prefetched = config.configurable?.[PREFETCHED_CHECKPOINT_KEY] as
      PrefetchedCheckpoint | undefined;
    if (prefetched) prefetched.unread = false;
    return this.trackThread(String(config.configurable?.thread_id ?? ''), write);
  }

  private trackThread<T>(threadId: string, write: Promise<T>): Promise<T> {
    let set = this.inflight.get(threadId);
    if (!set) this.inflight.set(threadId, (set = new Set()));
    const pending = set;
    pending.add(write);
    const done = () => {
      pending.delete(write);
      if (!pending.size) this.inflight.delete(threadId);
    };
    write.then(done, done);
    return write;
  }

  /** Resolves once no checkpoint write for the thread is in flight. */
  async idle(threadId: string): Promise<void> {
    for (let set = this.inflight.get(threadId); set?.size; set = this.inflight.get(threadId)) {
      await Promise.allSettled([...set]);
    }
  }

  override putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
  ): Promise<void> {
    return this.track(config, this.writeTaskWrites(config, writes, taskId));
  }

  private async writeTaskWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
  ): Promise<void> {
    const { thread_id, checkpoint_ns = '', checkpoint_id } = requireConfigurable(config);
    const rows = await this._dumpWrites(thread_id, checkpoint_ns, checkpoint_id, taskId, writes);
    const channels = writes.map(([channel]) => channel);
    // Looked up once the rows are made: a deferral that ended meanwhile no longer takes them.
    const deferral = deferralOf(config);
    if (deferral) return deferral.add((pending) => pending.addWrites(rows, channels));
    const fence = fenceOf(config);
    const statement = putWritesStatement(rows, channels, fence);
    if (statement) await this.fencedQuery(statement, fence);
  }

  override async getTuple(config: RunnableConfig): ReturnType<PostgresSaver['getTuple']> {
    const configurable = config.configurable ?? {};
    const fresh = configurable[FRESH_THREAD_KEY] as { unread: boolean } | undefined;
    if (fresh?.unread) {
      fresh.unread = false;
      if (!configurable.checkpoint_id && !configurable.checkpoint_ns) return undefined;
    }
    const prefetched = configurable[PREFETCHED_CHECKPOINT_KEY] as PrefetchedCheckpoint | undefined;
    if (prefetched?.unread) {
      prefetched.unread = false;
      if (!configurable.checkpoint_id && !configurable.checkpoint_ns)
        return this.tupleOf(prefetched.row, config);
    }
    await this.flushDeferred(config);
    return super.getTuple(config);
  }

  /** What getTuple returns for `row`, read for the thread's newest root checkpoint. */
  private async tupleOf(
    row: LatestCheckpointRow,
    config: RunnableConfig,
  ): ReturnType<PostgresSaver['getTuple']> {
    const { latest_checkpoint: checkpoint, latest_checkpoint_id: id } = row;
    if (!checkpoint || !id) return undefined;
    const parentId = row.latest_parent_checkpoint_id;
    // A checkpoint from before format 4 needs its pending sends migrated: the full read does it.
    if (checkpoint.v < 4 && parentId) return super.getTuple(config);
    const thread_id = String(config.configurable?.thread_id);
    const address = (checkpoint_id: string) => ({
      configurable: { thread_id, checkpoint_ns: '', checkpoint_id },
    });
    return {
      config: address(id),
      checkpoint: await this._loadCheckpoint(checkpoint, row.latest_channel_values ?? []),
      metadata: (await this._loadMetadata(row.latest_metadata ?? {})) as CheckpointMetadata,
      ...(parentId ? { parentConfig: address(parentId) } : {}),
      pendingWrites: await this._loadWrites(row.latest_pending_writes ?? []),
    };
  }

  override async *list(
    config: RunnableConfig,
    options?: Parameters<PostgresSaver['list']>[1],
  ): ReturnType<PostgresSaver['list']> {
    await this.flushDeferred(config);
    yield* super.list(config, options);
  }

  /** A run's reads see its own deferred writes: they are written first. */
  private async flushDeferred(config: RunnableConfig): Promise<void> {
    const deferral = deferralOf(config);
    if (deferral?.hasPending) await deferral.flush();
  }

  // The base class is typed for numeric versions; LangGraph compares versions generically
  // (numbers numerically, strings lexically), so string versions are safe at runtime.
  override getNextVersion(current: number | undefined): number {
    return nextChannelVersion(current) as unknown as number;
  }

  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const extra = config.configurable?.[CHECKPOINT_METADATA_KEY] as
      Record<string, unknown> | undefined;
    return this.track(
      config,
      this.writeCheckpoint(
        config,
        checkpoint,
        extra ? { ...metadata, ...extra } : metadata,
        newVersions,
      ),
    );
  }

  private async writeCheckpoint(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const { thread_id, checkpoint_ns = '', checkpoint_id } = requireConfigurable(config);
    const [blobs, metadataJson]: [unknown[][], string] = await Promise.all([
      this._dumpBlobs(thread_id, checkpoint_ns, checkpoint.channel_values, newVersions),
      this.metadataJson(metadata),
    ]);
    const row = [
      thread_id,
      checkpoint_ns,
      checkpoint.id,
      checkpoint_id,
      // jsonb() keeps strings PostgreSQL's jsonb refuses (a state update's NUL, say).
      jsonb(this._dumpCheckpoint(checkpoint)),
      metadataJson,
    ];
    // A channel emptied at this version gets an `empty` row from the base class; every reader
    // (the saver's, prefetch.ts, Python's) skips those, so a missing row reads the same.
    const written = blobs.filter((blob) => blob[4] !== 'empty');
    const deferral = deferralOf(config);
    if (deferral) deferral.add((pending) => pending.addCheckpoint(row, written));
    else {
      const fence = fenceOf(config);
      await this.fencedQuery(putCheckpointStatement(row, written, fence), fence);
    }
    return { configurable: { thread_id, checkpoint_ns, checkpoint_id: checkpoint.id } };
  }

  /**
   * The metadata's jsonb parameter. The base class's `_dumpMetadata` serialises it, parses that
   * back, and the row serialised it again; jsonb stores the same value from the first text.
   */
  private async metadataJson(metadata: CheckpointMetadata): Promise<string> {
    const [, bytes] = await this.serde.dumpsTyped(metadata);
    return encodeJsonText(new TextDecoder().decode(bytes).replace(/\0/g, ''));
  }
}

interface CheckpointAddress {
  thread_id: string;
  checkpoint_ns?: string;
  checkpoint_id: string;
}

function requireConfigurable(config: RunnableConfig): CheckpointAddress {
  if (config.configurable === undefined)
    throw new Error('Missing "configurable" field in "config" param');
  return config.configurable as CheckpointAddress;
}
