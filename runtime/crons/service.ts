// Crons: create, read, update, delete and search. The scheduler fires them (scheduler.ts).
import { uuid7 as uuidv7 } from '../../common/ids/index.js';
import { withTransaction, type Pool } from '../../common/db/index.js';
import { AppError, badRequest, invalid, notFound } from '../../common/errors/index.js';
import type { AssistantService } from '../assistants/index.js';
import { isoDates } from '../state/index.js';
import type { ThreadService } from '../threads/index.js';
import { assertSchedule, assertTimezone, nextRunDate, type Schedule } from './schedule.js';
import {
  CRON_FIELDS,
  PAYLOAD_KEYS,
  type CronCountBody,
  type CronCreateBody,
  type CronField,
  type CronPatchBody,
  type CronSearchBody,
} from './schemas.js';
import type { AuthFilter } from '../auth/index.js';
import type { CronFilter, CronRow, CronStore } from './store.js';

export interface CronServiceDeps {
  pool: Pool;
  store: CronStore;
  assistants: AssistantService;
  threads: ThreadService;
  /** The webhooks context's URL rules: a 422 naming the rule that failed. */
  validateWebhook: (url: string, loc: (string | number)[]) => Promise<void>;
}

export function cronBody<T extends Partial<CronRow>>(row: T, withNow = false) {
  return { ...isoDates(row), ...(withNow ? { now: new Date().toISOString() } : {}) };
}

function pickPayload(body: Record<string, unknown>): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const key of PAYLOAD_KEYS) if (body[key] !== undefined) payload[key] = body[key];
  return payload;
}

function validateSchedule(schedule: Schedule): void {
  if (schedule.timezone) assertTimezone(schedule.timezone, ['body', 'timezone']);
  assertSchedule(schedule, ['body', 'schedule']);
}

/** An end time without an offset (a naive Python datetime) is read as UTC, like schedules. */
function parseEndTime(value: string | null | undefined): Date | null {
  if (!value) return null;
  return new Date(/(Z|[+-]\d\d:?\d\d)$/i.test(value) ? value : `${value}Z`);
}

export class CronService {
  constructor(private readonly deps: CronServiceDeps) {}

  private async assistantId(idOrGraph: string): Promise<string> {
    try {
      return (await this.deps.assistants.get(idOrGraph)).assistant_id;
    } catch (err) {
      // Not an id and no graph of that name (VALIDATION) is no such assistant, as for runs.
      if (err instanceof AppError && (err.code === 'NOT_FOUND' || err.code === 'VALIDATION'))
        throw notFound(
          `No assistant found for "${idOrGraph}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`,
        );
      throw err;
    }
  }

  /** `threadId` undefined: a stateless cron, a new thread per firing. */
  async create(threadId: string | undefined, body: CronCreateBody): Promise<CronRow> {
    const schedule = { schedule: body.schedule.trim(), timezone: body.timezone ?? null };
    validateSchedule(schedule);
    if (body.webhook) await this.deps.validateWebhook(body.webhook, ['body', 'webhook']);
    const assistantId = await this.assistantId(body.assistant_id);
    if (threadId !== undefined) await this.requireThread(threadId, body, assistantId);
    const endTime = parseEndTime(body.end_time);
    return this.deps.store.insert({
      cron_id: uuidv7(),
      assistant_id: assistantId,
      thread_id: threadId ?? null,
      user_id: null,
      ...schedule,
      end_time: endTime,
      enabled: body.enabled ?? true,
      // Only a stateless cron's thread can be deleted after its run.
      on_run_completed: threadId === undefined ? (body.on_run_completed ?? 'delete') : null,
      payload: pickPayload(body),
      metadata: body.metadata ?? {},
      next_run_date: nextRunDate(schedule, new Date(), endTime),
    });
  }

  private async requireThread(threadId: string, body: CronCreateBody, assistantId: string) {
    const exists = await this.deps.threads.getRow(threadId).then(
      () => true,
      (err: unknown) => {
        if (err instanceof AppError && err.code === 'NOT_FOUND') return false;
        throw err;
      },
    );
    if (exists) return;
    if (body.if_not_exists !== 'create') throw notFound(`Thread with ID ${threadId} not found`);
    const assistant = await this.deps.assistants.get(assistantId);
    await this.deps.threads.createIfMissing(threadId, {
      graph_id: assistant.graph_id,
      assistant_id: assistantId,
    });
  }

  async get(cronId: string): Promise<CronRow> {
    const row = await this.deps.store.get(cronId);
    if (!row) throw notFound(`Cron with ID ${cronId} not found`);
    return row;
  }

  /**
   * Changes fields; a change of schedule, time zone, end time or a re-enable counts the next
   * due time from now (times missed while disabled are not caught up).
   */
  async patch(cronId: string, body: CronPatchBody): Promise<CronRow> {
    const given = Object.entries(body).filter(([, v]) => v !== undefined);
    if (!given.length) throw badRequest('Request body cannot be empty');
    if (body.webhook) await this.deps.validateWebhook(body.webhook, ['body', 'webhook']);
    return withTransaction(this.deps.pool, async (db) => {
      const row = await this.deps.store.lock(cronId, db);
      if (!row) throw notFound(`Cron with ID ${cronId} not found`);
      const schedule = {
        schedule: body.schedule?.trim() ?? row.schedule,
        timezone: body.timezone !== undefined ? body.timezone : row.timezone,
      };
      if (body.schedule !== undefined || body.timezone !== undefined) validateSchedule(schedule);
      const endTime = body.end_time !== undefined ? parseEndTime(body.end_time) : row.end_time;
      const enabled = body.enabled ?? row.enabled;
      const retimed =
        body.schedule !== undefined ||
        body.timezone !== undefined ||
        body.end_time !== undefined ||
        (enabled && !row.enabled);
      return this.deps.store.update(
        cronId,
        {
          ...schedule,
          end_time: endTime,
          enabled,
          on_run_completed:
            row.thread_id === null ? (body.on_run_completed ?? row.on_run_completed) : null,
          payload: { ...row.payload, ...pickPayload(body) },
          metadata: body.metadata ?? row.metadata,
          next_run_date: retimed ? nextRunDate(schedule, new Date(), endTime) : row.next_run_date,
        },
        db,
      );
    });
  }

  async delete(cronId: string): Promise<void> {
    if (!(await this.deps.store.delete(cronId))) throw notFound(`Cron with ID ${cronId} not found`);
  }

  private async filter(body: CronCountBody): Promise<CronFilter> {
    return {
      assistant_id: body.assistant_id ? await this.filterAssistant(body.assistant_id) : undefined,
      thread_id: body.thread_id ?? undefined,
      enabled: body.enabled ?? undefined,
      metadata: body.metadata ?? undefined,
    };
  }

  private async filterAssistant(idOrGraph: string): Promise<string> {
    try {
      return this.deps.assistants.resolveId(idOrGraph);
    } catch (err) {
      if (err instanceof AppError) throw invalid(['body', 'assistant_id'], err.message);
      throw err;
    }
  }

  async search(
    body: CronSearchBody,
    auth?: AuthFilter,
  ): Promise<{ rows: Partial<CronRow>[]; total: number }> {
    const filter = { ...(await this.filter(body)), auth };
    const select = (body.select?.filter((f) => f !== 'now') ?? CRON_FIELDS) as CronField[];
    const [rows, total] = await Promise.all([
      this.deps.store.search({
        ...filter,
        limit: body.limit ?? 10,
        offset: body.offset ?? 0,
        sortBy: body.sort_by ?? 'created_at',
        sortOrder: body.sort_order ?? 'desc',
        select: select.length ? select : ['cron_id'],
      }),
      this.deps.store.count(filter),
    ]);
    return { rows, total };
  }

  async count(body: CronCountBody, auth?: AuthFilter): Promise<number> {
    return this.deps.store.count({ ...(await this.filter(body)), auth });
  }
}
