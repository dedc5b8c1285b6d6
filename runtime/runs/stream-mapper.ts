// Turns what LangGraph streams into the run events of the Agent Server API: names with subgraph
// namespaces, checkpoint payloads in the API's shape, the legacy `messages` mode (metadata,
// partial, complete) and the `events` mode (LangChain's streamEvents v2 objects).
import { isBaseMessage, type BaseMessage, type BaseMessageChunk } from '@langchain/core/messages';
import type { StreamEvent } from '@langchain/core/tracers/log_stream';
import { checkpointRef, taskCheckpointRef, toJson, type MessageMemo } from '../state/index.js';
import type { StreamMode } from './schemas.js';

type Push = (event: string, data: unknown) => void;
type Json = ReturnType<typeof toJson>;

/** LangGraph's stream modes that produce what the requested API modes need. */
export function libraryModes(requested: readonly StreamMode[]): string[] {
  const modes = new Set<string>(['values']);
  for (const mode of requested) {
    if (mode === 'events') continue;
    modes.add(mode === 'messages-tuple' || mode === 'messages' ? 'messages' : mode);
  }
  return [...modes];
}

/** `events` and legacy `messages` are built from callback events, so they need streamEvents. */
export function needsCallbackEvents(requested: readonly StreamMode[]): boolean {
  return requested.includes('events') || requested.includes('messages');
}

/** Drops the server's internal configurable keys (`__*`) and callbacks from a config. */
function publicConfig(config: unknown): Json {
  if (!config || typeof config !== 'object') return toJson(config);
  const rest = { ...(config as Record<string, unknown>) };
  delete rest.callbacks;
  const configurable = rest.configurable as Record<string, unknown> | undefined;
  if (configurable && typeof configurable === 'object') {
    rest.configurable = Object.fromEntries(
      Object.entries(configurable).filter(([key]) => !key.startsWith('__')),
    );
  }
  return toJson(rest);
}

function taskPayload(task: Record<string, unknown>): Json {
  const { state, ...rest } = task;
  const ref =
    state && typeof state === 'object' && 'configurable' in state ? taskCheckpointRef(state) : null;
  return toJson(ref ? { ...rest, checkpoint: ref } : task);
}

/** A `checkpoints` chunk (or a debug checkpoint payload) in the API's snake_case shape. */
export function checkpointPayload(chunk: Record<string, unknown>): Json {
  const { parentConfig, config, tasks, ...rest } = chunk;
  type Config = Parameters<typeof checkpointRef>[0];
  return {
    ...(toJson(rest) as Record<string, Json>),
    config: publicConfig(config),
    parent_config: parentConfig ? publicConfig(parentConfig) : null,
    checkpoint: toJson(checkpointRef(config as Config)),
    parent_checkpoint: toJson(checkpointRef(parentConfig as Config)),
    tasks: Array.isArray(tasks) ? tasks.map((t) => taskPayload(t as Record<string, unknown>)) : [],
  };
}

function debugPayload(chunk: Record<string, unknown>): Json {
  const payload = chunk.payload as Record<string, unknown> | undefined;
  if (!payload) return toJson(chunk);
  if (chunk.type === 'checkpoint') return { ...chunk, payload: checkpointPayload(payload) };
  if (chunk.type === 'task_result' || chunk.type === 'task')
    return { ...(toJson(chunk) as Record<string, Json>), payload: taskPayload(payload) };
  return toJson(chunk);
}

function isInterruptChunk(data: unknown): boolean {
  return typeof data === 'object' && data !== null && '__interrupt__' in data;
}

export class StreamEventMapper {
  private readonly requested: Set<StreamMode>;
  /** Accumulated chunks of each streamed message, for `messages/partial`. */
  private readonly partial = new Map<string, BaseMessageChunk>();
  /** Ids already sent as `messages/complete`. */
  private readonly completed = new Set<string>();
  /** Each `values` event repeats the state's messages; each is serialised once per run. */
  private readonly memo: MessageMemo = new WeakMap();
  /** The root graph's state after its last superstep, as LangGraph streamed it. */
  private lastValues: unknown;
  /** Whether the root graph stopped at an interrupt (its last `values` chunk says so). */
  private interrupted = false;

  constructor(
    requested: readonly StreamMode[],
    private readonly subgraphs: boolean,
    private readonly push: Push,
  ) {
    this.requested = new Set(requested);
  }

  /** One chunk of `graph.stream` (or the root `on_chain_stream` of streamEvents). */
  graphChunk(chunk: unknown[]): void {
    const [ns, mode, data] = (this.subgraphs ? chunk : [[], ...chunk]) as [
      string[],
      string,
      unknown,
    ];
    const root = mode === 'values' && !ns.length;
    if (root) {
      if (isInterruptChunk(data)) this.interrupted = true;
      else this.lastValues = data;
    }
    this.emit(ns, mode, data);
    // After the step's `values` event, as the official server sends them.
    if (root && this.requested.has('messages')) this.completeFrom(data);
  }

  private emit(ns: string[], mode: string, data: unknown): void {
    const suffix = ns.length ? `|${ns.join('|')}` : '';
    if (mode === 'messages') {
      if (this.requested.has('messages-tuple')) {
        const [message, metadata] = data as [unknown, unknown];
        this.push(`messages${suffix}`, [toJson(message), toJson(metadata)]);
      }
      return;
    }
    if (!this.requested.has(mode as StreamMode)) return;
    const record = data as Record<string, unknown>;
    if (mode === 'checkpoints') this.push(`${mode}${suffix}`, checkpointPayload(record));
    else if (mode === 'tasks') this.push(`${mode}${suffix}`, taskPayload(record));
    else if (mode === 'debug') this.push(`${mode}${suffix}`, debugPayload(record));
    else this.push(`${mode}${suffix}`, toJson(data, this.memo));
  }

  /**
   * The thread's final values as JSON when the run ran to its end: every interrupt (`interrupt()`,
   * interrupt before or after a node) ends the root stream with an `__interrupt__` chunk, so
   * without one nothing is left to run. Undefined when that cannot be told from the stream.
   */
  finalValues(): Json | undefined {
    if (this.interrupted || this.lastValues === undefined) return undefined;
    return toJson(this.lastValues, this.memo);
  }

  /** One event of `graph.streamEvents` (v2). */
  callbackEvent(event: StreamEvent, rootRunId: string): void {
    if (event.tags?.includes('langsmith:hidden')) return;
    if (event.event === 'on_chain_stream' && event.run_id === rootRunId) {
      this.graphChunk((event.data as { chunk: unknown[] }).chunk);
      return;
    }
    if (this.requested.has('events')) this.push('events', toJson(event));
    if (
      this.requested.has('messages') &&
      event.event === 'on_chat_model_stream' &&
      !event.tags?.includes('nostream')
    ) {
      this.partialFrom(event);
    }
  }

  private partialFrom(event: StreamEvent): void {
    const chunk = (event.data as { chunk?: BaseMessageChunk }).chunk;
    const id = chunk?.id;
    if (!chunk || !id) return;
    const sofar = this.partial.get(id);
    if (!sofar) {
      this.partial.set(id, chunk);
      this.push('messages/metadata', { [id]: { metadata: toJson(event.metadata) } });
    } else {
      this.partial.set(id, sofar.concat(chunk));
    }
    this.push('messages/partial', [toJson(this.partial.get(id))]);
  }

  private completeFrom(values: unknown): void {
    if (!values || typeof values !== 'object' || isBaseMessage(values)) return;
    const raw = (values as { messages?: unknown }).messages;
    const messages = (Array.isArray(raw) ? raw : raw ? [raw] : []) as BaseMessage[];
    const fresh = messages.filter((m) => {
      if (!m?.id || this.completed.has(m.id)) return false;
      this.completed.add(m.id);
      return true;
    });
    // The `values` event just before serialised these messages already (when it was requested).
    if (fresh.length)
      this.push(
        'messages/complete',
        fresh.map((message) => toJson(message, this.memo)),
      );
  }
}
