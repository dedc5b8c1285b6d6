// A run (one turn of a task) seen as an A2A Task: its state, status message, history and artifact.
import type { RunRow } from '../runs/index.js';
import {
  agentMessage,
  interruptParts,
  lastAiMessage,
  textOf,
  toA2aHistory,
  type TaskIds,
} from './convert.js';
import type { Artifact, OutPart, Task, TaskState, TaskStatus } from './wire.js';

/** What a run's event log says about its end. */
export interface RunOutcome {
  /** The last full state the run emitted (interrupt markers excluded). */
  values: unknown;
  interrupts: unknown[];
  error: { error: string; message: string } | undefined;
}

export const emptyOutcome = (): RunOutcome => ({
  values: undefined,
  interrupts: [],
  error: undefined,
});

/** Folds one run event into the outcome; `values` events that only announce an interrupt are kept apart. */
export function applyEvent(outcome: RunOutcome, event: { event: string; data: unknown }): void {
  if (event.event === 'error') {
    outcome.error = event.data as RunOutcome['error'];
    return;
  }
  if (event.event !== 'values') return;
  const data = event.data as Record<string, unknown> | null;
  if (data && typeof data === 'object' && Array.isArray(data.__interrupt__)) {
    outcome.interrupts = data.__interrupt__;
    return;
  }
  outcome.values = data;
  outcome.interrupts = [];
}

/**
 * Stamps the statuses of one stream so that they never go back in time: a run's own times come
 * from the database's clock and are read after the fact, live updates are stamped by this
 * process when sent (so a replayed `working` could otherwise follow the run's end).
 */
export function streamClock(): (at?: string) => string {
  let last = 0;
  return (at) => {
    last = Math.max(last, at === undefined ? Date.now() : Date.parse(at));
    return new Date(last).toISOString();
  };
}

export function isActive(run: RunRow): boolean {
  return run.status === 'pending' || run.status === 'running';
}

export function taskState(run: RunRow, outcome: RunOutcome | undefined): TaskState {
  switch (run.status) {
    case 'pending':
      return 'submitted';
    case 'running':
      return 'working';
    case 'error':
    case 'timeout':
      return 'failed';
    case 'interrupted':
      return 'canceled';
    case 'success':
      return outcome?.interrupts.length ? 'input-required' : 'completed';
  }
}

function responseArtifact(run: RunRow, parts: OutPart[]): Artifact {
  return {
    artifactId: `response-${run.run_id}`,
    name: 'Assistant Response',
    description: `Response from assistant ${run.assistant_id}`,
    parts,
  };
}

function finalParts(outcome: RunOutcome | undefined): { parts: OutPart[]; id?: string } {
  const ai = lastAiMessage(outcome?.values);
  if (ai) {
    return {
      parts: [{ kind: 'text', text: textOf(ai.content) }],
      ...(typeof ai.id === 'string' ? { id: ai.id } : {}),
    };
  }
  const values = outcome?.values;
  return values && typeof values === 'object'
    ? { parts: [{ kind: 'data', data: values as Record<string, unknown> }] }
    : { parts: [] };
}

export interface TaskView {
  taskId: string;
  /** The run of the task's latest turn (the first run, or the run that resumed it). */
  run: RunRow;
  /** Present once the run ended. */
  outcome: RunOutcome | undefined;
  /** History to show while no state exists yet (the incoming message). */
  pendingHistory?: unknown;
  historyLength?: number | undefined;
}

export function buildTask(view: TaskView): Task {
  const { run, outcome } = view;
  const ids: TaskIds = { taskId: view.taskId, contextId: run.thread_id };
  const state = taskState(run, outcome);
  const status: TaskStatus = {
    state,
    timestamp: (run.run_ended_at ?? run.updated_at).toISOString(),
  };
  let artifacts: Artifact[] | undefined;
  if (state === 'completed') {
    const final = finalParts(outcome);
    if (final.parts.length) {
      status.message = agentMessage(final.parts, final.id ?? `${run.run_id}-final`, ids);
      artifacts = [responseArtifact(run, final.parts)];
    }
  } else if (state === 'input-required') {
    status.message = agentMessage(
      interruptParts(outcome?.interrupts ?? []),
      `${run.run_id}-input`,
      ids,
    );
  } else if (state === 'failed') {
    const error = run.error ?? outcome?.error;
    const text = `Error executing assistant: ${error ? `${error.error}: ${error.message}` : run.status}`;
    status.message = agentMessage([{ kind: 'text', text }], `${run.run_id}-error`, ids);
  } else if (state === 'canceled') {
    status.message = agentMessage(
      [{ kind: 'text', text: 'Task was canceled' }],
      `${run.run_id}-canceled`,
      ids,
    );
  }
  let history = toA2aHistory(outcome?.values ?? view.pendingHistory, ids);
  if (view.historyLength !== undefined)
    history = view.historyLength ? history.slice(-view.historyLength) : [];
  return {
    kind: 'task',
    id: view.taskId,
    contextId: run.thread_id,
    status,
    history,
    ...(artifacts ? { artifacts } : {}),
    metadata: { assistant_id: run.assistant_id, run_id: run.run_id },
  };
}
