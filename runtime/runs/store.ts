// SQL for runs and their event log. Nothing outside this file writes these tables.
import {
  encodeJsonText,
  jsonb,
  leaseLost,
  withTransaction,
  type RunFence,
  type ColumnRead,
  type EmbeddedRead,
  type EmbeddedStatement,
  type Pool,
  type PoolClient,
} from '../../common/db/index.js';

export type RunStatus = 'pending' | 'running' | 'success' | 'error' | 'timeout' | 'interrupted';

export interface RunRow {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: Date;
  updated_at: Date;
  status: RunStatus;
  metadata: Record<string, unknown>;
  kwargs: Record<string, unknown>;
  multitask_strategy: string;
  attempt: number;
  worker_id: string | null;
  lease_expires_at: Date | null;
  cancel_action: 'interrupt' | 'rollback' | null;
  run_started_at: Date | null;
  run_ended_at: Date | null;
  error: { error: string; message: string } | null;
}

/** A run started through the thread protocol, as its thread's event stream follows it. */
export interface ProtocolRunRef {
  run_id: string;
  created_us: string;
  status: RunStatus;
  /** Its place among the thread's protocol runs, once it started executing. */
  index: number | undefined;
}

/** A protocol run's columns, as `protocolRunRef` reads them. */
const PROTOCOL_RUN_COLUMNS = `run_id, status, kwargs->>'protocol_index' AS protocol_index,
  (extract(epoch FROM created_at) * 1000000)::bigint::text AS created_us`;

interface ProtocolRunRow {
  run_id: string;
  created_us: string;
  status: RunStatus;
  protocol_index: string | null;
}

function protocolRunRef(row: ProtocolRunRow): ProtocolRunRef {
  const { run_id, created_us, status, protocol_index } = row;
  return {
    run_id,
    created_us,
    status,
    index: protocol_index === null ? undefined : Number(protocol_index),
  };
}

/** Every column of `runs`, named: a prepared statement of `*` breaks when a column is added. */
const RUN_COLUMNS =
  'run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs, multitask_strategy, attempt, worker_id, lease_expires_at, cancel_action, run_started_at, run_ended_at, error';
const RUN_COLUMNS_OF_RUNS = RUN_COLUMNS.split(', ')
  .map((column) => `runs.${column}`)
  .join(', ');

/**
 * The lease a worker holds on a run it executes: the run, the worker and the attempt (raised by
 * every claim, so it tells two leases of one worker apart too). Every write of the run names it.
 */
export interface RunLease {
  runId: string;
  workerId: string;
  attempt: number;
}

/**
 * The highest place a thread's (`$2`) protocol runs took so far, -1 if none (see
 * `RunStore.protocolIndex`).
 */
const PROTOCOL_PRIOR_SQL = `SELECT coalesce(max((kwargs->>'protocol_index')::bigint), -1) AS index
  FROM runs WHERE thread_id = $2 AND kwargs ? 'protocol_index'`;

/** `lease` holds: the run is still running under it. Parameters from `$at`: worker, attempt. */
function leaseHeldSql(at: number): string {
  return `worker_id = $${at} AND attempt = $${at + 1} AND status = 'running'`;
}

/** A new run's row, as `insert` takes it. */
export interface NewRun {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  metadata: Record<string, unknown>;
  /**
   * Metadata under the thread's (its assistant's): the run's `metadata` is this, then its thread's
   * as the statement finds it, then `metadata`, as the official servers merge them.
   */
  inherited_metadata?: Record<string, unknown>;
  kwargs: Record<string, unknown>;
  multitask_strategy: string;
  after_seconds: number;
}

/** A run's lease as its fenced writes take it; `onLost` as in RunFence. */
export type RunFencing = RunLease & { onLost?: () => void };

/** The worker a new run is leased to when it can start at once (see `RunStore.insert`). */
export interface RunStart {
  workerId: string;
  leaseSeconds: number;
}

/** A run `insert` wrote; `read`: the columns of its embedded read, when the run started. */
export interface InsertedRun {
  run: RunRow;
  read?: Record<string, unknown>;
  /** A protocol run's: the highest place its thread's protocol runs took before it (-1: none). */
  protocolPrior?: number;
  /** A protocol run's creation time in µs since the epoch (a thread stream's cursor unit). */
  createdUs?: string;
  /** With a thread step that reports it: whether the statement created the thread. */
  threadCreated?: boolean;
}

/**
 * `requestCancel` with `nowait` met a run row another transaction holds: one that ends or writes
 * for that run, and may next want the thread the caller has locked.
 */
export function isCancelLockBusy(err: unknown): boolean {
  return (err as { code?: string }).code === '55P03';
}

/** A run inserted running lost the race for its thread to a claimed one: insert it queued. */
export function isRunningConflict(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string };
  return e.code === '23505' && e.constraint === 'runs_one_running_per_thread';
}

export interface RunEvent {
  seq: number;
  event: string;
  data: unknown;
  /** `data` as JSON, when it is already known: the log and streams use it as it is. */
  json?: string;
}

/** How much of a run's log one read returns (see `RunStore.eventsAfter`). */
export interface EventPageSize {
  rows: number;
  bytes: number;
}

export const EVENT_PAGE: EventPageSize = { rows: 500, bytes: 1024 * 1024 };

export interface EventPage {
  events: RunEvent[];
  /** The log may go on after these events: read again from the last one. */
  more: boolean;
}

/** Event data as JSON (`null` for none). */
export function encodeData(data: unknown): string {
  return JSON.stringify(data) ?? 'null';
}

/** An event's data as JSON: the text it carries, else encoded now. */
export function dataJson(event: RunEvent): string {
  return event.json ?? encodeData(event.data);
}

/** Bounds on one row of the log: a batch larger than either is written as several rows. */
const LOG_ROW = { events: 500, chars: 512 * 1024 };

/**
 * A batch of events as the JSON array of log rows the INSERT reads (see `appendEventsCtes`):
 * each `{first, last, events: [[seq, event, data], ...]}`, split so that a row stays within
 * `LOG_ROW` (a larger event alone), and each event's data encoded once.
 * json_to_recordset() refuses NUL and lone surrogate escapes: those are stored encoded (jsonb()).
 */
export function eventsJson(events: RunEvent[]): string {
  const rows: string[] = [];
  let items: string[] = [];
  let chars = 0;
  let first = 0;
  let last = 0;
  const close = () => {
    if (items.length) rows.push(`{"first":${first},"last":${last},"events":[${items.join(',')}]}`);
    items = [];
    chars = 0;
  };
  for (const e of events) {
    const item = `[${e.seq},${JSON.stringify(e.event)},${dataJson(e)}]`;
    if (items.length >= LOG_ROW.events || (items.length && chars + item.length > LOG_ROW.chars))
      close();
    if (!items.length) first = e.seq;
    items.push(item);
    chars += item.length;
    last = e.seq;
  }
  close();
  return encodeJsonText(`[${rows.join(',')}]`);
}

/**
 * A log row's events after `afterSeq`, appended to `into` while their seqs increase: rows may
 * overlap (a batch written again after its statement's outcome was lost), and an event is
 * taken once.
 */
function takeEvents(
  row: { events: [number, string, unknown][] },
  afterSeq: number,
  into: RunEvent[],
): void {
  let last = into.at(-1)?.seq ?? afterSeq;
  for (const [seq, event, data] of row.events) {
    if (seq <= last) continue;
    into.push({ seq, event, data });
    last = seq;
  }
}

type Queryable = Pool | PoolClient;

/** Called inside the transaction that gives runs their final status (the webhook outbox). */
export type RunsFinishedHook = (runs: RunRow[], db: PoolClient) => Promise<void>;

/**
 * Two CTEs that append a run's events, for statements that write events beside other work:
 * `added` inserts the log rows `$<events>` (eventsJson) for run `$1`; `woken` (one row once they
 * are in) notifies `$<channel>` with `$<payload>` when `notifyHere`, else only names them, for a
 * NOTIFY sent after the commit (see Notifier.notifyCommitted).
 */
function appendEventsCtes(
  events: number,
  channel: number,
  payload: number,
  notifyHere: boolean,
  onlyWith?: string,
): string {
  // `onlyWith`: a CTE that may be empty; then no event is written and no NOTIFY sent.
  const gate = onlyWith ? ` WHERE EXISTS (SELECT 1 FROM ${onlyWith})` : '';
  const wake = notifyHere
    ? `pg_notify($${channel}, $${payload})`
    : `$${channel}::text AS channel, $${payload}::text AS payload`;
  // A batch written again (its first try's outcome unknown) starts where it did: the longer
  // row stays. Readers take each seq once, so overlapping rows never repeat an event.
  return `added AS (
       INSERT INTO run_event_batches AS b (run_id, first_seq, last_seq, events)
       SELECT $1, e.first, e.last, e.events FROM json_to_recordset($${events}::json) AS e(first integer, last integer, events json)${gate}
       ON CONFLICT (run_id, first_seq) DO UPDATE SET last_seq = excluded.last_seq, events = excluded.events
         WHERE b.last_seq < excluded.last_seq
       RETURNING 1),
     woken AS (SELECT ${wake} FROM (SELECT count(*) FROM added) AS n${gate})`;
}

/** Moves an embedded read's `columns` out of a returned run row, into a row of their own. */
function takeColumns(row: object, columns: readonly string[]): Record<string, unknown> {
  const source = row as Record<string, unknown>;
  const taken: Record<string, unknown> = {};
  for (const column of columns) {
    taken[column] = source[column];
    delete source[column];
  }
  return taken;
}

/** Sends a NOTIFY for a change already committed (Notifier.notifyCommitted). */
export type NotifyCommitted = (channel: string, payload: string) => void;

/** Events for a run's log and the NOTIFY that announces them once they commit. */
type EventBatch = { events: RunEvent[]; notify: { channel: string; payload: string } };

/**
 * A run's final status: `$1` run id, `$2` status, `$3` error; with `leaseAt`, only while the
 * lease whose worker and attempt are `$leaseAt` and the next parameter holds.
 */
function finishRunSql(leaseAt?: number): string {
  return `UPDATE runs SET status = $2, error = $3, run_ended_at = now(), updated_at = now(),
     worker_id = NULL, lease_expires_at = NULL
   WHERE run_id = $1${leaseAt ? ` AND ${leaseHeldSql(leaseAt)}` : ''} RETURNING ${RUN_COLUMNS}`;
}

/** What a statement that finishes a run under its lease writes only when it did. */
const FINISHED = 'EXISTS (SELECT 1 FROM finished)';

/**
 * One statement: the run's final status, its closing events and their NOTIFY, and `embedded`
 * (other stores' statements, as CTEs `embedded_<i>`), ending with `select ... FROM woken`. With
 * `lease`, nothing is written unless it holds, and no row comes back.
 */
function finishWith(
  runId: string,
  status: RunStatus,
  error: { error: string; message: string } | null,
  closing: EventBatch,
  embedded: EmbeddedStatement[],
  select: string,
  notifyHere: boolean,
  lease?: RunLease,
): [string, unknown[]] {
  const values: unknown[] = [
    runId,
    status,
    error && jsonb(error),
    eventsJson(closing.events),
    closing.notify.channel,
    closing.notify.payload,
    ...(lease ? [lease.workerId, lease.attempt] : []),
  ];
  const ctes = embedded.map((statement, i) => {
    const cte = `embedded_${i} AS (${statement.sql(values.length + 1, lease && FINISHED)})`;
    values.push(...statement.values);
    return cte;
  });
  const finish = finishRunSql(lease && 7);
  return [
    `WITH finished AS (${finish}), ${appendEventsCtes(4, 5, 6, notifyHere, lease && 'finished')}, ${ctes.join(', ')}
     ${select} FROM woken`,
    values,
  ];
}

export class RunStore {
  /**
   * `notifyCommitted`: how a statement that runs on its own (not in a caller's transaction)
   * announces its events, once it has committed; without it, statements NOTIFY themselves.
   */
  constructor(
    private readonly pool: Pool,
    private readonly onFinished?: RunsFinishedHook,
    private readonly notifyCommitted?: NotifyCommitted,
  ) {}

  /** Whether a statement on `db` sends its NOTIFY itself: inside a transaction it must. */
  private notifiesItself(db: Queryable): boolean {
    return !this.notifyCommitted || db !== this.pool;
  }

  /** After a statement that did not NOTIFY itself committed: send it now. */
  private announce(notifyHere: boolean, notify: { channel: string; payload: string }): void {
    if (!notifyHere) this.notifyCommitted?.(notify.channel, notify.payload);
  }

  /**
   * Inserts a run with its `opening` events, and their NOTIFY, in one statement. With `thread`
   * (a statement from the threads store that marks the run's thread busy and returns its id) that
   * is part of the same statement, and nothing is inserted, undefined returned, when it finds no
   * thread. With `start`, a run that is due and finds no other active run on its thread is
   * inserted already running, leased to that worker, which saves it a claim; otherwise it is
   * queued as usual. A run that started this way while another one was claimed for its thread
   * is refused by the one-running-run index (see `isRunningConflict`). With `read` too, a run
   * that starts gets that read's columns, made in the same snapshot (its thread's newest
   * checkpoint, say, which its execution would otherwise read next).
   */
  async insert(
    run: NewRun,
    opening: EventBatch,
    db: Queryable,
    thread?: EmbeddedStatement & { reportsCreated?: true },
    start?: RunStart,
    read?: EmbeddedRead,
  ): Promise<InsertedRun | undefined> {
    const values: unknown[] = [
      run.run_id,
      run.thread_id,
      run.assistant_id,
      jsonb(run.metadata),
      jsonb(run.kwargs),
      run.multitask_strategy,
      run.after_seconds,
      eventsJson(opening.events),
      opening.notify.channel,
      opening.notify.payload,
      start?.workerId ?? null,
      start?.leaseSeconds ?? 0,
      jsonb(run.inherited_metadata ?? {}),
    ];
    // Read in this statement's snapshot: every run whose creation completed before this one
    // began is seen, so a run that starts at once never overtakes a run created before it.
    // A run that may not start gets a statement that says so in its text: PostgreSQL then plans
    // it once (a generic plan), where the parameterised test made it plan every execution anew.
    const starts = start
      ? `SELECT $11::text IS NOT NULL AND $7::float8 <= 0 AND NOT EXISTS (
         SELECT 1 FROM runs a WHERE a.thread_id = $2 AND a.status IN ('pending', 'running')) AS now`
      : `SELECT false AND $11::text IS NULL AND $12::float8 IS NULL AS now`;
    const columns = `run_id, thread_id, assistant_id, metadata, kwargs, multitask_strategy, created_at,
      status, attempt, worker_id, lease_expires_at, run_started_at`;
    // A protocol run that starts at once takes its place among its thread's protocol runs here
    // (see `protocolIndex`), in the snapshot that found the thread idle: its stream's first
    // event need not wait for another statement and commit.
    const protocol = run.kwargs.protocol === true;
    const kwargsSql = protocol
      ? `CASE WHEN start.now THEN $5::jsonb || jsonb_build_object('protocol_index', prior.index + 1)
         ELSE $5::jsonb END`
      : '$5';
    // The thread's metadata as it was before this statement: a thread it creates has none yet,
    // and what it adds to one (graph_id, assistant_id) the run's own `metadata` carries too.
    const metadataSql = `$13::jsonb || COALESCE((SELECT t.metadata FROM threads t
      WHERE t.thread_id = $2), '{}'::jsonb) || $4::jsonb`;
    const row = `$1, $2, $3, ${metadataSql}, ${kwargsSql}, $6, now() + make_interval(secs => $7::float8),
      CASE WHEN start.now THEN 'running' ELSE 'pending' END, CASE WHEN start.now THEN 1 ELSE 0 END,
      CASE WHEN start.now THEN $11 END,
      CASE WHEN start.now THEN now() + make_interval(secs => $12::float8) END,
      CASE WHEN start.now THEN now() END`;
    const params = new Array<unknown>(...values);
    const embed = (statement: EmbeddedStatement) => {
      const sql = statement.sql(params.length + 1);
      params.push(...statement.values);
      return sql;
    };
    const ctes = thread ? [`thread AS (${embed(thread)})`] : [];
    const notifyHere = this.notifiesItself(db);
    ctes.push(`start AS (${starts})`);
    if (protocol) ctes.push(`prior AS (${PROTOCOL_PRIOR_SQL})`);
    ctes.push(
      `inserted AS (INSERT INTO runs (${columns}) SELECT ${row}
         FROM ${thread ? 'thread, ' : ''}start${protocol ? ', prior' : ''}
         RETURNING ${RUN_COLUMNS})`,
      appendEventsCtes(8, 9, 10, notifyHere, thread ? 'inserted' : undefined),
    );
    // Made only by a run that starts; one that queues reads when it is claimed.
    const readColumns = read && start ? read.columns : [];
    if (read && start)
      ctes.push(
        `read AS (SELECT ${readColumns.join(', ')} FROM (${embed(read)}) AS r
           WHERE (SELECT now FROM start))`,
      );
    const reportsCreated = thread?.reportsCreated === true;
    const extra = [
      ...readColumns.map((c) => `read.${c}`),
      ...(reportsCreated ? ['(SELECT created FROM thread) AS thread_created'] : []),
      ...(protocol
        ? [
            'prior.index::text AS protocol_prior',
            '(extract(epoch FROM inserted.created_at) * 1000000)::bigint::text AS created_us',
          ]
        : []),
    ];
    const { rows } = await db.query<RunRow & Record<string, unknown>>(
      `WITH ${ctes.join(',\n')}
       SELECT ${[RUN_COLUMNS, ...extra].join(', ')}
       FROM inserted CROSS JOIN woken${protocol ? ' CROSS JOIN prior' : ''}${readColumns.length ? ' LEFT JOIN read ON true' : ''}`,
      params,
    );
    const inserted = rows[0];
    if (inserted) this.announce(notifyHere, opening.notify);
    if (!inserted) return undefined;
    const taken = protocol ? takeColumns(inserted, ['protocol_prior', 'created_us']) : undefined;
    const prior = {
      ...(taken
        ? { protocolPrior: Number(taken.protocol_prior), createdUs: String(taken.created_us) }
        : {}),
      ...(reportsCreated
        ? { threadCreated: takeColumns(inserted, ['thread_created']).thread_created === true }
        : {}),
    };
    if (!readColumns.length) return { run: inserted, ...prior };
    const readRow = takeColumns(inserted, readColumns);
    return inserted.status === 'running'
      ? { run: inserted, read: readRow, ...prior }
      : { run: inserted, ...prior };
  }

  /** Pending and running runs of a thread, oldest first. */
  async inflight(threadId: string, db: Queryable = this.pool): Promise<RunRow[]> {
    const { rows } = await db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = $1 AND status IN ('pending', 'running') ORDER BY created_at`,
      [threadId],
    );
    return rows;
  }

  async get(
    threadId: string,
    runId: string,
    db: Queryable = this.pool,
  ): Promise<RunRow | undefined> {
    const { rows } = await db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1 AND thread_id = $2`,
      [runId, threadId],
    );
    return rows[0];
  }

  async getById(runId: string, db: Queryable = this.pool): Promise<RunRow | undefined> {
    const { rows } = await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1`, [
      runId,
    ]);
    return rows[0];
  }

  /** The newest run of a thread whose metadata contains `metadata` (jsonb containment). */
  async latestWithMetadata(
    threadId: string,
    metadata: Record<string, unknown>,
  ): Promise<RunRow | undefined> {
    const { rows } = await this.pool.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = $1 AND metadata @> $2::jsonb
       ORDER BY created_at DESC, run_id DESC LIMIT 1`,
      [threadId, jsonb(metadata)],
    );
    return rows[0];
  }

  async list(
    threadId: string,
    options: { limit: number; offset: number; status?: RunStatus | undefined },
  ) {
    const { rows } = await this.pool.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = $1 AND ($2::text IS NULL OR status = $2)
       ORDER BY created_at DESC, run_id DESC LIMIT $3 OFFSET $4`,
      [threadId, options.status ?? null, options.limit, options.offset],
    );
    return rows;
  }

  /**
   * Leases the oldest claimable run to `workerId`: pending, due, no run of its thread running and
   * none older waiting. SKIP LOCKED lets workers claim side by side; the unique index on running
   * runs per thread settles the rare race between two claims for one thread (the loser retries).
   * `morePending` says whether other pending runs were due when it was claimed, so a worker need
   * not ask again just to hear there are none. With `read` (made for the claimed run's thread,
   * `claimed.thread_id`), its columns come back as `read`, in the claim's snapshot.
   */
  async claim(
    workerId: string,
    leaseSeconds: number,
    read?: (threadColumn: string) => ColumnRead,
  ): Promise<{ run: RunRow; morePending: boolean; read?: Record<string, unknown> } | undefined> {
    const embedded = read?.('claimed.thread_id');
    const readColumns = embedded?.columns ?? [];
    try {
      const { rows } = await this.pool.query<RunRow & { more_pending: boolean }>({
        name: embedded ? 'runs.claimReading' : 'runs.claim',
        text: `WITH candidate AS (
           SELECT r.run_id FROM runs r
           WHERE r.status = 'pending' AND r.created_at <= now()
             AND NOT EXISTS (SELECT 1 FROM runs a WHERE a.thread_id = r.thread_id AND a.status = 'running')
             AND NOT EXISTS (SELECT 1 FROM runs p WHERE p.thread_id = r.thread_id AND p.status = 'pending'
                             AND (p.created_at, p.run_id) < (r.created_at, r.run_id))
           ORDER BY r.created_at
           LIMIT 1
           FOR UPDATE OF r SKIP LOCKED
         ), claimed AS (
         UPDATE runs SET status = 'running', attempt = attempt + 1, worker_id = $1,
           lease_expires_at = now() + make_interval(secs => $2::float8),
           run_started_at = coalesce(run_started_at, now()), updated_at = now()
         FROM candidate WHERE runs.run_id = candidate.run_id
         RETURNING ${RUN_COLUMNS_OF_RUNS},
           -- Read before this update: the claimed run still counts as pending here.
           (SELECT count(*) > 1 FROM (SELECT 1 FROM runs d WHERE d.status = 'pending' AND d.created_at <= now() LIMIT 2) AS due) AS more_pending)
         SELECT claimed.*${readColumns.map((c) => `, read.${c}`).join('')} FROM claimed${
           embedded ? ` LEFT JOIN LATERAL (${embedded.sql}) AS read ON true` : ''
         }`,
        values: [workerId, leaseSeconds],
      });
      const row = rows[0];
      if (!row) return undefined;
      const { more_pending: morePending, ...run } = row;
      if (!embedded) return { run, morePending };
      return { run, morePending, read: takeColumns(run, readColumns) };
    } catch (err) {
      if ((err as { code?: string }).code === '23505') return undefined;
      throw err;
    }
  }

  async extendLeases(workerId: string, runIds: string[], leaseSeconds: number): Promise<void> {
    if (!runIds.length) return;
    await this.pool.query(
      `UPDATE runs SET lease_expires_at = now() + make_interval(secs => $3::float8)
       WHERE worker_id = $1 AND run_id = ANY($2::uuid[]) AND status = 'running'`,
      [workerId, runIds, leaseSeconds],
    );
  }

  /**
   * Gives a run its final status; undefined when the run is gone (rolled back meanwhile).
   * `closing` events (the log's last batch and end marker) are written by the same statement, with
   * their NOTIFY, so the end is never seen before the status. Without a caller's transaction, one
   * is opened when the finish hook must join it.
   */
  async finish(
    runId: string,
    status: RunStatus,
    error: { error: string; message: string } | null,
    db?: PoolClient,
    closing?: EventBatch,
    lease?: RunFencing,
  ): Promise<RunRow | undefined> {
    if (!db && this.onFinished)
      return withTransaction(this.pool, (client) =>
        this.finish(runId, status, error, client, closing, lease),
      );
    // The joined form returns one row even when the run is gone, its columns then null, so that
    // the events' NOTIFY is sent either way (unless under a lease that no longer holds).
    const notifyHere = this.notifiesItself(db ?? this.pool);
    const fenced = lease ? [lease.workerId, lease.attempt] : [];
    const { rows } = closing
      ? await (db ?? this.pool).query<MaybeRun>(
          `WITH finished AS (${finishRunSql(lease && 7)}),
           ${appendEventsCtes(4, 5, 6, notifyHere, lease && 'finished')}
           SELECT ${RUN_COLUMNS} FROM woken LEFT JOIN finished ON true`,
          [
            runId,
            status,
            error && jsonb(error),
            eventsJson(closing.events),
            closing.notify.channel,
            closing.notify.payload,
            ...fenced,
          ],
        )
      : await (db ?? this.pool).query<MaybeRun>(finishRunSql(lease && 4), [
          runId,
          status,
          error && jsonb(error),
          ...fenced,
        ]);
    if (lease && !rows.length) throw leaseLost(lease);
    if (closing) this.announce(notifyHere, closing.notify);
    const finished = rows.filter((r): r is RunRow => r.run_id !== null);
    if (db && finished.length) await this.onFinished?.(finished, db);
    return finished[0];
  }

  /**
   * `finish` with its closing events and the thread's settling (`thread`, a statement from the
   * threads store returning `runs_pending`) as one statement, without a transaction, with
   * `alsoWrite` (the run's last checkpoint writes) in it too. Only for a run the finish hook has
   * nothing to do for (it has no webhook). Says whether runs are pending on the thread.
   */
  async finishWithThread(
    runId: string,
    status: RunStatus,
    closing: EventBatch,
    thread: EmbeddedStatement,
    alsoWrite: EmbeddedStatement[] = [],
    lease?: RunFencing,
  ): Promise<{ runsPending: boolean }> {
    const notifyHere = this.notifiesItself(this.pool);
    const { rows } = await this.pool.query<{ runs_pending: boolean | null }>(
      ...finishWith(
        runId,
        status,
        null,
        closing,
        [thread, ...alsoWrite],
        'SELECT (SELECT runs_pending FROM embedded_0) AS runs_pending',
        notifyHere,
        lease,
      ),
    );
    if (lease && !rows.length) throw leaseLost(lease);
    this.announce(notifyHere, closing.notify);
    return { runsPending: rows[0]?.runs_pending ?? false };
  }

  /**
   * `finish` with its closing events, and `deletions` (statements from other stores that delete
   * the run's temporary thread, and with it the run), as one statement without a transaction.
   * Only for a run the finish hook has nothing to do for (it has no webhook).
   */
  async finishDeleting(
    runId: string,
    status: RunStatus,
    error: { error: string; message: string } | null,
    closing: EventBatch,
    deletions: EmbeddedStatement[],
    lease?: RunFencing,
  ): Promise<void> {
    const notifyHere = this.notifiesItself(this.pool);
    const { rows } = await this.pool.query(
      ...finishWith(runId, status, error, closing, deletions, 'SELECT 1', notifyHere, lease),
    );
    if (lease && !rows.length) throw leaseLost(lease);
    this.announce(notifyHere, closing.notify);
  }

  /** Ids of every active run in a status (`all`: pending and running). */
  async activeIds(
    status: 'pending' | 'running' | 'all',
  ): Promise<{ run_id: string; thread_id: string }[]> {
    const { rows } = await this.pool.query<{ run_id: string; thread_id: string }>(
      `SELECT run_id, thread_id FROM runs WHERE status = ANY($1::text[])`,
      [status === 'all' ? ['pending', 'running'] : [status]],
    );
    return rows;
  }

  /**
   * Hands a running run back to the queue (graceful shutdown). The attempt is counted as handed
   * back: only attempts whose worker died count against the limit (see `recoverExpired`).
   */
  async release(lease: RunFencing): Promise<void> {
    const { rowCount } = await this.pool.query(
      `UPDATE runs SET status = 'pending', worker_id = NULL, lease_expires_at = NULL,
         handed_back = handed_back + 1, updated_at = now()
       WHERE run_id = $1 AND ${leaseHeldSql(2)}`,
      [lease.runId, lease.workerId, lease.attempt],
    );
    if (!rowCount) throw leaseLost(lease);
  }

  /** Deletes a run that its lease still holds (a rollback), else throws LeaseLostError. */
  async deleteLeased(lease: RunFencing, db: Queryable = this.pool): Promise<void> {
    const { rowCount } = await db.query(
      `DELETE FROM runs WHERE run_id = $1 AND ${leaseHeldSql(2)}`,
      [lease.runId, lease.workerId, lease.attempt],
    );
    if (!rowCount) throw leaseLost(lease);
  }

  /**
   * Checks `lease` inside a caller's transaction and keeps it (the run row stays locked FOR
   * SHARE until the transaction ends): writes made after it in that transaction are fenced too.
   */
  async holdLease(lease: RunFencing, db: PoolClient): Promise<void> {
    const fence = this.leaseFence(lease);
    const { rowCount } = await db.query(fence.sql(1), fence.values);
    if (!rowCount) throw leaseLost(lease);
  }

  /** `lease` as a read for a fenced statement's `lease` CTE (see common/db/fence.ts). */
  leaseFence(lease: RunFencing): RunFence {
    return {
      runId: lease.runId,
      ...(lease.onLost ? { onLost: lease.onLost } : {}),
      sql: (first) =>
        `SELECT 1 FROM runs WHERE run_id = $${first}::uuid AND worker_id = $${first + 1}::text
           AND attempt = $${first + 2}::integer AND status = 'running' FOR SHARE`,
      values: [lease.runId, lease.workerId, lease.attempt],
    };
  }

  /**
   * Marks runs to be cancelled. A run's own writes lock its row before its thread's; a caller
   * that holds the thread already passes `nowait`, and gets `isCancelLockBusy` instead of waiting
   * for a run row (a deadlock) when one is taken.
   */
  async requestCancel(
    runIds: string[],
    action: 'interrupt' | 'rollback',
    db: Queryable = this.pool,
    options: { nowait?: boolean } = {},
  ) {
    if (!runIds.length) return [];
    const active = `run_id = ANY($1::uuid[]) AND status IN ('pending', 'running')`;
    const { rows } = await db.query<RunRow>(
      options.nowait
        ? `UPDATE runs SET cancel_action = $2, updated_at = now()
           WHERE run_id IN (SELECT run_id FROM runs WHERE ${active} FOR UPDATE NOWAIT) AND ${active}
           RETURNING ${RUN_COLUMNS}`
        : `UPDATE runs SET cancel_action = $2, updated_at = now() WHERE ${active}
           RETURNING ${RUN_COLUMNS}`,
      [runIds, action],
    );
    return rows;
  }

  async delete(runId: string, db: Queryable = this.pool): Promise<boolean> {
    const { rowCount } = await db.query('DELETE FROM runs WHERE run_id = $1', [runId]);
    return (rowCount ?? 0) > 0;
  }

  /**
   * Appends a batch of events and, in the same statement, sends `notify`. With `lease` (the
   * run's executor writes), nothing is written unless it holds.
   */
  async appendEvents(
    runId: string,
    events: RunEvent[],
    notify: { channel: string; payload: string },
    lease?: RunFencing,
  ): Promise<void> {
    if (!events.length) return;
    const notifyHere = this.notifiesItself(this.pool);
    const name = notifyHere ? 'runs.appendEvents' : 'runs.appendEventsQuietly';
    const values = [runId, eventsJson(events), notify.channel, notify.payload];
    if (!lease) {
      await this.pool.query({
        name,
        text: `WITH ${appendEventsCtes(2, 3, 4, notifyHere)} SELECT 1 FROM woken`,
        values,
      });
    } else {
      const fence = this.leaseFence(lease);
      const { rows } = await this.pool.query({
        name: `${name}Fenced`,
        text: `WITH lease AS (${fence.sql(5)}), ${appendEventsCtes(2, 3, 4, notifyHere, 'lease')}
               SELECT 1 FROM woken`,
        values: [...values, ...fence.values],
      });
      if (!rows.length) throw leaseLost(lease);
    }
    this.announce(notifyHere, notify);
  }

  /** Highest sequence number written for a run, -1 when none. */
  async lastSeq(runId: string): Promise<number> {
    const { rows } = await this.pool.query<{ seq: number | null }>(
      `SELECT greatest((SELECT max(last_seq) FROM run_event_batches WHERE run_id = $1),
                       (SELECT max(seq) FROM run_events WHERE run_id = $1)) AS seq`,
      [runId],
    );
    return rows[0]?.seq ?? -1;
  }

  /**
   * A run's events after `afterSeq`, in order, a page at a time: at most `page.rows` events,
   * and no more log rows once they hold `page.bytes` of data (a larger row still comes alone;
   * the writer bounds rows, see LOG_ROW), so a reader far behind never holds the whole log.
   * `more`: the next page may have events. Rows of `run_events` (written by the previous
   * version, see migration 011) are read as rows of one event.
   */
  async eventsAfter(
    runId: string,
    afterSeq: number,
    page: EventPageSize = EVENT_PAGE,
  ): Promise<EventPage> {
    // The size is the stored one (no detoasting); rows past the byte limit are never read whole.
    const { rows } = await this.pool.query<{ events: [number, string, unknown][]; upto: string }>({
      name: 'runs.eventsAfter',
      text: `SELECT events, upto FROM (
               SELECT first_seq, events, pg_column_size(events) AS size,
                      sum(pg_column_size(events)) OVER (ORDER BY first_seq ROWS UNBOUNDED PRECEDING) AS upto
                 FROM (SELECT first_seq, events FROM run_event_batches WHERE run_id = $1 AND last_seq > $2
                       UNION ALL
                       SELECT seq, json_build_array(json_build_array(seq, event, data))
                         FROM run_events WHERE run_id = $1 AND seq > $2) log
                ORDER BY first_seq LIMIT $3 + 1) page
              WHERE upto - coalesce(size, 0) < $4 OR upto IS NULL
              ORDER BY first_seq`,
      values: [runId, afterSeq, page.rows, page.bytes],
    });
    const events: RunEvent[] = [];
    let taken = 0;
    for (; taken < rows.length && events.length < page.rows; taken++)
      takeEvents(rows[taken]!, afterSeq, events);
    // Rows whose events were all taken from an overlapping row add none: a full LIMIT says more.
    const more =
      events.length > page.rows ||
      taken < rows.length ||
      rows.length > page.rows ||
      (rows.length > 0 && Number(rows.at(-1)!.upto) >= page.bytes);
    return { events: events.slice(0, page.rows), more };
  }

  /**
   * The thread's first run created after `afterUs` (microseconds since the epoch, the thread
   * stream's cursor), with its own creation time in the same unit; `thread: false` once the
   * thread is gone.
   */
  async nextOfThread(
    threadId: string,
    afterUs: bigint,
  ): Promise<{ thread: boolean; run?: { run_id: string; created_us: string } }> {
    const { rows } = await this.pool.query<{
      thread: boolean;
      run_id: string | null;
      created_us: string | null;
    }>({
      name: 'runs.nextOfThread',
      text: `SELECT EXISTS (SELECT 1 FROM threads WHERE thread_id = $1) AS thread, r.run_id, r.created_us
       FROM (SELECT 1) AS one LEFT JOIN LATERAL (
         SELECT run_id, (extract(epoch FROM created_at) * 1000000)::bigint::text AS created_us
         FROM runs WHERE thread_id = $1 AND (extract(epoch FROM created_at) * 1000000)::bigint > $2
         ORDER BY created_at, run_id LIMIT 1) AS r ON true`,
      values: [threadId, afterUs.toString()],
    });
    const row = rows[0];
    if (!row?.run_id || !row.created_us) return { thread: !!row?.thread };
    return { thread: row.thread, run: { run_id: row.run_id, created_us: row.created_us } };
  }

  /**
   * The thread's first run started through the thread protocol (kwargs `protocol`) created after
   * `afterUs`, with its status and its place among the thread's protocol runs (set when it starts
   * executing); `later`: another protocol run of the thread was created after it.
   */
  async nextProtocolRun(
    threadId: string,
    afterUs: bigint,
  ): Promise<{ run?: ProtocolRunRef; later: boolean }> {
    const { rows } = await this.pool.query<ProtocolRunRow>({
      name: 'runs.nextProtocolRun',
      text: `SELECT ${PROTOCOL_RUN_COLUMNS}
             FROM runs WHERE thread_id = $1 AND (extract(epoch FROM created_at) * 1000000)::bigint > $2
               AND kwargs ? 'protocol'
             ORDER BY created_at, run_id LIMIT 2`,
      values: [threadId, afterUs.toString()],
    });
    const row = rows[0];
    if (!row) return { later: false };
    return { run: protocolRunRef(row), later: rows.length > 1 };
  }

  /**
   * Where a stream of the thread's newest protocol run starts: the cursor just before it
   * (`nextProtocolRun` from there returns it), and the run itself, in one read; before any run
   * when it has none. Never "now": a run whose insert began earlier (its created_at) but commits
   * after this read would fall behind such a cursor and never be read.
   */
  async protocolStart(threadId: string): Promise<{ beforeLatestUs: bigint; run?: ProtocolRunRef }> {
    const { rows } = await this.pool.query<ProtocolRunRow>({
      name: 'runs.protocolStart',
      // Of runs created in the same microsecond, the one `nextProtocolRun` takes first.
      text: `SELECT ${PROTOCOL_RUN_COLUMNS}
             FROM runs WHERE thread_id = $1 AND kwargs ? 'protocol'
             ORDER BY created_at DESC, run_id LIMIT 1`,
      values: [threadId],
    });
    const row = rows[0];
    if (!row) return { beforeLatestUs: -1n };
    return { beforeLatestUs: BigInt(row.created_us) - 1n, run: protocolRunRef(row) };
  }

  /**
   * A protocol run's place among its thread's protocol runs: one past the highest taken, fixed
   * the first time it is asked (when the run starts executing, alone on its thread) and kept by
   * retries. Its events' thread-wide sequence numbers start there. A run inserted running takes
   * it in its insert (`insert`), and never asks.
   */
  async protocolIndex(runId: string, threadId: string): Promise<number> {
    const { rows } = await this.pool.query<{ index: string }>({
      name: 'runs.protocolIndex',
      text: `UPDATE runs SET kwargs = jsonb_set(kwargs, '{protocol_index}', to_jsonb(
               coalesce((kwargs->>'protocol_index')::bigint,
                 (SELECT coalesce(max((r.kwargs->>'protocol_index')::bigint), -1) + 1 FROM runs r
                   WHERE r.thread_id = $2 AND r.run_id <> $1 AND r.kwargs ? 'protocol_index'))))
             WHERE run_id = $1 RETURNING kwargs->>'protocol_index' AS index`,
      values: [runId, threadId],
    });
    return Number(rows[0]?.index ?? 0);
  }

  /**
   * Where a live thread stream starts: just before its oldest active run, else after its newest
   * run, else before any. Never "now": a run whose insert began earlier (its created_at) but
   * commits after this read would fall behind such a cursor and never be read.
   */
  async threadStreamStart(threadId: string): Promise<bigint> {
    const { rows } = await this.pool.query<{ us: string }>(
      `SELECT coalesce(
         (SELECT (extract(epoch FROM min(created_at)) * 1000000)::bigint - 1 FROM runs
          WHERE thread_id = $1 AND status IN ('pending', 'running')),
         (SELECT (extract(epoch FROM max(created_at)) * 1000000)::bigint FROM runs
          WHERE thread_id = $1),
         -1)::text AS us`,
      [threadId],
    );
    return BigInt(rows[0]!.us);
  }

  /** Whether a run still exists and is pending or running. */
  async isActive(runId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      "SELECT 1 FROM runs WHERE run_id = $1 AND status IN ('pending', 'running')",
      [runId],
    );
    return (rowCount ?? 0) > 0;
  }

  /**
   * Drops the event logs of runs that ended more than `retentionSeconds` ago (or no longer
   * exist), at most `limit` runs' logs of each table; how many rows went.
   */
  async deleteExpiredEvents(retentionSeconds: number, limit = 1000): Promise<number> {
    // Any row of a lost run's log dates it: a run begun by the previous version may have its
    // first rows in run_events and the rest here.
    const expired = (table: string) => `DELETE FROM ${table} e USING (
         SELECT DISTINCT ev.run_id FROM ${table} ev
         LEFT JOIN runs r ON r.run_id = ev.run_id
         WHERE (r.run_id IS NULL AND ev.created_at < now() - make_interval(secs => $1))
           OR (r.status NOT IN ('pending', 'running') AND r.updated_at < now() - make_interval(secs => $1))
         LIMIT $2) old
       WHERE e.run_id = old.run_id`;
    let deleted = 0;
    for (const table of ['run_event_batches', 'run_events']) {
      const { rowCount } = await this.pool.query(expired(table), [retentionSeconds, limit]);
      deleted += rowCount ?? 0;
    }
    return deleted;
  }

  /** Runs whose worker stopped renewing its lease: back to pending, or failed after too many tries. */
  async recoverExpired(maxAttempts: number): Promise<RunRow[]> {
    return withTransaction(this.pool, async (db) => {
      const { rows } = await db.query<RunRow>(
        // Attempts handed back by a graceful shutdown do not count: only workers that died.
        `UPDATE runs SET
           status = CASE WHEN attempt - handed_back >= $1 THEN 'error' ELSE 'pending' END,
           error = CASE WHEN attempt - handed_back >= $1
             THEN jsonb_build_object('error', 'WorkerLost', 'message', 'the worker running this run stopped ' || (attempt - handed_back) || ' times')
             ELSE error END,
           run_ended_at = CASE WHEN attempt - handed_back >= $1 THEN now() ELSE NULL END,
           worker_id = NULL, lease_expires_at = NULL, updated_at = now()
         WHERE status = 'running' AND lease_expires_at < now()
         RETURNING ${RUN_COLUMNS}`,
        [maxAttempts],
      );
      const failed = rows.filter((r) => r.status === 'error');
      if (failed.length) await this.onFinished?.(failed, db);
      return rows;
    });
  }
}

/** A row of a LEFT JOIN on runs: every column null when no run matched. */
type MaybeRun = Omit<RunRow, 'run_id'> & { run_id: string | null };
