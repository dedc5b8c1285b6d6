// Runs: creation with multitask strategies, waiting and joining, cancellation.
import { v7 as uuidv7 } from 'uuid';
import { withTransaction, type Pool } from '../../common/db/index.js';
import { AppError, badRequest, conflict, notFound } from '../../common/errors/index.js';
import type { AssistantService } from '../assistants/index.js';
import type { ThreadService } from '../threads/index.js';
import type { RunEventLog } from './event-log.js';
import type { RunKwargs } from './executor.js';
import { CHANNELS, type Notifier } from './notifier.js';
import type { BulkCancelBody, RunCreateBody, StreamMode } from './schemas.js';
import type { RunRow, RunStatus, RunStore } from './store.js';

export const REJECT_DETAIL =
  'Thread is already running a task. Wait for it to finish or choose a different multitask strategy.';

export interface RunServiceDeps {
  pool: Pool;
  runs: RunStore;
  events: RunEventLog;
  notifier: Notifier;
  assistants: AssistantService;
  threads: ThreadService;
  /** Refuses a webhook URL with a 422 naming the rule (the webhooks context's validator). */
  validateWebhook?: (url: string) => Promise<void>;
}

function streamModes(body: RunCreateBody): StreamMode[] {
  const mode = body.stream_mode ?? 'values';
  return Array.isArray(mode) ? mode : [mode];
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

export class RunService {
  constructor(private readonly deps: RunServiceDeps) {}

  /** Creates a run on `threadId`, or on a new temporary thread when it is undefined. */
  async create(threadId: string | undefined, body: RunCreateBody): Promise<RunRow> {
    if (body.webhook) await this.deps.validateWebhook?.(body.webhook);
    const assistant = await this.deps.assistants.get(body.assistant_id).catch((err: unknown) => {
      throw err instanceof AppError && err.code === 'NOT_FOUND'
        ? notFound(
            `No assistant found for "${body.assistant_id}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`,
          )
        : err;
    });
    const stateless = threadId === undefined;
    if (stateless && body.command?.resume !== undefined) {
      throw badRequest('You must provide a thread_id when resuming.');
    }
    const kwargs: RunKwargs = {
      input: body.input ?? null,
      command: body.command ?? null,
      config: body.config ?? null,
      context: body.context ?? null,
      stream_mode: streamModes(body),
      stream_subgraphs: body.stream_subgraphs ?? false,
      interrupt_before: body.interrupt_before ?? null,
      interrupt_after: body.interrupt_after ?? null,
      checkpoint_id: body.checkpoint_id ?? body.checkpoint?.checkpoint_id ?? null,
      temporary: stateless && body.on_completion !== 'keep',
    };
    const targetThread = threadId ?? uuidv7();
    const threadMetadata = { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id };
    if (stateless) await this.deps.threads.createForRun(targetThread, threadMetadata);
    const strategy = body.multitask_strategy ?? 'enqueue';
    const { run, cancelled } = await withTransaction(this.deps.pool, async (db) => {
      let thread = await this.deps.threads.lockForRun(targetThread, db);
      if (!thread && body.if_not_exists === 'create') {
        await this.deps.threads.createForRun(targetThread, threadMetadata);
        thread = await this.deps.threads.lockForRun(targetThread, db);
      }
      if (!thread) throw notFound(`Thread with ID ${targetThread} not found`);
      const inflight = await this.deps.runs.inflight(targetThread, db);
      if (strategy === 'reject' && inflight.length) throw conflict(REJECT_DETAIL);
      const created = await this.deps.runs.insert(
        {
          run_id: uuidv7(),
          thread_id: targetThread,
          assistant_id: assistant.assistant_id,
          metadata: body.metadata ?? {},
          kwargs: { ...kwargs, ...(body.webhook ? { webhook: body.webhook } : {}) },
          multitask_strategy: strategy,
          after_seconds: body.after_seconds ?? 0,
        },
        db,
      );
      await this.deps.threads.markBusy(targetThread, threadMetadata, db);
      const toCancel =
        strategy === 'interrupt' || strategy === 'rollback'
          ? await this.deps.runs.requestCancel(
              inflight.map((r) => r.run_id),
              strategy,
              db,
            )
          : [];
      return { run: created, cancelled: toCancel };
    });
    await this.afterCancel(cancelled);
    await this.deps.notifier.notify(CHANNELS.runs);
    return run;
  }

  async get(threadId: string, runId: string): Promise<RunRow> {
    const run = await this.deps.runs.get(threadId, runId);
    if (!run) throw notFound('Run not found');
    return run;
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
   * either, the thread's values. Waits for the run to end.
   */
  async result(run: RunRow, signal?: AbortSignal): Promise<unknown> {
    let values: unknown;
    let error: unknown;
    for await (const event of this.deps.events.read(run.run_id, -1, signal)) {
      if (event.event === 'values') values = event.data;
      if (event.event === 'error') error = event.data;
    }
    if (error !== undefined) return { __error__: error };
    if (values !== undefined) return values;
    const thread = await this.deps.threads.getRow(run.thread_id).catch(() => undefined);
    return thread?.values ?? null;
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
        // Nobody executes it yet: settle it here.
        const writer = this.deps.events.writer(
          run.run_id,
          (await this.deps.events.lastSeq(run.run_id)) + 1,
        );
        if (run.cancel_action === 'rollback') await this.deps.runs.delete(run.run_id);
        else await this.deps.runs.finish(run.run_id, 'interrupted', null);
        await writer.end();
      } else {
        await this.deps.notifier.notify(CHANNELS.cancel, run.run_id);
      }
    }
  }
}
