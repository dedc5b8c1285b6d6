// Wake-ups between processes: LISTEN/NOTIFY on one dedicated connection, echoed in-process so a
// local listener never waits for the round trip. A hint only: listeners also poll.
//
// PostgreSQL serialises the commits of transactions that NOTIFY: a global lock is taken before
// the commit record and held until its WAL is flushed. A NOTIFY inside the statements that create
// and finish runs therefore made those commits wait one behind another, each with its own flush.
// So NOTIFYs for changes already committed are sent afterwards, those of one turn of the event
// loop together, in a statement of their own that does not wait for its WAL flush (losing one
// in a crash loses a hint, which polling makes up for). Transactions that must announce their
// own commit still NOTIFY inside (notifyOnCommit). While no other process listens, those sent
// afterwards are skipped altogether (see peers.ts).
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from '../../common/logging/index.js';
import type { Pool } from '../../common/db/index.js';
import { LISTEN_APPLICATION, PeerPresence, PRESENCE_CHANNEL } from './peers.js';

export const CHANNELS = {
  /** A run became claimable; payload: its thread id, or empty. */
  runs: 'graphdock_runs',
  /** Events were appended to a run's log; payload: run id. */
  events: 'graphdock_run_events',
  /** A cancel was requested; payload: run id. */
  cancel: 'graphdock_run_cancel',
  /** Webhook deliveries became due (sent inside the transaction that queued them). */
  webhooks: 'graphdock_webhooks',
} as const;
export type Channel = (typeof CHANNELS)[keyof typeof CHANNELS];

const STARTED = 'started:';
/** How long a starting process waits for the listeners it counted to answer its hello. */
const ANSWER_WAIT_MS = 1000;
/** How often the other listeners are counted again, to notice those that went away. */
const RECOUNT_MS = 5000;
/**
 * A lost listening connection is replaced after this long, doubling up to the cap while the
 * database stays away: one that is back is heard again within about a second.
 */
const FIRST_RECONNECT_MS = 100;
const MAX_RECONNECT_MS = 1000;

/**
 * The `runs` payload for a run that started at once on the worker of the process that created
 * it: thread streams still learn of it, but no worker needs to look for something to claim.
 */
export function startedPayload(threadId: string): string {
  return STARTED + threadId;
}

/** Whether a `runs` payload may mean a run is waiting to be claimed. */
export function isClaimable(payload: string): boolean {
  return !payload.startsWith(STARTED);
}

/** The thread a `runs` payload names (empty or `*` when it names none). */
export function threadOfRunsPayload(payload: string): string {
  return payload.startsWith(STARTED) ? payload.slice(STARTED.length) : payload;
}

/**
 * Whether a `runs` payload may mean a run of `threadId` was created: it names that thread, or
 * `*` (the listening connection was replaced, so notifications may have been lost).
 */
export function mayNameThread(payload: string, threadId: string): boolean {
  const id = threadOfRunsPayload(payload);
  return id === threadId || id === '*';
}

/** NOTIFYs waiting to be sent together, and the promise that settles when they were sent. */
interface PendingBatch {
  channels: string[];
  payloads: string[];
  sent: Promise<void>;
  resolve: () => void;
}

/** One statement for a batch, committed without waiting for its WAL flush. */
const SEND_BATCH = `SELECT count(pg_notify(n.channel, n.payload))
  FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit,
    unnest($1::text[], $2::text[]) AS n(channel, payload)`;

export class Notifier {
  private readonly emitter = new EventEmitter();
  /** Committed changes' NOTIFYs not sent yet (see `notifyCommitted`). */
  private pending: PendingBatch | undefined;
  /** Whether a batch is being sent (the next waits for it) or one is scheduled. */
  private sending = false;
  private scheduled = false;
  /** Tags this process's NOTIFYs, so their echo on our own LISTEN connection is dropped. */
  private readonly origin = randomUUID();
  private readonly presence = new PeerPresence(this.origin);
  private recountTimer: NodeJS.Timeout | undefined;
  /** The one listening connection, while it works; `connecting`: the one being set up. */
  private client: pg.Client | undefined;
  private connecting: pg.Client | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private backoffMs = FIRST_RECONNECT_MS;
  private stopped = false;
  private everConnected = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly pool: Pool,
    private readonly logger: Logger,
    private readonly recountMs = RECOUNT_MS,
  ) {
    this.emitter.setMaxListeners(0);
  }

  /**
   * Connects the listening connection; rejects when the first connection fails (start-up stops).
   * A connection lost later is replaced by one other, tried with backoff until it succeeds.
   */
  async start(): Promise<void> {
    await this.connect();
    this.recountTimer ??= setInterval(() => {
      if (this.client) this.presence.recount(this.client).catch(() => undefined);
    }, this.recountMs).unref();
  }

  /** One listening connection, LISTENing on every channel; ended again if any step fails. */
  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    this.connecting = client;
    client.on('notification', (n) => {
      const raw = n.payload ?? '';
      const split = raw.indexOf('|');
      // Local listeners were already woken by notify(); only other processes' messages count.
      if (split < 0 || raw.slice(0, split) === this.origin) return;
      if (n.channel === PRESENCE_CHANNEL) {
        const answer = this.presence.onMessage(raw.slice(0, split), raw.slice(split + 1));
        if (answer)
          client
            .query('SELECT pg_notify($1, $2)', [PRESENCE_CHANNEL, answer])
            .catch((err: unknown) => this.logger.warn({ err }, 'presence answer failed'));
        return;
      }
      this.emitter.emit(n.channel, raw.slice(split + 1));
    });
    // A connection reports its loss by 'error' (while idle), 'end', or both: one reconnect.
    const lost = (err?: unknown) => this.onLost(client, err);
    client.on('error', lost);
    client.on('end', () => lost());
    try {
      await client.connect();
      // Set here rather than in the options, where a connection string's own name would win.
      await client.query(`SET application_name = '${LISTEN_APPLICATION}'`);
      for (const channel of [...Object.values(CHANNELS), PRESENCE_CHANNEL])
        await client.query(`LISTEN ${channel}`);
      await this.presence.announce(client, ANSWER_WAIT_MS);
      if (this.stopped || this.connecting !== client) throw new Error('notifier stopped');
    } catch (err) {
      if (this.connecting === client) this.connecting = undefined;
      await client.end().catch(() => undefined);
      throw err;
    }
    this.connecting = undefined;
    const reconnected = this.everConnected;
    this.everConnected = true;
    this.client = client;
    this.backoffMs = FIRST_RECONNECT_MS;
    if (reconnected) {
      this.logger.info('notification connection re-established');
      // Notifications sent while we were disconnected are lost: every waiter looks again.
      for (const channel of Object.values(CHANNELS)) this.emitter.emit(channel, '*');
    }
  }

  /** The listening connection broke: end it, and connect a new one once (with backoff). */
  private onLost(client: pg.Client, err: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    if (this.stopped) return;
    this.logger.warn({ err }, 'notification connection lost; reconnecting');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_RECONNECT_MS);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect().catch((err: unknown) => {
        this.logger.debug({ err }, 'notification connection failed; trying again');
        this.scheduleReconnect();
      });
    }, delay);
  }

  on(channel: Channel, listener: (payload: string) => void): () => void {
    this.emitter.on(channel, listener);
    return () => this.emitter.off(channel, listener);
  }

  /** The NOTIFY payload that wakes other processes' listeners but not this one's (see `origin`). */
  remotePayload(payload: string): string {
    return `${this.origin}|${payload}`;
  }

  /** Wakes this process's listeners only (the NOTIFY for others went out with a transaction). */
  emitLocal(channel: Channel, payload = ''): void {
    this.emitter.emit(channel, payload);
  }

  /** Wakes local listeners now and remote ones through PostgreSQL; resolves once sent. */
  notify(channel: Channel, payload = ''): Promise<void> {
    this.emitter.emit(channel, payload);
    return this.notifyCommitted(channel, this.remotePayload(payload));
  }

  /**
   * Sends a NOTIFY for a change that has committed; `payload` as it goes out (see
   * `remotePayload`). Those of one turn share a statement; resolves once it ran. Never rejects:
   * a NOTIFY that cannot be sent is logged, and listeners find the change by polling. Skipped
   * while no other process listens.
   */
  notifyCommitted(channel: string, payload: string): Promise<void> {
    if (this.presence.alone) return Promise.resolve();
    if (!this.pending) {
      let resolve!: () => void;
      const sent = new Promise<void>((r) => (resolve = r));
      this.pending = { channels: [], payloads: [], sent, resolve };
    }
    this.pending.channels.push(channel);
    this.pending.payloads.push(payload);
    if (!this.sending && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.sendPending());
    }
    return this.pending.sent;
  }

  private sendPending(): void {
    this.scheduled = false;
    const batch = this.pending;
    if (!batch || this.sending) return;
    this.pending = undefined;
    this.sending = true;
    this.pool
      .query(SEND_BATCH, [batch.channels, batch.payloads])
      .catch((err: unknown) => this.logger.warn({ err }, 'NOTIFY failed; listeners will poll'))
      .finally(() => {
        this.sending = false;
        batch.resolve();
        // What arrived meanwhile goes at once, as one batch.
        this.sendPending();
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.recountTimer);
    clearTimeout(this.reconnectTimer);
    await this.pending?.sent;
    const clients = [this.client, this.connecting];
    this.client = this.connecting = undefined;
    for (const client of clients) await client?.end().catch(() => undefined);
  }
}

/**
 * NOTIFY from inside a transaction: PostgreSQL delivers it on commit (and never on rollback) to
 * every listening process, this one included, since the origin tag is no process's own.
 */
export async function notifyOnCommit(
  db: Pick<Pool, 'query'>,
  channel: Channel,
  payload = '',
): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [channel, `transaction|${payload}`]);
}

/** Resolves on the first of: `channel` fires with a matching payload, `ms` pass, `signal` aborts. */
export function waitFor(
  notifier: Notifier,
  channel: Channel,
  matches: (payload: string) => boolean,
  ms: number,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      off();
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const off = notifier.on(channel, (payload) => matches(payload) && done());
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });
}
