// Converts LangGraph's StateSnapshot into the ThreadState wire shape.
import type { RunnableConfig } from '@langchain/core/runnables';
import type { StateSnapshot } from '@langchain/langgraph';
import { toJson } from './serialize.js';

/** Changes when the ThreadState body built here changes, so bodies cached before are not served. */
export const STATE_BODY_VERSION = 2;

export interface CheckpointRef {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  checkpoint_map: Record<string, unknown> | null;
}

export interface ThreadStateBody {
  values: unknown;
  next: string[];
  tasks: unknown[];
  metadata: Record<string, unknown>;
  created_at: string | null;
  checkpoint: CheckpointRef | null;
  parent_checkpoint: CheckpointRef | null;
  checkpoint_id: string | null;
  parent_checkpoint_id: string | null;
  interrupts: unknown[];
}

export function checkpointRef(config: RunnableConfig | undefined): CheckpointRef | null {
  const c = config?.configurable;
  if (!c || typeof c.checkpoint_id !== 'string') return null;
  return {
    thread_id: String(c.thread_id),
    checkpoint_ns: typeof c.checkpoint_ns === 'string' ? c.checkpoint_ns : '',
    checkpoint_id: c.checkpoint_id,
    checkpoint_map: (c.checkpoint_map as Record<string, unknown> | undefined) ?? null,
  };
}

function isSnapshot(value: unknown): value is StateSnapshot {
  return typeof value === 'object' && value !== null && 'values' in value && 'next' in value;
}

/** A task's checkpoint: that of the subgraph it runs. Its id is null until one is chosen. */
export type TaskCheckpointRef = Omit<CheckpointRef, 'checkpoint_id'> & {
  checkpoint_id: string | null;
};

/**
 * Where a subgraph task's state lives. LangGraph gives its namespace only (no checkpoint id), or
 * with `subgraphs` the subgraph's whole state: either way a client reads or resumes the subgraph
 * with it. Null for a task that runs no subgraph.
 */
export function taskCheckpointRef(state: unknown): TaskCheckpointRef | null {
  if (isSnapshot(state)) return checkpointRef(state.config);
  const c = (state as RunnableConfig | null | undefined)?.configurable;
  if (!c || typeof c.thread_id !== 'string') return null;
  return {
    thread_id: c.thread_id,
    checkpoint_ns: typeof c.checkpoint_ns === 'string' ? c.checkpoint_ns : '',
    checkpoint_id: typeof c.checkpoint_id === 'string' ? c.checkpoint_id : null,
    checkpoint_map: (c.checkpoint_map as Record<string, unknown> | undefined) ?? null,
  };
}

/** Results of the tasks that ran from `from`, keyed by node: what the next checkpoint wrote. */
export function writesOfTasks(from: StateSnapshot): Record<string, unknown> | null {
  const entries = from.tasks
    .filter((t) => t.result !== undefined)
    .map((t): [string, unknown] => [t.name, toJson(t.result)]);
  return entries.length ? Object.fromEntries(entries) : null;
}

/**
 * The checkpoint metadata of LangGraph JS has no `writes`; the official servers expose it, so
 * it is derived: an input checkpoint wrote its own `__start__` task's input, any other wrote the
 * results of its parent's tasks (the caller passes the parent when it has it).
 */
function writesFor(snapshot: StateSnapshot, parent: StateSnapshot | undefined): unknown {
  const metadata = snapshot.metadata as Record<string, unknown> | undefined;
  if (metadata && 'writes' in metadata) return toJson(metadata.writes);
  if (metadata?.source === 'input') return writesOfTasks(snapshot);
  return parent ? writesOfTasks(parent) : null;
}

export function needsParentForWrites(snapshot: StateSnapshot): boolean {
  const metadata = snapshot.metadata as Record<string, unknown> | undefined;
  return (
    !!snapshot.parentConfig && !(metadata && 'writes' in metadata) && metadata?.source !== 'input'
  );
}

export function toThreadState(snapshot: StateSnapshot, parent?: StateSnapshot): ThreadStateBody {
  const checkpoint = checkpointRef(snapshot.config);
  const parentCheckpoint = checkpointRef(snapshot.parentConfig);
  const metadata = { ...((toJson(snapshot.metadata ?? {}) as Record<string, unknown>) ?? {}) };
  metadata.writes = writesFor(snapshot, parent);
  if (checkpoint) {
    metadata.thread_id ??= checkpoint.thread_id;
    metadata.checkpoint_id ??= checkpoint.checkpoint_id;
  }
  const tasks = snapshot.tasks.map((task) => ({
    id: task.id,
    name: task.name,
    path: task.path ?? null,
    error: task.error === undefined || task.error === null ? null : errorText(task.error),
    interrupts: toJson(task.interrupts ?? []),
    checkpoint: taskCheckpointRef(task.state),
    state: isSnapshot(task.state) ? toThreadState(task.state) : null,
    result: task.result === undefined ? null : toJson(task.result),
  }));
  return {
    values: toJson(snapshot.values ?? {}),
    next: [...snapshot.next],
    tasks,
    metadata,
    created_at: snapshot.createdAt ?? null,
    checkpoint,
    parent_checkpoint: parentCheckpoint,
    checkpoint_id: checkpoint?.checkpoint_id ?? null,
    parent_checkpoint_id: parentCheckpoint?.checkpoint_id ?? null,
    interrupts: tasks.flatMap((t) => (Array.isArray(t.interrupts) ? t.interrupts : [])),
  };
}

function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error === 'string' ? error : JSON.stringify(error);
}

/** The state of a thread that has never been written to. */
export function emptyThreadState(): ThreadStateBody {
  return {
    values: {},
    next: [],
    tasks: [],
    metadata: {},
    created_at: null,
    checkpoint: null,
    parent_checkpoint: null,
    checkpoint_id: null,
    parent_checkpoint_id: null,
    interrupts: [],
  };
}
