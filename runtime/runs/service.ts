// Runs: creation with multitask strategies, waiting and joining, cancellation.
import type { IncomingHttpHeaders } from 'node:http';
import { uuid7 as uuidv7 } from '../../common/ids/index.js';
import {
  withTransaction,
  type EmbeddedStatement,
  type EmbeddedRead,
  type Pool,
  type PoolClient,
} from '../../common/db/index.js';
import {
  AppError,
  badRequest,
  conflict,
  invalid,
  notFound,
  unavailable,
} from '../../common/errors/index.js';
import { isJsonObject } from '../../common/json/index.js';
import type { AssistantService } from '../assistants/index.js';
import type { ThreadService } from '../threads/index.js';
import { headerSelector, type HeaderSelector } from './configurable-headers.js';
import { END_EVENT, type RunEventLog } from './event-log.js';
import type { RunKwargs } from './executor.js';
import { CHANNELS, startedPayload, type Notifier } from './notifier.js';
import type { BulkCancelBody, RunCreateBody, StreamMode } from './schemas.js';
import type { SseFrame } from './sse.js';
import {
  isCancelLockBusy,
  isRunningConflict,
  type NewRun,
  type RunEvent,
  type RunRow,
  type RunStart,
  type RunStatus,
  type RunStore,
} from './store.js';
import { threadEvents, type ThreadCursor, type ThreadStreamMode } from './thread-stream.js';

/**
 * Tries at creating a run whose strategy cancels runs that are writing at that moment (see
 * `createPlanned`), and the longest pause between two: about 2 s in all at worst.
 */
const CANCEL_LOCK_TRIES = 60;
const CANCEL_LOCK_PAUSE_MS = 40;

/** `tryOnce` again, after a short pause, while a run it would cancel is busy (see above). */
async function whileCancelLocksBusy<T>(tryOnce: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await tryOnce();
    } catch (err) {
      if (!isCancelLockBusy(err)) throw err;
      if (attempt >= CANCEL_LOCK_TRIES)
        throw unavailable('The runs this run would cancel stayed busy; try again');
      await new Promise((r) =>
        setTimeout(r, Math.random() * Math.min(CANCEL_LOCK_PAUSE_MS, 2 ** attempt)),
      );
    }
  }
}

/** `fn` in a savepoint of `db`'s transaction, rolled back to when it fails. */
async function inSavepoint<T>(db: PoolClient, fn: () => Promise<T>): Promise<T> {
  await db.query('SAVEPOINT run_cancels');
  try {
    const result = await fn();
    await db.query('RELEASE SAVEPOINT run_cancels');
    return result;
  } catch (err) {
    // A connection that failed reports its own error, not the rollback's.
    await db.query('ROLLBACK TO SAVEPOINT run_cancels').catch(() => undefined);
    throw err;
  }
}

export const REJECT_DETAIL =
  'Thread is already running a task. Wait for it to finish or choose a different multitask strategy.';

/**
 * How long events of a run whose creator waits only for its end may wait to share a batch. Joins
 * of such a run see its events this much later at most; a short run writes them all at its end.
 */
export const END_ONLY_BATCH_MS = 50;

export interface RunServiceDeps {
  pool: Pool;
  runs: RunStore;
  events: RunEventLog;
  notifier: Notifier;
  assistants: AssistantService;
  threads: ThreadService;
  /** Picks the request headers copied into `config.configurable` (http.configurable_headers). */
  configurableHeaders?: HeaderSelector | undefined;
  /** Refuses a webhook URL with a 422 naming the rule (the webhooks context's validator). */
  validateWebhook?: (url: string) => Promise<void>;
  /** Whether runs are traced: a run's `feedback_keys` need a trace to point at. */
  tracesRuns?: boolean;
  /** This process's worker, which can take a run as it is created (see `create`). */
  dispatcher?: RunDispatcher | undefined;
  /**
   * What a run that starts as it is created reads first (its thread's newest checkpoint), for
   * the creating statement to read instead; the dispatcher hands it to the execution.
   */
  startRead?: ((threadId: string) => EmbeddedRead) | undefined;
}

/** A worker that takes runs inserted already running (see RunWorker.reserve and adopt). */
export interface RunDispatcher {
  reserve(): RunStart | undefined;
  /** `read`: the columns of `startRead`, made as the run was created. */
  adopt(run: RunRow | undefined, read?: Record<string, unknown>): void;
}

/** The run's checkpoint selector, as the official server merges it into `configurable`. */
function checkpointKwargs(
  body: RunCreateBody,
): Partial<RunKwargs> & { checkpoint_id: string | null } {
  const { checkpoint } = body;
  return {
    checkpoint_id: checkpoint?.checkpoint_id ?? body.checkpoint_id ?? null,
    ...(checkpoint?.checkpoint_ns ? { checkpoint_ns: checkpoint.checkpoint_ns } : {}),
    ...(checkpoint?.checkpoint_map ? { checkpoint_map: checkpoint.checkpoint_map } : {}),
  };
}

/**
 * The root graph's checkpoint a run starts from, by LangGraph's rule: a root graph given a
 * subgraph's namespace starts from the checkpoint the map names for the root (''), and a map's
 * root entry stands in for a missing id; else the thread's newest (undefined).
 */
function rootCheckpointOf(kwargs: RunKwargs): string | undefined {
  const mapped = kwargs.checkpoint_map?.[''];
  const fromMap = typeof mapped === 'string' ? mapped : undefined;
  if (kwargs.checkpoint_ns) return fromMap;
  if (kwargs.checkpoint_id) return kwargs.checkpoint_id;
  if (fromMap) return fromMap;
  const configured = (kwargs.config?.configurable as Record<string, unknown> | undefined)
    ?.checkpoint_id;
  return typeof configured === 'string' ? configured : undefined;
}

/** Whether a run starts anywhere but at its thread's newest checkpoint. */
function addressesCheckpoint(kwargs: Record<string, unknown>): boolean {
  return Boolean(kwargs.checkpoint_id || kwargs.checkpoint_ns || kwargs.checkpoint_map);
}

function streamModes(body: RunCreateBody): StreamMode[] {
  const mode = body.stream_mode ?? 'values';
  return Array.isArray(mode) ? mode : [mode];
}

/** Request headers fill `configurable`; keys the caller set explicitly win. */
function withHeaders(
  config: RunCreateBody['config'],
  headers: Record<string, unknown>,
): Record<string, unknown> | null {
  if (!Object.keys(headers).length) return config ?? null;
  const configurable = config?.configurable ?? {};
  return { ...(config ?? {}), configurable: { ...headers, ...configurable } };
}

/**
 * The run's config over its assistant's, as the official server merges them at creation: the
 * run executes with the assistant as it was then, and the executor needs no second read of it.
 */
function withAssistant(
  assistant: { assistant_id: string; graph_id: string; config: Record<string, unknown> },
  config: Record<string, unknown> | null,
): Record<string, unknown> {
  return {
    ...assistant.config,
    ...(config ?? {}),
    configurable: {
      ...(assistant.config.configurable ?? {}),
      ...(config?.configurable ?? {}),
      graph_id: assistant.graph_id,
      assistant_id: assistant.assistant_id,
    },
  };
}

export function runBody(row: RunRow) {
  return {
    run_id: row.run_id,
    thread_id: row.thread_id,
    assistant_id: row.assistant_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    status: row.status,
    metadata: row.metadata,
    kwargs: row.kwargs,
    multitask_strategy: row.multitask_strategy,
  };
}

interface PlannedRun {
  /** Set when the assistant was remembered: the run may be created only if it is unchanged. */
  assistantUnchanged?: EmbeddedStatement;
  stateless: boolean;
  threadMetadata: Record<string, unknown>;
  /** A thread the run creates also gets the run's metadata (the owner an auth handler added). */
  newThreadMetadata: Record<string, unknown>;
  /** The caller's authorization filter: an existing thread that does not match is not found. */
  threadFilter?: Record<string, unknown> | undefined;
  /** See `CreateOptions.unlessInterrupted`. */
  unlessInterrupted?: boolean;
  run: NewRun;
  opening: { events: RunEvent[]; notify: { channel: string; payload: string } };
}

export interface CreatedRun {
  run: RunRow;
  /** Runs the new one cancels (multitask `interrupt`/`rollback`). */
  cancelled: RunRow[];
  /** What the statement that started the run read for it (see `startRead`). */
  read?: Record<string, unknown>;
  /** A protocol run's: the highest place its thread's protocol runs took before it (-1: none). */
  protocolPrior?: number;
  /** A protocol run's creation time in µs (see `InsertedRun`). */
  createdUs?: string;
  /** The statement that inserted the run created its thread too: it is the thread's first. */
  newThread?: boolean;
}

/** How `RunService.create` creates a run (see there). */
interface CreateOptions {
  startHere?: boolean;
  endOnly?: boolean;
  kwargs?: Record<string, unknown>;
  threadFilter?: Record<string, unknown> | undefined;
  /**
   * Create the run only on a thread with no interrupts recorded (or a new one), and only where
   * the run's one statement can decide that: otherwise nothing is created and the caller gets
   * undefined. Protocol `run.start` with input resumes a thread waiting at an interrupt instead,
   * so it tries this before reading the thread's interrupts.
   */
  unlessInterrupted?: boolean;
  /** Runs once the creating transaction committed, before local readers are woken. */
  onCreated?: (created: CreatedRun) => void;
}

/** What `createProtocolRun` tells of the run it created. */
export interface ProtocolRunCreated {
  run: RunRow;
  protocolPrior: number;
  createdUs?: string;
  newThread: boolean;
}

/** How `createProtocolRun` creates a run (see `CreateOptions`). */
interface ProtocolCreateOptions {
  onCreated?: (created: ProtocolRunCreated) => void;
}

const protocolRunCreated = (created: CreatedRun): ProtocolRunCreated => ({
  run: created.run,
  protocolPrior: created.protocolPrior ?? -1,
  ...(created.createdUs ? { createdUs: created.createdUs } : {}),
  newThread: created.newThread ?? false,
});

export class RunService {
  private readonly selectHeaders: HeaderSelector;

  constructor(private readonly deps: RunServiceDeps) {
    this.selectHeaders = deps.configurableHeaders ?? headerSelector(undefined);
  }

  /**
   * Creates a run on `threadId`, or on a new temporary thread when it is undefined. With
   * `startHere` (the caller waits for the run: wait and stream), a run that is due and alone on
   * its thread starts at once on this process's worker when it has a free slot: no claim, no
   * wake-up through PostgreSQL, and its events reach the caller from memory. With `endOnly`
   * too (wait), nobody follows its events live, so they are written in batches of up to
   * `END_ONLY_BATCH_MS`. A stream that cannot be resumed (not `stream_resumable`) is batched
   * the same way, its events handed to its readers here as they are produced: nobody can ask
   * for them again by id, so they need not be durable first. `threadFilter` (custom auth) is
   * checked by the statements that lock the thread, as part of creating the run.
   */
  async create(
    threadId: string | undefined,
    body: RunCreateBody,
    requestHeaders: IncomingHttpHeaders = {},
    options: Omit<CreateOptions, 'unlessInterrupted'> = {},
  ): Promise<RunRow> {
    return (await this.createRun(threadId, body, requestHeaders, options)).run;
  }

  /**
   * `create` for a run of the thread protocol (`kwargs.protocol`), with the highest place its
   * thread's protocol runs took before it (-1: none), read by the statement that inserted it.
   * With `unlessInterrupted`, undefined when nothing was created (see `CreateOptions`).
   */
  async createProtocolRun(
    threadId: string,
    body: RunCreateBody,
    requestHeaders: IncomingHttpHeaders,
    options?: ProtocolCreateOptions & { unlessInterrupted?: false },
  ): Promise<ProtocolRunCreated>;
  async createProtocolRun(
    threadId: string,
    body: RunCreateBody,
    requestHeaders: IncomingHttpHeaders,
    options: ProtocolCreateOptions & { unlessInterrupted?: boolean },
  ): Promise<ProtocolRunCreated | undefined>;
  async createProtocolRun(
    threadId: string,
    body: RunCreateBody,
    requestHeaders: IncomingHttpHeaders,
    options: ProtocolCreateOptions & { unlessInterrupted?: boolean } = {},
  ): Promise<ProtocolRunCreated | undefined> {
    const { onCreated, unlessInterrupted } = options;
    // `protocol`: the run executes with LangGraph's v3 event stream (see RunExecutor).
    const created = await this.createRun(threadId, body, requestHeaders, {
      startHere: true,
      kwargs: { protocol: true },
      ...(unlessInterrupted ? { unlessInterrupted } : {}),
      ...(onCreated ? { onCreated: (c: CreatedRun) => onCreated(protocolRunCreated(c)) } : {}),
    });
    return created && protocolRunCreated(created);
  }

  private async createRun(
    threadId: string | undefined,
    body: RunCreateBody,
    requestHeaders: IncomingHttpHeaders,
    options: CreateOptions & { unlessInterrupted?: false },
  ): Promise<CreatedRun>;
  private async createRun(
    threadId: string | undefined,
    body: RunCreateBody,
    requestHeaders: IncomingHttpHeaders,
    options: CreateOptions,
  ): Promise<CreatedRun | undefined>;
  private async createRun(
    threadId: string | undefined,
    body: RunCreateBody,
    requestHeaders: IncomingHttpHeaders,
    options: CreateOptions,
  ): Promise<CreatedRun | undefined> {
    // Checked before the transaction: the URL rules may resolve the host.
    if (body.webhook) await this.deps.validateWebhook?.(body.webhook);
    // Planned again with a fresh assistant, the run keeps its ids (and so its first event).
    const ids = { run: uuidv7(), thread: threadId ?? uuidv7() };
    const plan = async (remembered: boolean): Promise<PlannedRun> => ({
      ...(await this.plan(threadId, body, options.kwargs ?? {}, requestHeaders, {
        remembered,
        ids,
      })),
      threadFilter: options.threadFilter,
      ...(options.unlessInterrupted ? { unlessInterrupted: true } : {}),
    });
    const dispatcher = this.deps.dispatcher;
    const start =
      options.startHere && (body.after_seconds ?? 0) <= 0 ? dispatcher?.reserve() : undefined;
    let created: CreatedRun | undefined;
    let planned: PlannedRun | undefined;
    try {
      planned = await plan(true);
      created = await this.insertPlanned(planned, body, start, () => plan(false));
    } finally {
      if (start) {
        const run = created?.run;
        if (planned && run?.status === 'running' && run.worker_id === start.workerId)
          this.deps.events.startedHere(
            run.run_id,
            planned.opening.events,
            options.endOnly
              ? { batchMs: END_ONLY_BATCH_MS }
              : body.stream_resumable
                ? {}
                : { batchMs: END_ONLY_BATCH_MS, live: true },
          );
        dispatcher?.adopt(run, created?.read);
      }
    }
    if (!created) return undefined;
    options.onCreated?.(created);
    await this.announce(created);
    return created;
  }

  /** `fresh`: the run planned again with its assistant read now, not remembered. */
  private async insertPlanned(
    planned: PlannedRun,
    body: RunCreateBody,
    start: RunStart | undefined,
    fresh: () => Promise<PlannedRun>,
  ): Promise<CreatedRun | undefined> {
    // A run to cancel was ending or writing: let it finish with the thread, then go again.
    const insert = (startHere: RunStart | undefined) =>
      whileCancelLocksBusy(() => this.insertOnce(planned, body, startHere, fresh));
    try {
      return await insert(start);
    } catch (err) {
      // A worker claimed a run of the thread meanwhile: this one queues behind it.
      if (!start || !isRunningConflict(err)) throw err;
      return insert(undefined);
    }
  }

  private async insertOnce(
    planned: PlannedRun,
    body: RunCreateBody,
    start: RunStart | undefined,
    fresh: () => Promise<PlannedRun>,
  ): Promise<CreatedRun | undefined> {
    // An `enqueue` run, or one on a new temporary thread, needs nothing from the runs already
    // there: one statement marks (or creates) the thread busy and inserts the run with its first
    // event. With `if_not_exists: create` the same statement creates a missing thread instead (a
    // new conversation's first run). Anything else falls through to the transaction, which
    // creates the thread or answers 404.
    if (planned.stateless || planned.run.multitask_strategy === 'enqueue') {
      const { thread_id } = planned.run;
      const { threads, startRead } = this.deps;
      // A temporary thread has nothing to read, and a run from a given checkpoint reads that one.
      const read =
        start && !planned.stateless && !addressesCheckpoint(planned.run.kwargs)
          ? startRead?.(thread_id)
          : undefined;
      const thread = planned.stateless
        ? threads.newBusyThread(thread_id, planned.newThreadMetadata, planned.assistantUnchanged)
        : body.if_not_exists !== 'create'
          ? threads.lockedBusyThread(
              thread_id,
              planned.threadMetadata,
              planned.assistantUnchanged,
              planned.threadFilter,
              planned.unlessInterrupted,
            )
          : threads.newOrLockedBusyThread(
              thread_id,
              planned.newThreadMetadata,
              planned.threadMetadata,
              planned.assistantUnchanged,
              planned.threadFilter,
              planned.unlessInterrupted,
            );
      const inserted = await this.deps.runs.insert(
        planned.run,
        planned.opening,
        this.deps.pool,
        thread,
        start,
        read,
      );
      if (inserted) {
        const { threadCreated, ...rest } = inserted;
        return { ...rest, cancelled: [], newThread: threadCreated ?? planned.stateless };
      }
    }
    // Whether the thread waits at an interrupt is for the caller to read now.
    if (planned.unlessInterrupted) return undefined;
    // A remembered assistant may have changed (or the thread is missing): the transaction
    // works with the assistant as it is now.
    if (planned.assistantUnchanged) planned = await fresh();
    return withTransaction(this.deps.pool, (db) =>
      this.createPlanned(db, planned, body, start, { cancelNowait: true }),
    );
  }

  /**
   * The stateless runs of `POST /runs/batch`, all or none: one transaction creates them, so a
   * batch holding a run that cannot be created (an unknown assistant, a refused webhook) leaves
   * no run of it behind to execute unseen.
   */
  async createBatch(
    bodies: RunCreateBody[],
    requestHeaders: IncomingHttpHeaders = {},
  ): Promise<RunRow[]> {
    for (const body of bodies) if (body.webhook) await this.deps.validateWebhook?.(body.webhook);
    const created = await withTransaction(this.deps.pool, async (db) => {
      const all: CreatedRun[] = [];
      for (const body of bodies)
        all.push(await this.createInTransaction(db, undefined, body, {}, requestHeaders));
      return all;
    });
    for (const c of created) await this.announce(c);
    return created.map((c) => c.run);
  }

  /**
   * Creates a run inside the caller's transaction (the cron scheduler creates a run and moves
   * its schedule on atomically). After COMMIT the caller passes the result to `announce`.
   */
  async createInTransaction(
    db: PoolClient,
    threadId: string | undefined,
    body: RunCreateBody,
    extraKwargs: Record<string, unknown> = {},
    requestHeaders: IncomingHttpHeaders = {},
  ): Promise<CreatedRun> {
    const planned = await this.plan(threadId, body, extraKwargs, requestHeaders);
    const strategy = planned.run.multitask_strategy;
    if (planned.stateless || (strategy !== 'interrupt' && strategy !== 'rollback'))
      return this.createPlanned(db, planned, body);
    // Tried again in a savepoint, whose rollback lets go of the thread for the busy run to end.
    return whileCancelLocksBusy(() =>
      inSavepoint(db, () =>
        this.createPlanned(db, planned, body, undefined, { cancelNowait: true }),
      ),
    );
  }

  /**
   * Everything about a new run that needs no lock: its assistant, kwargs, ids and first event.
   * With `remembered`, an assistant read for an earlier run may be used (see
   * AssistantService.forRun), on the condition that it is unchanged.
   */
  private async plan(
    threadId: string | undefined,
    body: RunCreateBody,
    extraKwargs: Record<string, unknown>,
    requestHeaders: IncomingHttpHeaders,
    options: { remembered?: boolean; ids?: { run: string; thread: string } } = {},
  ): Promise<PlannedRun> {
    const { assistant, unchanged } = await this.deps.assistants
      .forRun(body.assistant_id, options.remembered ?? false)
      .catch((err: unknown) => {
        throw err instanceof AppError && err.code === 'NOT_FOUND'
          ? notFound(
              `No assistant found for "${body.assistant_id}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`,
            )
          : err;
      });
    if (body.feedback_keys?.length && !this.deps.tracesRuns)
      throw invalid(
        ['body', 'feedback_keys'],
        "feedback_keys needs tracing, which is off on this server (LANGSMITH_TRACING=false): feedback URLs point at the run's trace",
      );
    const stateless = threadId === undefined;
    if (stateless && body.command?.resume !== undefined) {
      throw badRequest('You must provide a thread_id when resuming.');
    }
    const kwargs: RunKwargs = {
      input: body.input ?? null,
      command: body.command ?? null,
      config: withAssistant(
        assistant,
        withHeaders(body.config, this.selectHeaders(requestHeaders)),
      ),
      context:
        body.context || Object.keys(assistant.context).length
          ? { ...assistant.context, ...(body.context ?? {}) }
          : null,
      stream_mode: streamModes(body),
      stream_subgraphs: body.stream_subgraphs ?? false,
      interrupt_before: body.interrupt_before ?? null,
      interrupt_after: body.interrupt_after ?? null,
      ...checkpointKwargs(body),
      temporary: stateless && body.on_completion !== 'keep',
      durability: body.durability ?? (body.checkpoint_during === false ? 'exit' : null),
      ...(body.strict_resume ? { strict_resume: true } : {}),
      ...(body.langsmith_tracer ? { langsmith_tracer: body.langsmith_tracer } : {}),
      ...(body.feedback_keys?.length ? { feedback_keys: body.feedback_keys } : {}),
    };
    const rootCheckpoint = rootCheckpointOf(kwargs);
    if (!stateless && rootCheckpoint)
      await this.deps.threads.requireCheckpoint(threadId, rootCheckpoint);
    const targetThread = threadId ?? options.ids?.thread ?? uuidv7();
    const runId = options.ids?.run ?? uuidv7();
    return {
      ...(unchanged ? { assistantUnchanged: unchanged } : {}),
      stateless,
      threadMetadata: { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id },
      newThreadMetadata: {
        graph_id: assistant.graph_id,
        assistant_id: assistant.assistant_id,
        ...body.metadata,
      },
      run: {
        run_id: runId,
        thread_id: targetThread,
        assistant_id: assistant.assistant_id,
        // As the official servers: the assistant's metadata, the thread's, the run's config
        // metadata and its own, in that order, and the assistant's id whatever they say.
        inherited_metadata: assistant.metadata,
        metadata: {
          graph_id: assistant.graph_id,
          ...(isJsonObject(kwargs.config?.metadata) ? kwargs.config.metadata : {}),
          ...body.metadata,
          assistant_id: assistant.assistant_id,
        },
        kwargs: { ...kwargs, ...(body.webhook ? { webhook: body.webhook } : {}), ...extraKwargs },
        multitask_strategy: body.multitask_strategy ?? 'enqueue',
        after_seconds: body.after_seconds ?? 0,
      },
      // Its NOTIFY wakes the workers and thread streams of other replicas when this commits.
      opening: this.deps.events.opening(runId, { channel: CHANNELS.runs, payload: targetThread }),
    };
  }

  /**
   * Locks (or creates) the thread, applies the multitask strategy and inserts the run. Runs it
   * cancels are locked after the thread, the reverse of their own writes' order: with
   * `cancelNowait` a busy one fails the transaction for the caller to try again, rather than
   * deadlock with that run settling the thread.
   */
  private async createPlanned(
    db: PoolClient,
    planned: PlannedRun,
    body: RunCreateBody,
    start?: RunStart,
    options: { cancelNowait?: boolean } = {},
  ): Promise<CreatedRun> {
    const { stateless, threadMetadata, newThreadMetadata, threadFilter } = planned;
    const targetThread = planned.run.thread_id;
    const strategy = planned.run.multitask_strategy;
    let threadReady = stateless
      ? await this.deps.threads.createForRun(targetThread, newThreadMetadata, db)
      : await this.deps.threads.lockForRun(targetThread, threadMetadata, db, threadFilter);
    if (!threadReady && body.if_not_exists === 'create') {
      // Another request may create it first; then it is locked like any existing thread.
      threadReady =
        (await this.deps.threads.createForRun(targetThread, newThreadMetadata, db)) ||
        (await this.deps.threads.lockForRun(targetThread, threadMetadata, db, threadFilter));
    }
    if (!threadReady) throw notFound(`Thread with ID ${targetThread} not found`);
    // Only the other strategies look at the runs already there; `enqueue` just queues behind them.
    const inflight = strategy === 'enqueue' ? [] : await this.deps.runs.inflight(targetThread, db);
    if (strategy === 'reject' && inflight.length) throw conflict(REJECT_DETAIL);
    const inserted = await this.deps.runs.insert(
      planned.run,
      planned.opening,
      db,
      undefined,
      start,
    );
    if (!inserted) throw new Error('run insert returned nothing');
    const { run, protocolPrior } = inserted;
    const cancelled =
      strategy === 'interrupt' || strategy === 'rollback'
        ? await this.deps.runs.requestCancel(
            inflight.map((r) => r.run_id),
            strategy,
            db,
            { nowait: options.cancelNowait ?? false },
          )
        : [];
    return { run, cancelled, ...(protocolPrior !== undefined ? { protocolPrior } : {}) };
  }

  /** After the creating transaction committed: settle cancelled runs and wake the workers. */
  async announce(created: CreatedRun): Promise<void> {
    await this.afterCancel(created.cancelled);
    // The payload names the thread, so thread streams wake only for their own thread. Other
    // processes heard it with the commit (see createInTransaction). A run that started at once
    // gives this process's worker nothing to claim.
    const { run } = created;
    this.deps.notifier.emitLocal(
      CHANNELS.runs,
      run.status === 'running' ? startedPayload(run.thread_id) : run.thread_id,
    );
  }

  async get(threadId: string, runId: string): Promise<RunRow> {
    const run = await this.deps.runs.get(threadId, runId);
    if (!run) throw notFound('Run not found');
    return run;
  }

  /** A run by id alone, whatever its thread (A2A task ids are run ids). */
  find(runId: string): Promise<RunRow | undefined> {
    return this.deps.runs.getById(runId);
  }

  /** The newest run of a thread tagged with `metadata` (e.g. the latest turn of an A2A task). */
  latestTagged(threadId: string, metadata: Record<string, unknown>): Promise<RunRow | undefined> {
    return this.deps.runs.latestWithMetadata(threadId, metadata);
  }

  async list(
    threadId: string,
    options: {
      limit?: number | undefined;
      offset?: number | undefined;
      status?: RunStatus | undefined;
    },
  ) {
    await this.deps.threads.getRow(threadId);
    return this.deps.runs.list(threadId, {
      limit: options.limit ?? 10,
      offset: options.offset ?? 0,
      status: options.status,
    });
  }

  async delete(threadId: string, runId: string): Promise<void> {
    const run = await this.get(threadId, runId);
    if (run.status === 'pending' || run.status === 'running')
      throw conflict('Run is still active; cancel it first');
    await this.deps.runs.delete(runId);
  }

  /**
   * The run's final result: the last `values` event, or `{__error__}` if it failed; without
   * either, the thread's values. A run given `feedback_keys` adds its URLs as `__feedback__`,
   * as the official Python server does. Waits for the run to end. `created`: the caller just
   * created it, in this turn (see RunEventLog.read).
   */
  async result(run: RunRow, signal?: AbortSignal, created = false): Promise<unknown> {
    let values: unknown;
    let error: unknown;
    let feedback: unknown;
    let ended = false;
    for await (const batch of this.deps.events.readBatches(run.run_id, -1, signal, {
      created,
      wait: true,
      withEnd: true,
    }))
      for (const event of batch) {
        if (event.event === 'values') values = event.data;
        else if (event.event === 'error') error = event.data;
        else if (event.event === 'feedback') feedback = event.data;
        else if (event.event === END_EVENT) ended = true;
      }
    // The process is stopping and the run may go on elsewhere: its result is not known here.
    if (this.deps.events.closed && (await this.deps.runs.isActive(run.run_id)))
      throw unavailable('The server is shutting down; join the run again for its result');
    if (error !== undefined) return { __error__: error };
    // Deleted before its end (its thread was): its last values are not a result, as on the
    // official servers.
    if (!ended && !signal?.aborted && !(await this.deps.runs.getById(run.run_id)))
      return { __error__: { error: 'Error', message: 'Run not found' } };
    const result =
      values !== undefined
        ? values
        : ((await this.deps.threads.getRow(run.thread_id).catch(() => undefined))?.values ?? null);
    return feedback !== undefined && isJsonObject(result)
      ? { ...result, __feedback__: feedback }
      : result;
  }

  /** Every run's events on a thread, one run after another, until `signal` ends it. */
  async streamThread(
    threadId: string,
    modes: readonly ThreadStreamMode[],
    start: ThreadCursor | undefined,
  ): Promise<(signal: AbortSignal) => AsyncIterable<SseFrame>> {
    await this.deps.threads.getRow(threadId);
    const deps = {
      runs: this.deps.runs,
      events: this.deps.events,
      notifier: this.deps.notifier,
    };
    return (signal) => threadEvents(deps, threadId, modes, start, signal);
  }

  /** Cancels runs: pending ones end here; running ones are signalled on whichever replica runs them. */
  async cancel(
    threadId: string,
    runIds: string[],
    action: 'interrupt' | 'rollback',
  ): Promise<RunRow[]> {
    for (const runId of runIds) await this.get(threadId, runId);
    const rows = await this.deps.runs.requestCancel(runIds, action);
    await this.afterCancel(rows);
    return rows;
  }

  /** `POST /runs/cancel`: named runs of one thread, or every run in a status. */
  async cancelMany(body: BulkCancelBody, action: 'interrupt' | 'rollback'): Promise<void> {
    if ('run_ids' in body) {
      await this.cancel(body.thread_id, body.run_ids, action);
      return;
    }
    const active = await this.deps.runs.activeIds(body.status);
    const rows = await this.deps.runs.requestCancel(
      active.map((r) => r.run_id),
      action,
    );
    await this.afterCancel(rows);
  }

  private async afterCancel(rows: RunRow[]): Promise<void> {
    for (const run of rows) {
      if (run.status === 'pending') {
        // Nobody executes it yet: settle it, and its thread, here.
        const writer = this.deps.events.writer(
          run.run_id,
          (await this.deps.events.lastSeq(run.run_id)) + 1,
        );
        await this.deps.threads.settleUnstarted(run.thread_id, (db) =>
          run.cancel_action === 'rollback'
            ? this.deps.runs.delete(run.run_id, db)
            : this.deps.runs.finish(run.run_id, 'interrupted', null, db),
        );
        await writer.end();
      } else {
        await this.deps.notifier.notify(CHANNELS.cancel, run.run_id);
      }
    }
  }
}
