// The webhook body: the run record as it was when the run finished, plus the fields of the
// spec's payload table. Built per attempt, since `webhook_sent_at` changes.

/** The run record captured in the delivery row, in the same transaction that finished it. */
export interface RunSnapshot {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: string;
  metadata: Record<string, unknown>;
  kwargs: Record<string, unknown>;
  multitask_strategy: string;
  run_started_at: string | null;
  run_ended_at: string | null;
  error: { error: string; message: string } | null;
}

/** What a finished run looks like to the outbox (the runs context's row, structurally). */
export interface FinishedRun {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: Date;
  updated_at: Date;
  status: string;
  metadata: Record<string, unknown>;
  kwargs: Record<string, unknown>;
  multitask_strategy: string;
  run_started_at: Date | null;
  run_ended_at: Date | null;
  error: { error: string; message: string } | null;
}

export function snapshotOf(run: FinishedRun): RunSnapshot {
  return {
    run_id: run.run_id,
    thread_id: run.thread_id,
    assistant_id: run.assistant_id,
    created_at: run.created_at.toISOString(),
    updated_at: run.updated_at.toISOString(),
    status: run.status,
    metadata: run.metadata,
    kwargs: run.kwargs,
    multitask_strategy: run.multitask_strategy,
    run_started_at: run.run_started_at?.toISOString() ?? null,
    run_ended_at: run.run_ended_at?.toISOString() ?? null,
    error: run.error,
  };
}

/**
 * `values` only for stateful runs (undefined leaves it out); `run_ended_at` only once ended;
 * `error` only when the run failed.
 */
export function webhookPayload(
  run: RunSnapshot,
  values: unknown,
  sentAt: Date,
): Record<string, unknown> {
  return {
    run_id: run.run_id,
    thread_id: run.thread_id,
    assistant_id: run.assistant_id,
    status: run.status,
    created_at: run.created_at,
    updated_at: run.updated_at,
    run_started_at: run.run_started_at,
    ...(run.run_ended_at ? { run_ended_at: run.run_ended_at } : {}),
    webhook_sent_at: sentAt.toISOString(),
    metadata: run.metadata,
    kwargs: run.kwargs,
    ...(values !== undefined ? { values } : {}),
    multitask_strategy: run.multitask_strategy,
    ...(run.error ? { error: run.error } : {}),
  };
}
