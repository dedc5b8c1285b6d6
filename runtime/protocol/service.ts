// The thread protocol's commands over ordinary runs: `run.start` and `input.respond` create runs
// through the runs context (same queue, multitask rules, webhooks, thread status, checkpoints),
// marked so their events are LangGraph's v3 protocol events; the rest read the thread.
import type { IncomingHttpHeaders } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { AppError } from '../../common/errors/index.js';
import {
  CHANNELS,
  RUN_SEQ_STRIDE,
  threadOfRunsPayload,
  type ProtocolRunCreated,
  type ProtocolRunRef,
  type RunCreateBody,
  type RunEventLog,
  type RunService,
  type RunStore,
  type Notifier,
} from '../runs/index.js';
import type { ThreadService } from '../threads/index.js';
import { ProtocolError, invalidArgument, issueMessage } from './errors.js';
import {
  InputRespondParams,
  RunStartParams,
  StateGetParams,
  SubscribeParams,
  UnsubscribeParams,
  type CommandEnvelope,
} from './schemas.js';
import {
  runEvents,
  threadProtocolEvents,
  ThreadRunsHeard,
  type EncodedEvent,
  type ProtocolCursor,
  type ThreadEventsDeps,
} from './thread-events.js';

export interface ProtocolServiceDeps {
  runs: RunService;
  runStore: RunStore;
  events: RunEventLog;
  notifier: Notifier;
  threads: ThreadService;
}

export interface SuccessEnvelope {
  type: 'success';
  id: number;
  result: unknown;
  meta?: Record<string, unknown>;
}

interface TreeNode {
  namespace: string[];
  status: string;
  graph_name: string;
  children?: TreeNode[];
}

function parse<T>(schema: z.ZodType<T>, params: unknown, method: string): T {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  throw invalidArgument(`${method}: ${issueMessage(parsed.error)}`);
}

/** Ids of the interrupts a thread waits on (its row's `interrupts`, by task). */
function pendingInterrupts(interrupts: Record<string, unknown>): Set<string> {
  const ids = new Set<string>();
  for (const list of Object.values(interrupts ?? {}))
    for (const item of Array.isArray(list) ? list : [])
      if (item && typeof (item as { id?: unknown }).id === 'string')
        ids.add((item as { id: string }).id);
  return ids;
}

export class ProtocolService {
  private readonly reader: ThreadEventsDeps;
  /**
   * Runs that created their thread and started on this process, by thread, while their log is
   * kept here: the thread has no earlier run, so its streams start with them without a query.
   * `heard`: the thread's `runs` notifications since (the run's own creation among them).
   */
  private readonly firstRuns = new Map<string, { run: ProtocolRunRef; heard: number }>();

  constructor(private readonly deps: ProtocolServiceDeps) {
    this.reader = {
      runs: deps.runStore,
      events: deps.events,
      notifier: deps.notifier,
      firstRunHere: (threadId) => this.firstRunHere(threadId),
    };
    deps.notifier.on(CHANNELS.runs, (payload) => {
      const threadId = threadOfRunsPayload(payload);
      // `*`: notifications may have been lost, so any run may have come after.
      if (threadId === '*') for (const first of this.firstRuns.values()) first.heard += 2;
      else if (threadId) {
        const first = this.firstRuns.get(threadId);
        if (first) first.heard++;
      }
    });
  }

  /**
   * The thread's first run, while it is kept here; `alone`: no notification but its own
   * creation's was heard since, so no run came after it that a reader listening from now on
   * would not hear of (its own, if still to come, wakes that reader all the same).
   */
  private firstRunHere(threadId: string): { run: ProtocolRunRef; alone: boolean } | undefined {
    const first = this.firstRuns.get(threadId);
    if (!first) return undefined;
    if (this.deps.events.keeps(first.run.run_id))
      return { run: first.run, alone: first.heard <= 1 };
    this.firstRuns.delete(threadId);
    return undefined;
  }

  /** Remembers a run that is its thread's first and executes here (see `firstRuns`). */
  private rememberFirst(threadId: string, run: ProtocolRunRef): void {
    // Only runs whose logs are kept here stay: the map holds no more than the event log does.
    for (const [thread, first] of this.firstRuns)
      if (!this.deps.events.keeps(first.run.run_id)) this.firstRuns.delete(thread);
    if (this.deps.events.keeps(run.run_id)) this.firstRuns.set(threadId, { run, heard: 0 });
  }

  /** Answers one command that needs no connection state (every command over HTTP). */
  async command(
    threadId: string,
    command: CommandEnvelope,
    headers: IncomingHttpHeaders,
  ): Promise<SuccessEnvelope> {
    const { id, method, params } = command;
    const ok = (result: unknown, meta: Record<string, unknown> = {}): SuccessEnvelope => ({
      type: 'success',
      id,
      result,
      meta: { thread_id: threadId, ...meta },
    });
    switch (method) {
      case 'run.start': {
        const { run_id, applied } = await this.runStart(threadId, params, headers);
        return ok({ run_id }, { applied_through_seq: applied });
      }
      case 'input.respond': {
        const applied = await this.inputRespond(threadId, params, headers);
        return ok({}, { applied_through_seq: applied });
      }
      case 'state.get':
        return ok(await this.stateGet(threadId, params));
      case 'agent.getTree':
        return ok({ tree: await this.tree(threadId) });
      case 'subscription.subscribe':
        // Over HTTP a subscription has nowhere to deliver: SSE streams carry their own filter.
        parse(SubscribeParams, params, method);
        return ok({ subscription_id: randomUUID(), replayed_events: 0 });
      case 'subscription.unsubscribe': {
        const { subscription_id } = parse(UnsubscribeParams, params, method);
        throw new ProtocolError(
          'no_such_subscription',
          `No subscription "${subscription_id}" on this connection.`,
        );
      }
      case 'subscription.reconnect':
        throw new ProtocolError(
          'not_supported',
          'subscription.reconnect is not supported: open a stream with `since` instead.',
        );
      default:
        throw new ProtocolError('unknown_command', `Unknown command "${method}".`);
    }
  }

  async runStart(
    threadId: string,
    raw: unknown,
    headers: IncomingHttpHeaders,
  ): Promise<{ run_id: string; applied: number }> {
    const parsed = RunStartParams.safeParse(raw ?? {});
    if (!parsed.success) {
      const missing = !(raw && typeof raw === 'object' && 'assistant_id' in raw);
      throw invalidArgument(
        missing
          ? 'run.start requires an assistant_id.'
          : `run.start: ${issueMessage(parsed.error)}`,
      );
    }
    const params = parsed.data;
    const input = params.input ?? null;
    const configurable = params.config?.configurable ?? {};
    const checkpointId =
      typeof configurable.checkpoint_id === 'string' ? configurable.checkpoint_id : undefined;
    const multitaskStrategy = params.multitaskStrategy ?? 'enqueue';
    const body = (resume: boolean): RunCreateBody => ({
      assistant_id: params.assistant_id,
      ...(resume ? { command: { resume: input } } : { input }),
      config: params.config ?? null,
      metadata: params.metadata ?? null,
      multitask_strategy: multitaskStrategy,
      if_not_exists: 'create',
      stream_subgraphs: true,
      ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
    });
    // Input for a thread waiting at an interrupt resumes it, as the official servers do. Most
    // threads wait at none: the run's insert checks that under the thread's lock, and only when
    // it declines are the interrupts read.
    if (input !== null && multitaskStrategy === 'enqueue') {
      const started = await this.create(threadId, body(false), headers, {
        unlessInterrupted: true,
      });
      if (started) return started;
    }
    const interrupts = input === null ? null : await this.deps.threads.interruptsOf(threadId);
    const resume = !!interrupts && pendingInterrupts(interrupts).size > 0;
    return this.create(threadId, body(resume), headers);
  }

  private async create(
    threadId: string,
    body: RunCreateBody,
    headers: IncomingHttpHeaders,
    options: { unlessInterrupted: true },
  ): Promise<{ run_id: string; applied: number } | undefined>;
  private async create(
    threadId: string,
    body: RunCreateBody,
    headers: IncomingHttpHeaders,
    options?: { unlessInterrupted?: false },
  ): Promise<{ run_id: string; applied: number }>;
  private async create(
    threadId: string,
    body: RunCreateBody,
    headers: IncomingHttpHeaders,
    { unlessInterrupted = false }: { unlessInterrupted?: boolean } = {},
  ): Promise<{ run_id: string; applied: number } | undefined> {
    // Remembered before the thread's waiting streams are woken, so they find the run in memory.
    const remember = ({ run, createdUs, newThread }: ProtocolRunCreated) => {
      const index = (run.kwargs as { protocol_index?: unknown }).protocol_index;
      if (newThread && createdUs && run.status === 'running' && typeof index === 'number')
        this.rememberFirst(threadId, {
          run_id: run.run_id,
          created_us: createdUs,
          status: 'running',
          index,
        });
    };
    const created = await this.deps.runs.createProtocolRun(threadId, body, headers, {
      onCreated: remember,
      unlessInterrupted,
    });
    if (!created) return undefined;
    const { run, protocolPrior } = created;
    // The thread's sequence number before any event of the new run, as its insert saw the
    // thread: at or above every event of the runs that already executed, below every event of a
    // run that has not.
    return { run_id: run.run_id, applied: Math.max(0, (protocolPrior + 1) * RUN_SEQ_STRIDE - 1) };
  }

  async inputRespond(
    threadId: string,
    raw: unknown,
    headers: IncomingHttpHeaders,
  ): Promise<number> {
    const params = parse(InputRespondParams, raw, 'input.respond');
    const responses = 'responses' in params ? params.responses : [params];
    const thread = await this.deps.threads.getRow(threadId).catch(() => undefined);
    if (!thread) throw new ProtocolError('no_such_run', 'No run on this thread to respond to.');
    const pending = pendingInterrupts(thread.interrupts);
    if (!pending.size) {
      if (thread.status === 'busy')
        throw invalidArgument('input.respond can only be used while the run is interrupted.');
      throw new ProtocolError('no_such_run', 'No interrupted run on this thread to respond to.');
    }
    for (const { interrupt_id } of responses)
      if (!pending.has(interrupt_id))
        throw new ProtocolError(
          'no_such_interrupt',
          `Interrupt "${interrupt_id}" is not pending on this thread.`,
        );
    const assistantId = thread.metadata.assistant_id;
    if (typeof assistantId !== 'string')
      throw new ProtocolError('no_such_run', 'The thread has no assistant to resume with.');
    const update = Array.isArray(params.update) ? Object.fromEntries(params.update) : params.update;
    const body: RunCreateBody = {
      assistant_id: assistantId,
      command: {
        resume: Object.fromEntries(responses.map((r) => [r.interrupt_id, r.response])),
        ...(update ? { update } : {}),
        ...(params.goto != null ? { goto: params.goto } : {}),
      },
      config: params.config ?? null,
      metadata: params.metadata ?? null,
      multitask_strategy: 'enqueue',
      stream_subgraphs: true,
    };
    return (await this.create(threadId, body, headers)).applied;
  }

  async stateGet(threadId: string, raw: unknown): Promise<Record<string, unknown>> {
    const { keys } = parse(StateGetParams, raw, 'state.get');
    const state = await this.deps.threads.state(threadId).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    });
    const values = (state?.values ?? {}) as Record<string, unknown>;
    const picked = keys
      ? Object.fromEntries(keys.filter((k) => k in values).map((k) => [k, values[k]]))
      : values;
    const checkpoint = state?.checkpoint;
    return {
      values: picked,
      ...(checkpoint
        ? {
            checkpoint: {
              id: checkpoint.checkpoint_id,
              ...(checkpoint.checkpoint_ns ? { ns: checkpoint.checkpoint_ns } : {}),
            },
          }
        : {}),
    };
  }

  /** The agent tree of the thread's newest protocol run, from its lifecycle events. */
  async tree(threadId: string): Promise<TreeNode> {
    const { run } = await this.deps.runStore.protocolStart(threadId);
    if (!run) throw new ProtocolError('no_such_run', 'No run was started on this thread.');
    const nodes = new Map<string, TreeNode>();
    const keyOf = (ns: string[]) => ns.join('\u0000');
    let root: TreeNode | undefined;
    // Only what the log holds now: an active run's log is not waited for.
    const stop = new AbortController();
    const reading = {
      ...run,
      status:
        run.status === 'running' || run.status === 'pending' ? ('success' as const) : run.status,
    };
    const active = reading.status !== run.status;
    for await (const batch of runEvents(this.reader, reading, stop.signal))
      for (const { event } of batch) {
        if (event.method !== 'lifecycle') continue;
        const data = event.params.data as { event?: string; graph_name?: string };
        const ns = event.params.namespace;
        // Still running: the end this read supposes is not the run's.
        if (active && !ns.length && data.event !== 'running') continue;
        let node = nodes.get(keyOf(ns));
        if (!node) {
          const graphName = ns.length ? ns.at(-1)!.split(':', 1)[0]! : (data.graph_name ?? '');
          node = { namespace: ns, status: data.event ?? 'running', graph_name: graphName };
          nodes.set(keyOf(ns), node);
          if (!ns.length) root = node;
          else {
            const parent = nodes.get(keyOf(ns.slice(0, -1)));
            if (parent) (parent.children ??= []).push(node);
          }
        } else node.status = data.event ?? node.status;
      }
    if (!root) throw new ProtocolError('no_such_run', "The thread's run has not started yet.");
    return root;
  }

  /**
   * A thread's protocol events from `start` until `signal` (SSE streams, WebSocket
   * subscriptions), a batch at a time.
   */
  events(
    threadId: string,
    start: ProtocolCursor,
    signal: AbortSignal,
  ): AsyncIterable<EncodedEvent[]> {
    return threadProtocolEvents(this.reader, threadId, start, signal);
  }

  /**
   * Where an SSE stream starts: every retained run (the JS server replays its whole buffer), or
   * with `since`, the events numbered above it.
   */
  replayCursor(since: number | undefined): ProtocolCursor {
    return { afterUs: -1n, since };
  }

  /**
   * Where a WebSocket subscription starts: with `since`, as `replayCursor`; otherwise at the
   * newest run, the current run session's buffer (found by the same read, and waited for from
   * before it while there is none). `signal` ends that wait.
   */
  async subscriptionCursor(
    threadId: string,
    since: number | undefined,
    signal: AbortSignal,
  ): Promise<ProtocolCursor> {
    if (since !== undefined) return this.replayCursor(since);
    // Listening from before the read: a run it does not see is heard when it commits.
    const heard = new ThreadRunsHeard(this.deps.notifier, threadId, signal);
    const at = heard.heard;
    const { beforeLatestUs, run } = await this.deps.runStore.protocolStart(threadId);
    return { afterUs: beforeLatestUs, first: { run, heard, at } };
  }
}
