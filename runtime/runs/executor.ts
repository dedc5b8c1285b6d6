// Executes one claimed run: builds the graph's config from the assistant and the run, streams
// the graph, writes every requested event to the run's log, then settles run and thread.
import { STREAM_EVENTS_V3_MODES, createGraphRunStream } from '@langchain/langgraph';
import {
  LeaseLostError,
  isLeaseLost,
  isUnavailable,
  retryWhileUnavailable,
  type EmbeddedStatement,
  type RunFence,
} from '../../common/db/index.js';
import type { Logger } from '../../common/logging/index.js';
import type { AssistantService } from '../assistants/index.js';
import {
  CHECKPOINT_METADATA_KEY,
  DEFERRED_WRITES_KEY,
  FRESH_THREAD_KEY,
  PREFETCHED_CHECKPOINT_KEY,
  RUN_FENCE_KEY,
  type CheckpointDeferral,
} from '../checkpoints/index.js';
import {
  executionRuntime,
  toGraphCommand,
  type CommandInput,
  type GraphRegistry,
} from '../graphs/index.js';
import type { ThreadService } from '../threads/index.js';
import { distributedParent, type DistributedParent } from './configurable-headers.js';
import { UNAVAILABLE_RETRY_MS, type RunEventLog, type RunEventWriter } from './event-log.js';
import type { StreamMode } from './schemas.js';
import { RunSignal } from './run-signal.js';
import type { RunEvent, RunFencing, RunRow, RunStatus, RunStore } from './store.js';
import { graphStream } from './graph-stream.js';
import { ProtocolEventMapper } from './protocol-mapper.js';
import { StreamEventMapper, libraryModes, needsCallbackEvents } from './stream-mapper.js';

/** Transformers a compiled graph adds to its v3 event stream. */
type WithTransformers = { streamTransformers?: Parameters<typeof createGraphRunStream>[1] };

export interface RunKwargs {
  input?: unknown;
  command?: CommandInput | null;
  config?: Record<string, unknown> | null;
  context?: Record<string, unknown> | null;
  stream_mode: StreamMode[];
  stream_subgraphs?: boolean;
  interrupt_before?: '*' | string[] | null;
  interrupt_after?: '*' | string[] | null;
  checkpoint_id?: string | null;
  /** With `checkpoint_map`, a subgraph's checkpoint to go back to (LangGraph's time travel). */
  checkpoint_ns?: string;
  checkpoint_map?: Record<string, unknown>;
  temporary?: boolean;
  /** When checkpoints are written: every step (`sync`/`async`) or only at the end (`exit`). */
  durability?: 'sync' | 'async' | 'exit' | null;
  /** LangGraph's strict resume: a resume that answers no waiting interrupt fails the run. */
  strict_resume?: boolean;
  /** Where the run's trace goes, when the runtime traces (project, dataset example). */
  langsmith_tracer?: { project_name?: string | null; example_id?: string | null };
  /** Keys to hand out presigned feedback URLs for when the run succeeds (a `feedback` event). */
  feedback_keys?: string[];
  /** Where to POST the run when it ends (queued by the finish hook in the same transaction). */
  webhook?: string;
  /** Started through the thread protocol: its events are LangGraph's v3 protocol events. */
  protocol?: boolean;
  /** A protocol run's place among its thread's (see `RunStore.protocolIndex`), once taken. */
  protocol_index?: number;
}

/** What the executor needs of an assistant beyond what the run carries. */
interface RunAssistant {
  assistant_id: string;
  graph_id: string;
  config: { configurable?: unknown };
  context: Record<string, unknown>;
}

/**
 * Checkpoint writes of a run that does not wait for each step's checkpoint (durability `async`
 * or `exit`) are sent together at most this long after they were made; a shorter run writes
 * them with its final status.
 */
export const CHECKPOINT_DEFER_MS = 50;

/** What the executor needs of the checkpointer (see GraphdockCheckpointer). */
export interface RunCheckpoints {
  /** Waits for a thread's in-flight checkpoint writes. */
  idle(threadId: string): Promise<void>;
  /** Collects a thread's checkpoint writes until the deferral ends; fenced by `fence`. */
  defer(threadId: string, maxDelayMs: number, fence?: RunFence): CheckpointDeferral;
}

export interface ExecutorDeps {
  checkpoints: RunCheckpoints;
  /** A run still executing after this long ends `timeout` (BG_JOB_TIMEOUT_SECS). */
  timeoutMs: number;
  /**
   * What every run's config metadata (and so its checkpoints and traces) says about the server,
   * under the keys both official servers use: `langgraph_version`, `langgraph_plan`, ...
   */
  serverMetadata?: Record<string, string>;
  runs: RunStore;
  events: RunEventLog;
  assistants: AssistantService;
  threads: ThreadService;
  graphs: GraphRegistry;
  logger: Logger;
  /** Tracing of graph runs (traces/): the callbacks each run gets, when tracing is on. */
  tracing?:
    | {
        callbacks(run?: {
          project_name?: string | null;
          example_id?: string | null;
          parent?: DistributedParent | undefined;
        }): unknown;
        feedbackUrls(
          runId: string,
          keys: readonly string[],
          logger: Logger,
        ): Promise<Record<string, string>>;
      }
    | undefined;
}

function errorOf(err: unknown): { error: string; message: string } {
  if (err instanceof Error)
    return { error: err.name === 'Error' ? err.constructor.name : err.name, message: err.message };
  return { error: 'Error', message: String(err) };
}

/**
 * Failures `execute` handles itself, whatever step they stop: a lost lease (another worker has
 * the run) and a database that is away (the run is handed back).
 */
const passesUp = (err: unknown) => isLeaseLost(err) || isUnavailable(err);

/** LangGraph's configurable key for strict resume (its CONFIG_KEY_STRICT_RESUME, not exported). */
const STRICT_RESUME_KEY = '__pregel_strict_resume';

/** The reason a run is aborted with when one of its writes found its lease taken over. */
const LEASE_LOST = 'lease-lost';

export class RunExecutor {
  constructor(private readonly deps: ExecutorDeps) {}

  /**
   * The assistant settings a run executes with. Runs carry them from their creation (merged into
   * their config and context, as the official server does); runs created before that read the
   * assistant as it is now.
   */
  private async assistantOf(run: RunRow, kwargs: RunKwargs): Promise<RunAssistant> {
    const carried = kwargs.config?.configurable as Record<string, unknown> | undefined;
    if (typeof carried?.graph_id === 'string')
      return {
        assistant_id: run.assistant_id,
        graph_id: carried.graph_id,
        config: {},
        context: {},
      };
    return this.deps.assistants.get(run.assistant_id);
  }

  /**
   * Runs `run` to its end; resolves to whether other runs now wait to be claimed. `read`: its
   * thread's newest checkpoint, read by the statement that created the run already running.
   */
  async execute(
    run: RunRow,
    cancel: AbortSignal,
    read?: Record<string, unknown>,
  ): Promise<boolean> {
    const kwargs = run.kwargs as unknown as RunKwargs;
    const limits = new RunSignal(cancel, this.deps.timeoutMs);
    // Every write of the run names its lease; the first one refused stops the graph at once.
    const lease: RunFencing = {
      runId: run.run_id,
      workerId: run.worker_id ?? '',
      attempt: run.attempt,
      onLost: () => limits.abort(LEASE_LOST),
    };
    const deferral =
      kwargs.durability === 'sync'
        ? undefined
        : this.deps.checkpoints.defer(
            run.thread_id,
            CHECKPOINT_DEFER_MS,
            this.deps.runs.leaseFence(lease),
          );
    const started: { writer?: RunEventWriter } = {};
    try {
      return await this.executeRun(run, limits, deferral, read, lease, started);
    } catch (err) {
      if (!isLeaseLost(err))
        return await this.afterFailure(run, err, started.writer, deferral, lease);
      // Its lease expired (this process was frozen, say) and another worker took the run over:
      // that one's work stands, this one wrote nothing since.
      this.deps.logger.warn(
        { run_id: run.run_id, thread_id: run.thread_id, attempt: run.attempt },
        'run taken over by another worker after its lease expired: stopped, nothing written',
      );
      return false;
    } finally {
      limits.dispose();
      this.deps.events.forget(run.run_id);
      // Normally ended already; after an unexpected failure, keep what the run wrote.
      await deferral?.end().catch(() => undefined);
    }
  }

  private async executeRun(
    run: RunRow,
    limits: RunSignal,
    deferral: CheckpointDeferral | undefined,
    read: Record<string, unknown> | undefined,
    lease: RunFencing,
    started: { writer?: RunEventWriter },
  ): Promise<boolean> {
    const { signal } = limits;
    const log = this.deps.logger.child({ run_id: run.run_id, thread_id: run.thread_id });
    const kwargs = run.kwargs as unknown as RunKwargs;
    // A first attempt's metadata event was written with the run; a retry continues after the
    // events it already wrote (and any id handed out live), with a metadata event of its own.
    const writer = (started.writer = this.deps.events.writer(
      run.run_id,
      run.attempt > 1 ? await this.deps.events.retrySeq(run.run_id) : 1,
      lease,
    ));
    if (run.attempt > 1) writer.push('metadata', { run_id: run.run_id, attempt: run.attempt });
    let status: RunStatus = 'success';
    let error: { error: string; message: string } | null = null;
    /** The thread's values when the run ran to its end and the stream showed them. */
    let finalValues: unknown;
    const assistant = await this.assistantOf(run, kwargs);
    try {
      const configurable = {
        ...((assistant.config.configurable as Record<string, unknown> | undefined) ?? {}),
        ...((kwargs.config?.configurable as Record<string, unknown> | undefined) ?? {}),
        thread_id: run.thread_id,
        run_id: run.run_id,
        graph_id: assistant.graph_id,
        assistant_id: assistant.assistant_id,
        ...(kwargs.checkpoint_id ? { checkpoint_id: kwargs.checkpoint_id } : {}),
        ...(kwargs.checkpoint_ns ? { checkpoint_ns: kwargs.checkpoint_ns } : {}),
        ...(kwargs.checkpoint_map ? { checkpoint_map: kwargs.checkpoint_map } : {}),
        ...(kwargs.strict_resume ? { [STRICT_RESUME_KEY]: true } : {}),
        // A temporary thread's first attempt starts from nothing: no need to look.
        ...(kwargs.temporary && run.attempt === 1 ? { [FRESH_THREAD_KEY]: { unread: true } } : {}),
        ...(read && run.attempt === 1
          ? { [PREFETCHED_CHECKPOINT_KEY]: { unread: true, row: read } }
          : {}),
        ...(deferral ? { [DEFERRED_WRITES_KEY]: deferral } : {}),
        [RUN_FENCE_KEY]: this.deps.runs.leaseFence(lease),
        [CHECKPOINT_METADATA_KEY]: {
          graph_id: assistant.graph_id,
          assistant_id: assistant.assistant_id,
          run_id: run.run_id,
          ...run.metadata,
          ...this.deps.serverMetadata,
          run_attempt: run.attempt,
        },
      };
      const context =
        kwargs.context || Object.keys(assistant.context).length
          ? { ...assistant.context, ...(kwargs.context ?? {}) }
          : undefined;
      const graph = await this.deps.graphs.get(
        assistant.graph_id,
        { configurable },
        executionRuntime(context),
      );
      if (!graph) throw new Error(`graph "${assistant.graph_id}" is not loaded`);
      // A retry of a run that already checkpointed progress continues from its last checkpoint
      // instead of applying its input a second time.
      const resuming =
        run.attempt > 1 && (await this.deps.threads.runHasCheckpoints(run.thread_id, run.run_id));
      const input = resuming
        ? null
        : kwargs.command
          ? toGraphCommand(kwargs.command)
          : (kwargs.input ?? null);
      const mapper = new StreamEventMapper(
        kwargs.stream_mode,
        kwargs.stream_subgraphs ?? false,
        (event, data) => writer.push(event, data),
      );
      const options = {
        configurable,
        // Tracing: every child run inherits these through the config metadata.
        metadata: {
          ...run.metadata,
          thread_id: run.thread_id,
          run_id: run.run_id,
          graph_id: assistant.graph_id,
          assistant_id: assistant.assistant_id,
          // A node can tell a retry from a first attempt, as on the official servers.
          run_attempt: run.attempt,
          ...this.deps.serverMetadata,
        },
        ...(kwargs.config?.tags ? { tags: kwargs.config.tags as string[] } : {}),
        // Traced, the graph's root run is the run itself (run_id = trace id).
        ...(this.deps.tracing
          ? {
              callbacks: this.deps.tracing.callbacks({
                ...kwargs.langsmith_tracer,
                parent: distributedParent(configurable),
              }) as never,
              runId: run.run_id,
            }
          : {}),
        ...(typeof kwargs.config?.recursion_limit === 'number'
          ? { recursionLimit: kwargs.config.recursion_limit }
          : {}),
        ...(context ? { context } : {}),
        streamMode: libraryModes(kwargs.stream_mode) as ['values'],
        subgraphs: kwargs.stream_subgraphs ?? false,
        ...(kwargs.durability ? { durability: kwargs.durability } : {}),
        ...(kwargs.interrupt_before ? { interruptBefore: kwargs.interrupt_before } : {}),
        ...(kwargs.interrupt_after ? { interruptAfter: kwargs.interrupt_after } : {}),
        signal,
      };
      if (kwargs.protocol) {
        const protocol = new ProtocolEventMapper(
          (event, data) => writer.push(event, data),
          assistant.graph_id,
        );
        // A run that started as it was created took its place then.
        protocol.start(
          typeof kwargs.protocol_index === 'number'
            ? kwargs.protocol_index
            : await this.deps.runs.protocolIndex(run.run_id, run.thread_id),
        );
        // What `streamEvents(..., { version: "v3" })` does, rebuilt here: the registry's graph
        // is a copy, which the class's private v3 method refuses.
        const source = graphStream(graph, input, {
          ...options,
          version: 'v3',
          streamMode: STREAM_EVENTS_V3_MODES,
          subgraphs: true,
        });
        const events = createGraphRunStream(
          source as unknown as Parameters<typeof createGraphRunStream>[0],
          (graph as unknown as WithTransformers).streamTransformers ?? [],
        );
        for await (const event of events) protocol.event(event);
        // A node that stops early when cancelled still returns: the run was cancelled all the same.
        signal.throwIfAborted();
        if (!kwargs.temporary) finalValues = protocol.finalValues();
      } else if (needsCallbackEvents(kwargs.stream_mode)) {
        // Callback events cost a handler per runnable, so only the modes built on them pay it.
        const events = graph.streamEvents(input, { ...options, version: 'v2', runId: run.run_id });
        for await (const event of events) mapper.callbackEvent(event, run.run_id);
      } else {
        for await (const chunk of graphStream(graph, input, options))
          mapper.graphChunk(chunk as unknown[]);
      }
      // A temporary thread is deleted at the end: its values are never needed.
      if (!kwargs.temporary && !kwargs.protocol) finalValues = mapper.finalValues();
    } catch (err) {
      // The database went away under the graph (a checkpoint write): the run is handed back.
      if (!signal.aborted && isUnavailable(err)) throw err;
      const reason: unknown = signal.aborted ? signal.reason : undefined;
      if (isLeaseLost(err) || reason === LEASE_LOST) throw new LeaseLostError(run.run_id);
      if (reason === 'shutdown') {
        // This process is stopping: hand the run back for another worker to continue.
        await this.deps.checkpoints.idle(run.thread_id);
        await deferral?.end().catch(() => undefined);
        await writer.flush();
        await this.deps.runs.release(lease);
        return true;
      }
      if (reason === 'interrupt' || reason === 'rollback') {
        status = 'interrupted';
      } else if (limits.timedOut) {
        status = 'timeout';
        error = { error: 'TimeoutError', message: `run exceeded ${this.deps.timeoutMs / 1000} s` };
        writer.push('error', error);
      } else {
        status = 'error';
        error = errorOf(err);
        writer.push('error', error);
        log.warn({ err }, 'run failed');
      }
    }
    // As the official Python server: after a run's last event, a URL per feedback key.
    if (status === 'success' && kwargs.feedback_keys?.length && this.deps.tracing)
      writer.push(
        'feedback',
        await this.deps.tracing.feedbackUrls(run.run_id, kwargs.feedback_keys, log),
      );
    await this.deps.checkpoints.idle(run.thread_id);
    /** Checkpoints that could not be written end the run `error`, with an `error` event. */
    const failWith = (err: unknown) => {
      log.warn({ err }, 'checkpoint write failed');
      status = 'error';
      error = errorOf(err);
      writer.push('error', error);
    };
    const rollback = signal.aborted && signal.reason === 'rollback';
    const completed = status === 'success' && finalValues !== undefined;
    /** Checkpoint writes still deferred, for the statement that ends the run. */
    let checkpointWrites: EmbeddedStatement[] = [];
    try {
      // A thread about to be deleted, or a run about to be rolled back, needs none of them.
      if (kwargs.temporary || rollback) await deferral?.discard();
      else if (completed && !kwargs.webhook) checkpointWrites = (await deferral?.take()) ?? [];
      else await deferral?.end();
    } catch (err) {
      if (passesUp(err)) throw err;
      // A deferred write failed: the run fails with it, as it would have at that step.
      failWith(err);
      finalValues = undefined;
    }
    if (rollback) {
      // Rollback: the run and every checkpoint it wrote disappear, as if it never ran. The
      // checkpoints go first: while the run row still says running, no other run of the thread
      // can be claimed and start from them.
      await writer.flush();
      await this.deps.threads.discardRun(run.thread_id, run.run_id, (db) =>
        this.deps.runs.holdLease(lease, db),
      );
      const settled = await this.deps.threads.settleAfterRun(
        run.thread_id,
        assistant.graph_id,
        null,
        (db) => this.deps.runs.deleteLeased(lease, db),
      );
      // The run's row went with it, and its lease: the end marker goes to this process's
      // readers alone (a write would be refused as from a run taken over).
      this.deps.events.publish(run.run_id, await writer.closingBatch());
      return settled.runsPending;
    }
    // The log's last events and its end marker commit with the run's final status: fewer
    // statements, and no reader sees the end of a run whose status is not final yet.
    const closeLog = async (final: RunStatus) => {
      const events = await writer.closingBatch(final);
      return { events, notify: this.deps.events.wakeFor(run.run_id) };
    };
    let finalEvents = await closeLog(status);
    let closing = finalEvents.events;
    if (kwargs.temporary) {
      // Without a webhook to queue, ending the run and deleting its thread is one statement.
      if (kwargs.webhook)
        await this.deps.threads.deleteAfterRun(run.thread_id, (db) =>
          this.deps.runs.finish(run.run_id, status, error, db, finalEvents, lease),
        );
      else
        await this.deps.runs.finishDeleting(
          run.run_id,
          status,
          error,
          finalEvents,
          this.deps.threads.deleteAfterRunStatements(run.thread_id),
          lease,
        );
      this.deps.events.publish(run.run_id, closing);
      log.debug({ status }, 'run finished');
      return false;
    }
    if (status === 'success' && finalValues !== undefined && !kwargs.webhook) {
      // Ran to its end, and no webhook to queue with it: the run's status, its last events, its
      // last checkpoints and the thread's values and status are one statement.
      try {
        const settled = await this.deps.runs.finishWithThread(
          run.run_id,
          status,
          finalEvents,
          this.deps.threads.settleCompletedStatement(run.thread_id, run.run_id, finalValues),
          checkpointWrites,
          lease,
        );
        this.deps.events.publish(run.run_id, closing);
        log.debug({ status }, 'run finished');
        return settled.runsPending;
      } catch (err) {
        if (passesUp(err) || !checkpointWrites.length) throw err;
        // Its last checkpoints could not be written: the run fails with that error, and the
        // thread settles on what is durable.
        writer.reopen(closing);
        failWith(err);
        finalEvents = await closeLog(status);
        closing = finalEvents.events;
      }
    }
    try {
      const settled = await this.deps.threads.settleAfterRun(
        run.thread_id,
        assistant.graph_id,
        error,
        (db) => this.deps.runs.finish(run.run_id, status, error, db, finalEvents, lease),
        status === 'success' ? finalValues : undefined,
      );
      this.deps.events.publish(run.run_id, closing);
      log.debug({ status }, 'run finished');
      return settled.runsPending;
    } catch (err) {
      if (passesUp(err)) throw err;
      writer.reopen(closing);
      // The thread's state cannot be read back (e.g. a checkpointed write its reducers
      // reject): the run must still end, and the thread says why.
      log.warn({ err }, 'thread state unreadable after run; settling without it');
      const failure = error ?? errorOf(err);
      if (!error) writer.push('error', failure);
      // Its last events go with its end, in one statement: once the run has ended, its lease
      // no longer holds, and a later append would be refused.
      const final = error ? status : 'error';
      const ending = await closeLog(final);
      const settled = await this.deps.threads.settleWithoutState(run.thread_id, failure, (db) =>
        this.deps.runs.finish(run.run_id, final, failure, db, ending, lease),
      );
      this.deps.events.publish(run.run_id, ending.events);
      log.debug({ status }, 'run finished');
      return settled.runsPending;
    }
  }

  /**
   * A run whose execution or settling failed outside the graph. While the database is away it
   * is handed back, for its next attempt to continue from its last checkpoint. Otherwise (its
   * end could not be written) it ends `error`, with an `error` event and the end marker, which
   * this process's readers get even when the log cannot take them: a waiting client gets an
   * answer now, not when a lease runs out.
   */
  private async afterFailure(
    run: RunRow,
    err: unknown,
    writer: RunEventWriter | undefined,
    deferral: CheckpointDeferral | undefined,
    lease: RunFencing,
  ): Promise<boolean> {
    const log = this.deps.logger.child({ run_id: run.run_id, thread_id: run.thread_id });
    const durably = <T>(write: () => Promise<T>) =>
      retryWhileUnavailable(write, { withinMs: UNAVAILABLE_RETRY_MS });
    if (isUnavailable(err)) {
      log.warn({ err }, 'database unavailable; handing the run back');
      await deferral?.end().catch(() => undefined);
      await writer?.flush().catch(() => undefined);
      await durably(() => this.deps.runs.release(lease)).catch((e: unknown) =>
        log.error({ err: e }, 'run not handed back; its lease will expire or was taken over'),
      );
      return true;
    }
    log.error({ err }, 'run could not be settled; ending it as an error');
    const failure = errorOf(err);
    // Without a writer, the run failed before its first event: its log goes on after the last.
    const closing = (
      writer ??
      this.deps.events.writer(
        run.run_id,
        await this.deps.events.retrySeq(run.run_id).catch(() => 1),
        lease,
      )
    ).failed(failure);
    const end = (events?: RunEvent[]) =>
      durably(() =>
        this.deps.threads.settleWithoutState(run.thread_id, failure, (db) =>
          this.deps.runs.finish(
            run.run_id,
            'error',
            failure,
            db,
            events && { events, notify: this.deps.events.wakeFor(run.run_id) },
            lease,
          ),
        ),
      );
    try {
      await end(closing);
    } catch (first) {
      // Another worker holds the run now: its readers here follow that worker's events.
      // (A lease is also gone once this worker ended the run itself: then the end goes out.)
      if (isLeaseLost(first) && (await this.deps.runs.isActive(run.run_id).catch(() => false))) {
        log.warn('run taken over by another worker after its lease expired: stopped');
        return false;
      }
      // Not even its end marker can be written: its status at least.
      log.warn({ err: first }, 'end of the run not written; ending it without it');
      await end().catch((e: unknown) => log.error({ err: e }, 'run could not be ended'));
    }
    this.deps.events.publish(run.run_id, closing);
    return true;
  }
}
