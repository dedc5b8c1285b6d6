// A2A on top of the runs context: a task is a run (resuming an interrupted task adds a run
// tagged with the task id), a context is a thread. Execution, queueing and cancellation stay
// with the runs service; this file only maps identifiers, inputs and outcomes.
import { randomUUID } from 'node:crypto';
import { validate as isUuid } from 'uuid';
import { AppError } from '../../common/errors/index.js';
import type { AssistantService } from '../assistants/index.js';
import type { RunEventLog, RunRow, RunService } from '../runs/index.js';
import type { DefaultAssistant } from './default-assistant.js';
import { agentMessage, graphInput, resumeValue, textOf, type TaskIds } from './convert.js';
import { RpcCode, RpcError, invalidParams, taskNotFound } from './jsonrpc.js';
import type { RunAuthExtras } from '../auth/index.js';
import type { MessageSendParams, TaskIdParams, TaskQueryParams } from './schemas.js';
import {
  applyEvent,
  buildTask,
  emptyOutcome,
  isActive,
  streamClock,
  taskState,
  type RunOutcome,
} from './tasks.js';
import type { StreamResult, Task } from './wire.js';

export interface A2aServiceDeps {
  runs: RunService;
  events: RunEventLog;
  assistants: AssistantService;
  /** Described by the well-known agent card URL when no `assistant_id` is given. */
  defaultAssistant: DefaultAssistant;
}

type Assistant = Awaited<ReturnType<AssistantService['get']>>;
type StreamMode = 'values' | 'messages-tuple';

/** Metadata key that ties a resuming run to the task (the first run) it continues. */
const TASK_KEY = 'a2a_task_id';
const INPUT_KEYS_TTL_MS = 60_000;
const CANCEL_WAIT_MS = 30_000;

interface Started {
  taskId: string;
  run: RunRow;
}

/** The task with its status time passed through the stream's clock. */
function stamped(task: Task, clock: (at?: string) => string): Task {
  return { ...task, status: { ...task.status, timestamp: clock(task.status.timestamp) } };
}

/** The user a custom auth module authenticated, in the run's config as for any other run. */
const authConfig = (auth: RunAuthExtras | undefined) =>
  auth ? { config: { configurable: auth.configurable } } : {};

export class A2aService {
  private readonly inputKeysCache = new Map<string, { keys: string[] | null; at: number }>();

  constructor(private readonly deps: A2aServiceDeps) {}

  get defaultAssistant(): DefaultAssistant {
    return this.deps.defaultAssistant;
  }

  async assistant(idOrGraph: string): Promise<Assistant> {
    try {
      return await this.deps.assistants.get(idOrGraph);
    } catch (err) {
      if (err instanceof AppError) throw invalidParams(`Assistant not found: ${idOrGraph}`);
      throw err;
    }
  }

  /** `message/send`: waits for the turn to end unless `configuration.blocking` is false. */
  async send(assistantId: string, params: MessageSendParams, auth?: RunAuthExtras): Promise<Task> {
    const assistant = await this.assistant(assistantId);
    const { taskId, run } = await this.start(assistant, params, ['values'], auth);
    const historyLength = params.configuration?.historyLength;
    if (params.configuration?.blocking === false) {
      return buildTask({
        taskId,
        run,
        outcome: undefined,
        pendingHistory: run.kwargs.input,
        historyLength,
      });
    }
    const outcome = await this.outcome(run.run_id);
    return buildTask({ taskId, run: await this.reload(run), outcome, historyLength });
  }

  /** `message/stream`: the Task, working updates while the graph runs, the answer, the final status. */
  async *stream(
    assistantId: string,
    params: MessageSendParams,
    signal: AbortSignal,
    auth?: RunAuthExtras,
  ): AsyncGenerator<StreamResult> {
    const assistant = await this.assistant(assistantId);
    const { taskId, run } = await this.start(assistant, params, ['values', 'messages-tuple'], auth);
    const clock = streamClock();
    yield stamped(
      buildTask({ taskId, run, outcome: undefined, pendingHistory: run.kwargs.input }),
      clock,
    );
    yield* this.follow(taskId, run, signal, clock, params.configuration?.historyLength);
  }

  /** `tasks/resubscribe`: the task as it is now, then live updates if it is still going. */
  async *resubscribe(
    assistantId: string,
    params: TaskIdParams,
    signal: AbortSignal,
  ): AsyncGenerator<StreamResult> {
    const assistant = await this.assistant(assistantId);
    const run = await this.currentRun(await this.findTask(assistant, params.id));
    if (!isActive(run)) {
      yield buildTask({ taskId: params.id, run, outcome: await this.outcome(run.run_id) });
      return;
    }
    const clock = streamClock();
    yield stamped(
      buildTask({ taskId: params.id, run, outcome: undefined, pendingHistory: run.kwargs.input }),
      clock,
    );
    yield* this.follow(params.id, run, signal, clock);
  }

  async get(assistantId: string, params: TaskQueryParams): Promise<Task> {
    const assistant = await this.assistant(assistantId);
    const run = await this.currentRun(await this.findTask(assistant, params.id));
    const outcome = isActive(run) ? undefined : await this.outcome(run.run_id);
    return buildTask({
      taskId: params.id,
      run,
      outcome,
      pendingHistory: run.kwargs.input,
      historyLength: params.historyLength,
    });
  }

  async cancel(assistantId: string, params: TaskIdParams): Promise<Task> {
    const assistant = await this.assistant(assistantId);
    const run = await this.currentRun(await this.findTask(assistant, params.id));
    if (!isActive(run)) {
      const state = taskState(run, await this.outcome(run.run_id));
      throw new RpcError(
        RpcCode.TASK_NOT_CANCELABLE,
        `Task ${params.id} is ${state}; only submitted or working tasks can be canceled`,
      );
    }
    await this.deps.runs.cancel(run.thread_id, [run.run_id], 'interrupt');
    // The worker running it stops at its next step; answer with the settled task when it has.
    const outcome = await this.outcome(run.run_id, AbortSignal.timeout(CANCEL_WAIT_MS));
    return buildTask({ taskId: params.id, run: await this.reload(run), outcome });
  }

  private async start(
    assistant: Assistant,
    params: MessageSendParams,
    streamModes: StreamMode[],
    auth: RunAuthExtras | undefined,
  ): Promise<Started> {
    const { message } = params;
    if (params.configuration?.pushNotificationConfig) {
      throw new RpcError(
        RpcCode.PUSH_NOTIFICATION_NOT_SUPPORTED,
        'Push notifications are not supported by this agent',
      );
    }
    if (message.taskId) return this.resume(assistant, params, streamModes, auth);
    const contextId = message.contextId ?? randomUUID();
    if (!isUuid(contextId))
      throw invalidParams(`contextId must be a UUID (it is the thread id), got "${contextId}"`);
    const input = graphInput(message, await this.inputKeys(assistant));
    const run = await this.createRun(contextId.toLowerCase(), {
      assistant_id: assistant.assistant_id,
      input,
      stream_mode: streamModes,
      if_not_exists: 'create',
      metadata: { ...auth?.metadata, a2a_message_id: message.messageId },
      ...authConfig(auth),
    });
    return { taskId: run.run_id, run };
  }

  /** A message naming a task answers its interrupt; any other task state refuses it. */
  private async resume(
    assistant: Assistant,
    params: MessageSendParams,
    streamModes: StreamMode[],
    auth: RunAuthExtras | undefined,
  ): Promise<Started> {
    const { message } = params;
    const taskId = message.taskId ?? '';
    const first = await this.findTask(assistant, taskId);
    if (message.contextId && message.contextId.toLowerCase() !== first.thread_id) {
      throw invalidParams(
        `Task ${taskId} belongs to context ${first.thread_id}, not ${message.contextId}`,
      );
    }
    const current = await this.currentRun(first);
    const state = taskState(
      current,
      isActive(current) ? undefined : await this.outcome(current.run_id),
    );
    if (state !== 'input-required') {
      throw new RpcError(
        RpcCode.UNSUPPORTED_OPERATION,
        `Task ${taskId} is ${state} and cannot take more input; only a task in input-required can. ` +
          'To continue the conversation, send the message with the contextId alone: it starts a new task in the same context.',
      );
    }
    // A later task in the same context ran past the interrupt: resuming would apply to its state.
    const [latest] = await this.deps.runs.list(first.thread_id, { limit: 1 });
    if (latest && latest.run_id !== current.run_id) {
      throw new RpcError(
        RpcCode.UNSUPPORTED_OPERATION,
        `Task ${taskId} can no longer be resumed: a later task in context ${first.thread_id} superseded it`,
      );
    }
    const run = await this.createRun(first.thread_id, {
      assistant_id: assistant.assistant_id,
      command: { resume: resumeValue(message) },
      stream_mode: streamModes,
      metadata: { ...auth?.metadata, [TASK_KEY]: first.run_id, a2a_message_id: message.messageId },
      ...authConfig(auth),
    });
    return { taskId: first.run_id, run };
  }

  private async createRun(
    threadId: string,
    body: Parameters<RunService['create']>[1],
  ): Promise<RunRow> {
    try {
      return await this.deps.runs.create(threadId, body);
    } catch (err) {
      if (err instanceof AppError) {
        throw invalidParams(
          `Failed to create run: ${typeof err.detail === 'string' ? err.detail : err.message}`,
        );
      }
      throw err;
    }
  }

  /** Live events of one run as A2A stream results, ending with the final status. */
  private async *follow(
    taskId: string,
    run: RunRow,
    signal: AbortSignal,
    clock: (at?: string) => string,
    historyLength?: number,
  ): AsyncGenerator<StreamResult> {
    const ids: TaskIds = { taskId, contextId: run.thread_id };
    const outcome = emptyOutcome();
    const working = (message?: ReturnType<typeof agentMessage>) => ({
      kind: 'status-update' as const,
      ...ids,
      status: {
        state: 'working' as const,
        ...(message ? { message } : {}),
        timestamp: clock(),
      },
      final: false,
    });
    let chunk = 0;
    for await (const event of this.deps.events.read(run.run_id, -1, signal)) {
      applyEvent(outcome, event);
      if (event.event === 'metadata') yield working();
      if (event.event === 'messages') {
        const [message] = event.data as [{ type?: unknown; content?: unknown; id?: unknown }];
        const text = textOf(message.content);
        if ((message.type === 'AIMessageChunk' || message.type === 'ai') && text !== '') {
          const id = typeof message.id === 'string' ? message.id : `${run.run_id}-chunk`;
          yield working(agentMessage([{ kind: 'text', text }], `${id}-${chunk++}`, ids));
        }
      }
    }
    if (signal.aborted) return;
    const task = buildTask({ taskId, run: await this.reload(run), outcome, historyLength });
    for (const artifact of task.artifacts ?? []) {
      yield { kind: 'artifact-update', ...ids, artifact, append: false, lastChunk: true };
    }
    const status = { ...task.status, timestamp: clock(task.status.timestamp) };
    yield { kind: 'status-update', ...ids, status, final: true };
  }

  private async findTask(assistant: Assistant, taskId: string): Promise<RunRow> {
    if (!isUuid(taskId)) throw taskNotFound(taskId);
    const run = await this.deps.runs.find(taskId.toLowerCase());
    // A resuming run is a turn of another task, not a task of its own.
    if (!run || run.assistant_id !== assistant.assistant_id || run.metadata[TASK_KEY] !== undefined)
      throw taskNotFound(taskId);
    return run;
  }

  private async currentRun(first: RunRow): Promise<RunRow> {
    return (
      (await this.deps.runs.latestTagged(first.thread_id, { [TASK_KEY]: first.run_id })) ?? first
    );
  }

  private async reload(run: RunRow): Promise<RunRow> {
    return (await this.deps.runs.find(run.run_id)) ?? run;
  }

  /** Reads a run's events to its end (immediately for a finished run). */
  private async outcome(runId: string, signal?: AbortSignal): Promise<RunOutcome> {
    const outcome = emptyOutcome();
    for await (const event of this.deps.events.read(runId, -1, signal, { wait: true }))
      applyEvent(outcome, event);
    return outcome;
  }

  /** The assistant's graph input keys (null when unknown), cached briefly per assistant version. */
  private async inputKeys(assistant: Assistant): Promise<string[] | null> {
    const key = `${assistant.assistant_id}:${assistant.version}`;
    const cached = this.inputKeysCache.get(key);
    if (cached && Date.now() - cached.at < INPUT_KEYS_TTL_MS) return cached.keys;
    const schemas = await this.deps.assistants.schemas(assistant.assistant_id, {
      waitForTypes: false,
    });
    const properties = (schemas.input_schema as { properties?: Record<string, unknown> } | null)
      ?.properties;
    const keys = properties ? Object.keys(properties) : null;
    this.inputKeysCache.set(key, { keys, at: Date.now() });
    return keys;
  }
}
