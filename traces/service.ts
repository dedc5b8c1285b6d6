// The trace store's domain service: ingest (creates and updates in any order), reads, the
// thread view, feedback (and its presigned tokens) and retention. Every call acts for one tenant
// (workspace), but the use of a presigned token, whose token names its workspace.
import { randomUUID } from 'node:crypto';
import { SqlParams } from '../common/db/index.js';
import { AppError, conflict, invalid, notFound } from '../common/errors/index.js';
import type { Logger } from '../common/logging/index.js';
import { compileFilter } from './filter.js';
import {
  mergePatches,
  runOut,
  toPatch,
  toRecord,
  wireTime,
  type FeedbackRecord,
  type RunPatch,
  type RunRecord,
  type SessionRow,
  type StoredFeedback,
  type StoredRun,
} from './model.js';
import type {
  FeedbackCreate,
  FeedbackUpdate,
  RunCreate,
  RunQueryBody,
  RunUpdate,
  TokenCreate,
  TokenFeedback,
} from './schemas.js';
import type { TraceStore } from './store.js';

export const DEFAULT_SESSION = 'default';

export interface TraceSettings {
  /** Retention of workspaces that set none. */
  defaultTtlDays: number;
  /** Runs deleted per statement by the retention sweep. */
  sweepBatch: number;
}

export const DEFAULT_TRACE_SETTINGS: TraceSettings = { defaultTtlDays: 14, sweepBatch: 5000 };

/** Updates kept this long for a create that never comes. */
const PENDING_TTL_SECONDS = 3600;
/** A presigned token's life when its creator names none (the SDKs' default too). */
const DEFAULT_TOKEN_TTL_MS = 3 * 3_600_000;
/** LangSmith's source type of feedback recorded through a presigned token. */
const TOKEN_FEEDBACK_SOURCE = 'app';

export class TraceService {
  /** Session ids by tenant and name: sessions are never renamed or deleted. */
  private readonly sessionIds = new Map<string, string>();

  constructor(
    private readonly store: TraceStore,
    readonly settings: TraceSettings,
    private readonly logger: Logger,
  ) {}

  /** Ingests creates and updates (one SDK batch). Updates may precede their creates. */
  async ingest(tenantId: string, creates: RunCreate[], updates: RunUpdate[]): Promise<void> {
    // One row per id: later parts of the same run win, and an update of a run created in the
    // same batch is folded into its create.
    const createById = new Map<string, RunCreate>();
    for (const c of creates) {
      const id = c.id.toLowerCase();
      createById.set(id, { ...createById.get(id), ...c, id });
    }
    const standalone: RunUpdate[] = [];
    for (const u of updates) {
      const id = u.id?.toLowerCase();
      const create = id ? createById.get(id) : undefined;
      if (create) createById.set(id!, { ...create, ...definedFields(u), id: create.id });
      else standalone.push(u);
    }
    const records = await this.toRecords(tenantId, [...createById.values()]);
    if (records.length)
      await this.store.ensurePartitions(new Set(records.map((r) => utcDay(r.start_time))));
    const patches = mergePatches(standalone.map((u) => toPatch(u.id!, u)));
    if (!records.length && !patches.length) return;
    const { updated, early } = await this.store.ingestBatch(tenantId, records, patches);
    if (early.length) await this.store.updateRuns(tenantId, mergePatches(early));
    const missing = patches.filter((p) => !updated.has(p.id));
    if (missing.length) await this.awaitCreates(tenantId, missing);
  }

  /**
   * Keeps updates of runs not stored yet for their create. The pending row is committed before
   * the second look, and a create takes pending rows in the statement that stores it: when the
   * two race and neither sees the other, the sweep merges the update (mergeRacedUpdates).
   */
  private async awaitCreates(tenantId: string, missing: RunPatch[]): Promise<void> {
    await this.store.addPendingUpdates(tenantId, missing);
    const late = await this.store.updateRuns(tenantId, missing);
    if (late.size) await this.store.takePendingUpdates(tenantId, [...late]);
  }

  /** Applies pending updates whose run has been stored since (a create that raced them). */
  async mergeRacedUpdates(limit = 1000): Promise<number> {
    const byTenant = new Map<string, string[]>();
    for (const { tenant_id, id } of await this.store.pendingWithRuns(limit))
      byTenant.set(tenant_id, [...(byTenant.get(tenant_id) ?? []), id]);
    let merged = 0;
    for (const [tenantId, ids] of byTenant) {
      const patches = await this.store.takePendingUpdates(tenantId, ids);
      if (patches.length)
        merged += (await this.store.updateRuns(tenantId, mergePatches(patches))).size;
    }
    return merged;
  }

  private async toRecords(tenantId: string, creates: RunCreate[]): Promise<RunRecord[]> {
    if (!creates.length) return [];
    const sessions = await this.resolveSessions(tenantId, creates);
    // Children without a dotted order extend their parent's: from this batch, else stored.
    const byId = new Map(creates.map((c) => [c.id, c]));
    const missingParents = creates
      .filter((c) => !c.dotted_order && c.parent_run_id && !byId.has(c.parent_run_id.toLowerCase()))
      .map((c) => c.parent_run_id!.toLowerCase());
    const stored = await this.store.dottedOrders(tenantId, [...new Set(missingParents)]);
    const records = new Map<string, RunRecord>();
    const build = (c: RunCreate, depth = 0): RunRecord => {
      const done = records.get(c.id);
      if (done) return done;
      let parentDotted: string | undefined;
      const parentId = c.parent_run_id?.toLowerCase();
      if (!c.dotted_order && parentId) {
        const inBatch = byId.get(parentId);
        parentDotted =
          inBatch && depth < 1000 ? build(inBatch, depth + 1).dotted_order : stored.get(parentId);
      }
      const record = toRecord(c, sessions(c), parentDotted);
      records.set(c.id, record);
      return record;
    };
    return creates.map((c) => build(c));
  }

  /** The session of each create, creating the named sessions seen for the first time. */
  private async resolveSessions(
    tenantId: string,
    creates: RunCreate[],
  ): Promise<(c: RunCreate) => string> {
    const nameOf = (c: RunCreate) => c.session_name ?? DEFAULT_SESSION;
    const key = (name: string) => `${tenantId}\u0000${name}`;
    const unknownNames = new Set(
      creates.filter((c) => !c.session_id && !this.sessionIds.has(key(nameOf(c)))).map(nameOf),
    );
    const givenIds = [...new Set(creates.flatMap((c) => (c.session_id ? [c.session_id] : [])))];
    const uncachedIds = givenIds.filter((id) => !this.sessionIds.has(key(`#${id}`)));
    if (uncachedIds.length) {
      const existing = await this.store.sessionIds(tenantId, uncachedIds);
      // An id never seen becomes a project named after it (created on first use).
      await this.store.upsertSessions(
        tenantId,
        uncachedIds.filter((id) => !existing.has(id)).map((id) => ({ id, name: id })),
      );
      for (const id of uncachedIds) this.sessionIds.set(key(`#${id}`), id);
    }
    if (unknownNames.size) {
      const names = [...unknownNames];
      await this.store.upsertSessions(
        tenantId,
        names.map((name) => ({ id: randomUUID(), name })),
      );
      for (const row of await this.store.sessionsByName(tenantId, names))
        this.sessionIds.set(key(row.name), row.id);
    }
    return (c) => c.session_id ?? this.sessionIds.get(key(nameOf(c)))!;
  }

  async getRun(tenantId: string, id: string) {
    const run = await this.store.run(tenantId, id.toLowerCase());
    if (!run) throw notFound(`Run ${id} not found`);
    return runOut(run);
  }

  async queryRuns(tenantId: string, body: RunQueryBody) {
    const params = new SqlParams();
    const conditions = body.filter ? [compileFilter(body.filter, params)] : [];
    if (body.trace_filter) conditions.push(traceScoped(body.trace_filter, params));
    const limit = body.limit ?? 100;
    const offset = decodeCursor(body.cursor);
    const rows = await this.store.queryRuns(
      tenantId,
      {
        sessions: body.session ?? undefined,
        ids: body.id ?? undefined,
        trace: body.trace ?? undefined,
        parentRun: body.parent_run ?? undefined,
        runType: body.run_type ?? undefined,
        isRoot: body.is_root ?? undefined,
        error: body.error ?? undefined,
        startTime: body.start_time ?? undefined,
        endTime: body.end_time ?? undefined,
        threadId: body.thread_id ?? undefined,
        conditions,
        // A trace reads in execution order unless asked otherwise; everything else newest first.
        order: body.order ?? (body.trace ? 'asc' : 'desc'),
        limit: limit + 1,
        offset,
      },
      params,
    );
    const more = rows.length > limit;
    const page = rows.slice(0, limit).map((r) => selectFields(runOut(r), body.select));
    return { runs: page, cursors: { next: more ? encodeCursor(offset + limit) : null } };
  }

  /** A thread's runs in execution order, with its token and cost totals (its LLM runs'). */
  async thread(tenantId: string, threadId: string, sessionId?: string) {
    const runs = await this.store.threadRuns(tenantId, threadId, sessionId);
    if (!runs.length) throw notFound(`Thread ${threadId} has no traced runs`);
    const llm = runs.filter((r) => r.run_type === 'llm');
    const sum = (k: keyof StoredRun) => llm.reduce((s, r) => s + Number(r[k] ?? 0), 0);
    const roots = runs.filter((r) => r.is_root);
    return {
      thread_id: threadId,
      session_ids: [...new Set(runs.map((r) => r.session_id))],
      trace_ids: [...new Set(roots.map((r) => r.trace_id))],
      run_count: runs.length,
      start_time: runs[0]!.start_time,
      end_time: roots.reduce<string | null>(
        (end, r) => (r.end_time && (!end || r.end_time > end) ? r.end_time : end),
        null,
      ),
      prompt_tokens: sum('prompt_tokens'),
      completion_tokens: sum('completion_tokens'),
      total_tokens: sum('total_tokens'),
      prompt_cost: sum('prompt_cost'),
      completion_cost: sum('completion_cost'),
      total_cost: sum('total_cost'),
      runs: runs.map(runOut),
    };
  }

  async listSessions(
    tenantId: string,
    q: {
      name?: string;
      name_contains?: string;
      id?: string | string[];
      limit: number;
      offset: number;
    },
  ): Promise<SessionRow[]> {
    return this.store.listSessions(
      tenantId,
      {
        name: q.name,
        nameContains: q.name_contains,
        ids: q.id === undefined ? undefined : Array.isArray(q.id) ? q.id : [q.id],
      },
      q.limit,
      q.offset,
    );
  }

  async getSession(tenantId: string, id: string): Promise<SessionRow> {
    const session = await this.store.session(tenantId, id);
    if (!session) throw notFound(`Session ${id} not found`);
    return session;
  }

  async createSession(
    tenantId: string,
    body: { name: string; id?: string | null; description?: string | null; extra?: unknown },
    upsert: boolean,
  ): Promise<SessionRow> {
    const created = await this.store.createSession(
      tenantId,
      {
        id: body.id ?? randomUUID(),
        name: body.name,
        description: body.description ?? null,
        extra: body.extra ?? null,
      },
      upsert,
    );
    if (!created) throw conflict(`Session ${body.name} already exists`);
    return created;
  }

  /** Stores feedback (POST /feedback, multipart parts); a repeated id updates its feedback. */
  async createFeedback(tenantId: string, bodies: FeedbackCreate[]): Promise<StoredFeedback[]> {
    // One row per id (the statement may touch a row once): the last of a batch wins.
    const byId = new Map<string, FeedbackRecord>();
    for (const body of bodies) {
      const record = feedbackRecord(body);
      byId.set(record.id, record);
    }
    return this.store.upsertFeedback(tenantId, [...byId.values()]);
  }

  async getFeedback(tenantId: string, id: string): Promise<StoredFeedback> {
    const feedback = await this.store.feedback(tenantId, id.toLowerCase());
    if (!feedback) throw notFound(`Feedback ${id} not found`);
    return feedback;
  }

  /** `updateFeedback`: the fields given change. */
  async updateFeedback(
    tenantId: string,
    id: string,
    body: FeedbackUpdate,
  ): Promise<StoredFeedback> {
    const updated = await this.store.updateFeedback(tenantId, id.toLowerCase(), body);
    if (!updated) throw notFound(`Feedback ${id} not found`);
    return updated;
  }

  async deleteFeedback(tenantId: string, id: string): Promise<void> {
    if (!(await this.store.deleteFeedback(tenantId, id.toLowerCase())))
      throw notFound(`Feedback ${id} not found`);
  }

  listFeedback(
    tenantId: string,
    q: { run?: string[]; key?: string[]; source?: string[]; limit: number; offset: number },
  ): Promise<StoredFeedback[]> {
    return this.store.listFeedback(
      tenantId,
      { runs: q.run?.map((id) => id.toLowerCase()), keys: q.key, sources: q.source },
      q.limit,
      q.offset,
    );
  }

  /**
   * Presigned tokens for feedback of one key on one run; `urlOf` makes a token's URL. The run
   * need not be stored yet: its trace may still be in the tracer's queue.
   */
  async createFeedbackTokens(
    tenantId: string,
    bodies: TokenCreate[],
    urlOf: (id: string) => string,
  ): Promise<{ id: string; url: string; expires_at: string }[]> {
    const now = Date.now();
    const tokens = bodies.map((body, i) => ({
      id: randomUUID(),
      run_id: body.run_id.toLowerCase(),
      feedback_key: body.feedback_key,
      expires_at: tokenExpiry(body, now, bodies.length > 1 ? [i] : []),
    }));
    const rows = await this.store.createFeedbackTokens(tenantId, tokens);
    const expiry = new Map(rows.map((r) => [r.id, r.expires_at]));
    return tokens.map((t) => ({ id: t.id, url: urlOf(t.id), expires_at: expiry.get(t.id)! }));
  }

  /** A run's presigned tokens (`listPresignedFeedbackTokens`), with their URLs. */
  async listFeedbackTokens(
    tenantId: string,
    q: { run_id: string; limit: number; offset: number },
    urlOf: (id: string) => string,
  ): Promise<{ id: string; url: string; expires_at: string }[]> {
    const rows = await this.store.listFeedbackTokens(
      tenantId,
      q.run_id.toLowerCase(),
      q.limit,
      q.offset,
    );
    return rows.map((r) => ({ id: r.id, url: urlOf(r.id), expires_at: r.expires_at }));
  }

  /** Records one feedback through a presigned token, for its run and key, in its workspace. */
  async feedbackWithToken(tokenId: string, body: TokenFeedback): Promise<StoredFeedback> {
    const token = await this.store.feedbackToken(tokenId.toLowerCase());
    if (!token) throw notFound(`Feedback token ${tokenId} not found`);
    if (token.expired)
      throw new AppError('NOT_FOUND', `Feedback token ${tokenId} expired at ${token.expires_at}`, {
        status: 410,
      });
    const [stored] = await this.createFeedback(token.tenant_id, [
      {
        run_id: token.run_id,
        key: token.feedback_key,
        score: body.score,
        value: body.value,
        comment: body.comment,
        correction: body.correction,
        feedback_source: { type: TOKEN_FEEDBACK_SOURCE, metadata: body.metadata ?? {} },
      },
    ]);
    return stored!;
  }

  async retention(tenantId: string) {
    const ttl = await this.store.retention(tenantId);
    return { ttl_days: ttl ?? this.settings.defaultTtlDays, default: ttl === undefined };
  }

  async setRetention(tenantId: string, ttlDays: number) {
    await this.store.setRetention(tenantId, ttlDays);
    return { ttl_days: ttlDays, default: false };
  }

  /**
   * One retention pass: drops whole day partitions past every workspace's retention, then
   * deletes one batch of runs past their own workspace's shorter retention.
   */
  async sweepExpired(): Promise<number> {
    const longest = await this.store.longestTtlDays(this.settings.defaultTtlDays);
    const cutoff = new Date(Date.now() - longest * 86_400_000).toISOString().slice(0, 10);
    let swept = 0;
    for (const { day, table } of await this.store.partitionDays()) {
      // A partition holds one day: all of it is expired once the next day is.
      if (day < cutoff) {
        await this.store.dropPartition(table, day);
        this.logger.info({ day }, 'dropped expired trace partition');
        swept++;
      }
    }
    swept += await this.store.deleteExpired(this.settings.defaultTtlDays, this.settings.sweepBatch);
    const merged = await this.mergeRacedUpdates();
    if (merged) this.logger.info({ merged }, 'merged updates that raced their creates');
    swept += await this.store.deleteStalePending(PENDING_TTL_SECONDS);
    swept += await this.store.deleteStaleFeedback(
      this.settings.defaultTtlDays,
      this.settings.sweepBatch,
    );
    return swept;
  }
}

function feedbackRecord(body: FeedbackCreate): FeedbackRecord {
  return {
    id: (body.id ?? randomUUID()).toLowerCase(),
    run_id: body.run_id.toLowerCase(),
    trace_id: body.trace_id?.toLowerCase() ?? null,
    session_id: body.session_id?.toLowerCase() ?? null,
    key: body.key,
    score: body.score ?? null,
    value: body.value ?? null,
    comment: body.comment ?? null,
    correction: body.correction ?? null,
    feedback_source: body.feedback_source ?? null,
    created_at: wireTime(body.created_at),
  };
}

/** A token's expiry: `expires_at`, else now plus `expires_in`, else the default. */
function tokenExpiry(body: TokenCreate, now: number, loc: number[]): string {
  if (body.expires_at) {
    // The text goes to the store as sent, so its microseconds are kept.
    const at = wireTime(body.expires_at)!;
    if (Date.parse(at) <= now)
      throw invalid(['body', ...loc, 'expires_at'], 'expires_at is in the past');
    return at;
  }
  const { days = 0, hours = 0, minutes = 0 } = body.expires_in ?? {};
  const ms = ((days * 24 + hours) * 60 + minutes) * 60_000;
  return new Date(now + (ms > 0 ? ms : DEFAULT_TOKEN_TTL_MS)).toISOString();
}

function definedFields(u: RunUpdate): Partial<RunCreate> {
  return Object.fromEntries(Object.entries(u).filter(([, v]) => v !== undefined && v !== null));
}

const utcDay = (iso: string) => new Date(iso).toISOString().slice(0, 10);

function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

function decodeCursor(cursor: string | null | undefined): number {
  if (!cursor) return 0;
  const match = /^o:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  return match ? Number(match[1]) : 0;
}

/** `trace_filter`: runs of traces whose root matches. */
function traceScoped(filter: string, params: SqlParams): string {
  const inner = compileFilter(filter, params).replaceAll('r.', 'root.');
  return `EXISTS (SELECT 1 FROM trace_runs root WHERE root.tenant_id = r.tenant_id
    AND root.id = r.trace_id AND ${inner})`;
}

function selectFields<T extends Record<string, unknown>>(
  run: T,
  select?: string[] | null,
): Partial<T> {
  if (!select?.length) return run;
  const out: Record<string, unknown> = {};
  for (const k of ['id', ...select]) if (k in run) out[k] = run[k];
  return out as Partial<T>;
}
