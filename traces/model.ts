// The run data format: what a stored run holds, and how fields a client left out are derived
// (trace_id, dotted_order, parent_run_ids, is_root, status, token counts, thread id).
import { decodeStoredText } from '../common/db/index.js';
import type { RunCreate, RunUpdate } from './schemas.js';

/** A run as written to the store (json_to_recordset input: absent fields are null). */
export interface RunRecord {
  id: string;
  session_id: string;
  trace_id: string;
  parent_run_id: string | null;
  parent_run_ids: string[];
  is_root: boolean;
  dotted_order: string;
  name: string;
  run_type: string;
  start_time: string;
  end_time: string | null;
  status: string;
  inputs: unknown;
  outputs: unknown;
  error: string | null;
  extra: unknown;
  events: unknown;
  tags: string[];
  serialized: unknown;
  reference_example_id: string | null;
  trace_tier: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  prompt_cost: number | null;
  completion_cost: number | null;
  total_cost: number | null;
  first_token_time: string | null;
  thread_id: string | null;
}

/** An update: only the fields it sets (undefined ones are left as stored). */
export type RunPatch = { id: string } & Partial<
  Pick<
    RunRecord,
    | 'end_time'
    | 'inputs'
    | 'outputs'
    | 'error'
    | 'extra'
    | 'events'
    | 'tags'
    | 'reference_example_id'
    | 'prompt_tokens'
    | 'completion_tokens'
    | 'total_tokens'
    | 'prompt_cost'
    | 'completion_cost'
    | 'total_cost'
    | 'first_token_time'
    | 'thread_id'
  >
>;

/** A run as read from the store. */
export interface StoredRun extends Omit<RunRecord, 'start_time'> {
  tenant_id: string;
  start_time: string;
  feedback_stats: FeedbackStats | null;
}

/**
 * A run's feedback by key (LangSmith's `feedback_stats`): how many, the mean of the numeric
 * scores (null when none has one) and the count of each string value.
 */
export type FeedbackStats = Record<
  string,
  { n: number; avg: number | null; values: Record<string, number> }
>;

/** A feedback as written to the store (jsonb_to_recordset input). */
export interface FeedbackRecord {
  id: string;
  run_id: string;
  trace_id: string | null;
  session_id: string | null;
  key: string;
  score: number | null;
  value: unknown;
  comment: string | null;
  correction: unknown;
  feedback_source: unknown;
  created_at: string | null;
}

/** A feedback as read from the store, as it goes to the wire. */
export interface StoredFeedback extends Omit<FeedbackRecord, 'created_at'> {
  created_at: string;
  modified_at: string;
}

/** A presigned feedback token as stored. */
export interface FeedbackToken {
  id: string;
  tenant_id: string;
  run_id: string;
  feedback_key: string;
  expires_at: string;
  expired: boolean;
}

/**
 * The CSV dialect of `TraceStore.copyExportRows`, which the export's encoder reads. Tab-separated
 * with a control character as the quote: JSON text holds neither (PostgreSQL's JSON output
 * escapes control characters), so its fields go out unquoted and unescaped, where `,` and `"`
 * quoted nearly every one and doubled every quote in it. Any value is still written exactly:
 * one holding a tab, a line break or the quote is quoted, its quotes doubled.
 */
export const EXPORT_CSV = { delimiter: '\t', quote: '\x01' } as const;

/**
 * A run as bulk export reads it (the exportable fields): ids as text, JSON as its text, times
 * and token counts as decimal text (epoch microseconds; int64), costs as numbers.
 */
export interface ExportedRun {
  id: string;
  tenant_id: string;
  session_id: string;
  trace_id: string;
  parent_run_id: string | null;
  parent_run_ids: string[];
  reference_example_id: string | null;
  name: string;
  run_type: string;
  start_time: string;
  end_time: string | null;
  status: string;
  is_root: boolean;
  dotted_order: string;
  trace_tier: string | null;
  inputs: string | null;
  outputs: string | null;
  error: string | null;
  extra: string | null;
  events: string | null;
  tags: string[];
  feedback_stats: string | null;
  total_tokens: string | null;
  prompt_tokens: string | null;
  completion_tokens: string | null;
  total_cost: number | null;
  prompt_cost: number | null;
  completion_cost: number | null;
  first_token_time: string | null;
}

export interface SessionRow {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  extra: unknown;
  reference_dataset_id: string | null;
  start_time: string;
  end_time: string | null;
}

/** Metadata keys that name a thread (LangSmith accepts all three). */
export const THREAD_KEYS = ['thread_id', 'session_id', 'conversation_id'] as const;

/**
 * A time as the store takes it: epoch milliseconds (JS SDK) or ISO 8601 text (Python SDK, with
 * microseconds kept); text without a zone is UTC, as LangSmith reads it.
 */
export function wireTime(value: string | number | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return new Date(value).toISOString();
  return /(?:Z|[+-]\d{2}:?\d{2})$/i.test(value) ? value : `${value}Z`;
}

/** The `YYYYMMDDTHHMMSSffffffZ` stamp of a dotted-order segment. */
export function dottedStamp(iso: string): string {
  const d = new Date(iso);
  const micros = /\.(\d+)/.exec(iso)?.[1]?.padEnd(6, '0').slice(0, 6) ?? '000000';
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return (
    `${p(d.getUTCFullYear(), 4)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}T` +
    `${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}${micros}Z`
  );
}

/** The run ids of a dotted order, root first (each segment ends with its run's uuid). */
export function dottedIds(dotted: string): string[] {
  return dotted.split('.').map((segment) => segment.slice(-36).toLowerCase());
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

interface Usage {
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  prompt_cost: number | null;
  completion_cost: number | null;
  total_cost: number | null;
}

/** Usage in one of the shapes LangChain and the SDKs report it. */
function usageFrom(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const o = u as Record<string, unknown>;
  const prompt = num(o.input_tokens) ?? num(o.prompt_tokens) ?? num(o.promptTokens);
  const completion = num(o.output_tokens) ?? num(o.completion_tokens) ?? num(o.completionTokens);
  const total = num(o.total_tokens) ?? num(o.totalTokens);
  if (prompt === null && completion === null && total === null) return undefined;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: total ?? (prompt ?? 0) + (completion ?? 0),
    prompt_cost: num(o.input_cost) ?? num(o.prompt_cost),
    completion_cost: num(o.output_cost) ?? num(o.completion_cost),
    total_cost: num(o.total_cost),
  };
}

function sumUsage(list: Usage[]): Usage | undefined {
  if (!list.length) return undefined;
  const add = (k: keyof Usage) =>
    list.some((u) => u[k] !== null) ? list.reduce((s, u) => s + (u[k] ?? 0), 0) : null;
  return {
    prompt_tokens: add('prompt_tokens'),
    completion_tokens: add('completion_tokens'),
    total_tokens: add('total_tokens'),
    prompt_cost: add('prompt_cost'),
    completion_cost: add('completion_cost'),
    total_cost: add('total_cost'),
  };
}

/**
 * Token counts of an LLM run's outputs: `usage_metadata` (LangChain messages, SDK wrappers),
 * `llm_output.token_usage` (OpenAI-style), or per generation message.
 */
export function usageOfOutputs(outputs: unknown, extra: unknown): Usage | undefined {
  const o = (outputs ?? {}) as Record<string, unknown>;
  const direct = usageFrom(o.usage_metadata);
  if (direct) return direct;
  const llm = o.llm_output as Record<string, unknown> | undefined;
  const fromLlm =
    usageFrom(llm?.token_usage) ?? usageFrom(llm?.tokenUsage) ?? usageFrom(llm?.usage);
  if (fromLlm) return fromLlm;
  const perMessage: Usage[] = [];
  const generations = Array.isArray(o.generations) ? (o.generations as unknown[]).flat(2) : [];
  for (const g of generations) {
    const message = (g as { message?: Record<string, unknown> } | null)?.message;
    const kwargs = message?.kwargs as Record<string, unknown> | undefined;
    const u = usageFrom(message?.usage_metadata) ?? usageFrom(kwargs?.usage_metadata);
    if (u) perMessage.push(u);
  }
  const summed = sumUsage(perMessage);
  if (summed) return summed;
  const metadata = (extra as { metadata?: Record<string, unknown> } | null)?.metadata;
  return usageFrom(metadata?.usage_metadata);
}

function threadOf(extra: unknown): string | null {
  const metadata = (extra as { metadata?: Record<string, unknown> } | null)?.metadata;
  if (!metadata) return null;
  for (const key of THREAD_KEYS) {
    const v = metadata[key];
    if (typeof v === 'string' && v) return v;
  }
  return null;
}

/** Token and cost fields: what the client sent, else what its outputs report. */
function tokenFields(run: RunCreate | RunUpdate): Usage | undefined {
  const sent: Usage = {
    prompt_tokens: num(run.prompt_tokens),
    completion_tokens: num(run.completion_tokens),
    total_tokens: num(run.total_tokens),
    prompt_cost: num(run.prompt_cost),
    completion_cost: num(run.completion_cost),
    total_cost: num(run.total_cost),
  };
  const derived = usageOfOutputs(run.outputs, run.extra);
  if (!derived && Object.values(sent).every((v) => v === null)) return undefined;
  const pick = (k: keyof Usage) => sent[k] ?? derived?.[k] ?? null;
  const usage = {
    prompt_tokens: pick('prompt_tokens'),
    completion_tokens: pick('completion_tokens'),
    total_tokens: pick('total_tokens'),
    prompt_cost: pick('prompt_cost'),
    completion_cost: pick('completion_cost'),
    total_cost: pick('total_cost'),
  };
  if (usage.total_cost === null && (usage.prompt_cost !== null || usage.completion_cost !== null))
    usage.total_cost = (usage.prompt_cost ?? 0) + (usage.completion_cost ?? 0);
  return usage;
}

const errorText = (e: unknown): string | null =>
  e === null || e === undefined ? null : typeof e === 'string' ? e : JSON.stringify(e);

/**
 * A create as a stored record. `parentDotted`: the parent's dotted order when the client sent
 * none of its own; `sessionId`: the resolved project.
 */
export function toRecord(
  run: RunCreate,
  sessionId: string,
  parentDotted: string | undefined,
): RunRecord {
  const id = run.id.toLowerCase();
  const start = wireTime(run.start_time) ?? new Date().toISOString();
  let dotted = run.dotted_order;
  if (!dotted) {
    const own = `${dottedStamp(start)}${id}`;
    dotted = parentDotted ? `${parentDotted}.${own}` : own;
  }
  const ids = dottedIds(dotted);
  const parent = run.parent_run_id?.toLowerCase() ?? (ids.length > 1 ? ids.at(-2)! : null);
  const end = wireTime(run.end_time);
  const error = errorText(run.error);
  const usage = tokenFields(run);
  return {
    id,
    session_id: sessionId,
    trace_id: run.trace_id?.toLowerCase() ?? ids[0] ?? id,
    parent_run_id: parent,
    parent_run_ids: ids.slice(0, -1),
    is_root: parent === null,
    dotted_order: dotted,
    name: run.name ?? 'Unnamed',
    run_type: run.run_type ?? 'chain',
    start_time: start,
    end_time: end,
    status: run.status ?? (error !== null ? 'error' : end ? 'success' : 'pending'),
    inputs: run.inputs ?? null,
    outputs: run.outputs ?? null,
    error,
    extra: run.extra ?? null,
    events: run.events ?? null,
    tags: run.tags ?? [],
    serialized: run.serialized ?? null,
    reference_example_id: run.reference_example_id ?? null,
    trace_tier: run.trace_tier ?? null,
    prompt_tokens: usage?.prompt_tokens ?? null,
    completion_tokens: usage?.completion_tokens ?? null,
    total_tokens: usage?.total_tokens ?? null,
    prompt_cost: usage?.prompt_cost ?? null,
    completion_cost: usage?.completion_cost ?? null,
    total_cost: usage?.total_cost ?? null,
    first_token_time: wireTime(run.first_token_time),
    thread_id: threadOf(run.extra),
  };
}

/** An update as a patch of only the fields it carries. */
export function toPatch(id: string, run: RunUpdate): RunPatch {
  const patch: RunPatch = { id: id.toLowerCase() };
  if (run.end_time !== undefined && run.end_time !== null) patch.end_time = wireTime(run.end_time);
  if (run.inputs !== undefined) patch.inputs = run.inputs;
  if (run.outputs !== undefined) patch.outputs = run.outputs;
  if (run.error !== undefined && run.error !== null) patch.error = errorText(run.error);
  if (run.extra !== undefined) {
    patch.extra = run.extra;
    const thread = threadOf(run.extra);
    if (thread) patch.thread_id = thread;
  }
  if (run.events !== undefined) patch.events = run.events;
  if (run.tags) patch.tags = run.tags;
  if (run.reference_example_id) patch.reference_example_id = run.reference_example_id;
  if (run.first_token_time) patch.first_token_time = wireTime(run.first_token_time);
  const usage = tokenFields(run);
  if (usage)
    for (const k of Object.keys(usage) as (keyof Usage)[]) {
      const v = usage[k];
      if (v !== null) patch[k] = v;
    }
  return patch;
}

/** Later updates win field by field. */
export function mergePatches(patches: RunPatch[]): RunPatch[] {
  const byId = new Map<string, RunPatch>();
  for (const p of patches) byId.set(p.id, { ...byId.get(p.id), ...p });
  return [...byId.values()];
}

/** A run on the wire (LangSmith's Run schema). */
export function runOut(run: StoredRun) {
  // thread_id is the store's index of extra.metadata, not a field of the format.
  const rest: Partial<StoredRun> = { ...run };
  delete rest.thread_id;
  return {
    ...(rest as Omit<StoredRun, 'thread_id'>),
    // Text columns hold NUL and lone surrogates encoded, as the JSON they came from (jsonb()).
    name: decodeStoredText(run.name),
    run_type: decodeStoredText(run.run_type),
    status: decodeStoredText(run.status),
    error: run.error === null ? null : decodeStoredText(run.error),
    trace_tier: run.trace_tier === null ? null : decodeStoredText(run.trace_tier),
    tags: run.tags.map(decodeStoredText),
    child_run_ids: null,
    direct_child_run_ids: null,
    feedback_stats: run.feedback_stats ?? null,
    in_dataset: run.reference_example_id !== null,
    app_path: null,
  };
}
